// The tidy table of a sweep: one row per point x policy, in manifest order then policy name order.
//
// Columns: point, each swept key (its value as written in the sweep file), seed, policy,
// requests, steps, {step,ttft,tpot,itl,e2e}_{mean,p50,p90,p99,max}_s (engine::kLatencyFigures, each
// named by its first word), goodput_share, goodput_requests_per_s, wire_bytes,
// wire_bytes_<fabric class> (each class of sim/core/fabrics.def),
// decisions_{route,fetch,local,cached,same_gpu}, under an ensemble sweep each compared figure's
// 5% and 95% (kComparedFigures, compare.hpp), overloaded (true where the policy did not keep up
// with the load: its latencies are a growing queue's, not ranked), simulated_time_s, invariants_ok.
// Numbers are copied from each point's summary.json as JSON writes them (shortest round trip), so
// two back ends that ran the same points give byte-identical tables.
#pragma once

#include "sim/engine/result.hpp"
#include "sim/study/manifest.hpp"

#include <optional>

#include <string>
#include <vector>

namespace xattn::sim::study
{

struct Table {
  std::string csv;
  int rows = 0;
  int points_complete = 0;
  std::vector<std::string> missing; ///< ids of points without summary.json
};

Table gather(const Manifest& m, const std::string& dir);

/// A point's summary.json read back; nothing where it is absent, unreadable or not a summary.
/// Throws core::InputError for a summary of a newer format.
std::optional<engine::RunResult> point_result(const std::string& dir, const std::string& id);

/// Gathers and writes DIR/results.csv atomically.
Table write_table(const Manifest& m, const std::string& dir);

/// A CSV field: quoted when it holds a comma, a quote or a newline.
std::string csv_field(const std::string& s);

} // namespace xattn::sim::study
