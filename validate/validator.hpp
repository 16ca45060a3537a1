// `xattn validate MEASURED`: each measured configuration rebuilt as a micro-scenario, run through
// the engine, and compared with its measured latency: per-group and overall MAPE, maximum error,
// the worst points, and a report (table, points CSV, plot of measured vs simulated).
#pragma once

#include "validate/measured.hpp"
#include "validate/micro.hpp"

#include <optional>
#include <string>
#include <vector>

namespace xattn::validate
{

/// The engine micro-scenario that reproduces one measured row (see measured.hpp for the columns):
/// `concurrency` requesters start at once, each attending `ct` tokens split over `holders`
/// holders with M_q = mq rows, one decode step under the row's primitive; a transfer is
/// transfer_micro(). `blocks` > 0 overrides the profile's route_blocks (route) or fetch_blocks.
Micro micro_for(const MeasuredRow& row);

struct PointResult {
  MeasuredRow row;
  double simulated_s = 0;
  double error = 0;                           ///< |simulated - measured| / measured
  std::optional<double> simulated_wire_bytes; ///< per operation, when the row has wire_bytes
  std::optional<double> floor_s;              ///< calibrate check: the noise floor's prediction of this point
};

struct ErrorStats {
  std::string group;
  std::size_t points = 0;
  double mape = 0, max_error = 0;
  double wire_mape = -1; ///< -1: no wire bytes measured
  /// calibrate check: the noise floor's MAPE over `floor_points` points and the group's limit
  /// (-1: not a check).
  double floor = -1, limit = -1;
  std::size_t floor_points = 0;
};

struct ValidationReport {
  std::string kind = "validate"; ///< "validate", or "check" (xattn calibrate check)
  std::string file, format, profile, topology;
  std::vector<PointResult> points;
  std::vector<ErrorStats> groups; ///< sorted by group name
  ErrorStats overall;
  std::vector<std::string> notes;
  int engine_runs = 0;
  bool invariants_ok = true;
};

/// Simulates every row. `progress` prints a line to stderr every 100 rows when set.
ValidationReport validate_measured(const MeasuredData& data, MicroRunner& runner, bool progress = false);

/// Group and overall statistics of a set of points (used by validate_measured and tests).
ErrorStats error_stats(const std::vector<PointResult>& points, const std::string& group);

/// The terminal table: groups, overall, and the `worst` worst points.
std::string report_table(const ValidationReport& r, std::size_t worst = 10);

/// Writes report.md, points.csv, validation.json (what `xattn report DIR` reads: kind, groups and
/// their figures) and (when /usr/bin/python3 has matplotlib) measured_vs_simulated.png into `dir`,
/// each atomically. Returns a line saying whether the plot was drawn.
/// `table`: the text of report.md's table (empty: report_table's).
std::string write_report(const ValidationReport& r, const std::string& dir, std::size_t worst = 10,
                         const std::string& table = "");

} // namespace xattn::validate
