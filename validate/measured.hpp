// Measured data to validate against: one row per measured operation (validate/README.md documents
// the format). Two spellings of one schema:
//
//   CSV   a header line naming the columns (any order, `#` comment lines allowed), then one row per
//         operation: primitive,fabric,mq,ct,holders,concurrency,blocks,transport,latency
//   JSONL one JSON object per line with the same keys
//
// Columns: primitive (route|fetch|local|transfer, required), fabric (a fabric class) or src and
// dst (GPU selectors on --topology), mq (query rows, default 256), ct (tokens attended over all
// holders, default 2048, split evenly), holders (1), concurrency (requesters at once, 1), blocks
// (dispatch thread blocks; 0 or absent: the profile's), transport (gpu|proxy), bytes (transfer
// size), latency (required, with a unit: 45.1us), wire_bytes (optional), group (optional; default
// primitive/fabric).
//
// Files in any format `xattn calibrate fit` reads (the calibration harness's probe JSON,
// nccl-tests, nvbandwidth, NVSHMEM perftest, vidur, plain CSV) are imported too: their transfer
// series become `transfer` rows, one per measured size; other series are noted and skipped.
#pragma once

#include "calibrate/importers.hpp"
#include "calibrate/measurements.hpp"
#include "sim/core/fabric.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace xattn::validate
{

enum class Op { kRoute, kFetch, kLocal, kTransfer };
std::string_view to_string(Op op);

struct MeasuredRow {
  Op op = Op::kRoute;
  std::optional<core::FabricClass> fabric;
  std::string src, dst;
  double mq = 256;
  std::int64_t ct = 2048;
  int holders = 1;
  int concurrency = 1;
  int blocks = 0;
  core::Transport transport = core::Transport::kGpu;
  double bytes = 0; ///< transfer size, B
  double latency_s = 0;
  std::optional<double> wire_bytes;
  std::string group;
  int line = 0; ///< where it was read (1-based; 0 unknown)
};

struct MeasuredData {
  std::string file;
  std::string format; ///< "xattn-csv", "xattn-jsonl", or the calibrate importer's name
  std::vector<MeasuredRow> rows;
  std::vector<std::string> notes;
};

/// Reads a measured-data file in any supported format. Throws core::InputError (file:line, every
/// problem at once).
MeasuredData read_measured(const std::filesystem::path& path, const calibrate::ImportOptions& opt = {});
MeasuredData parse_measured(const std::string& text, const std::string& name, const calibrate::ImportOptions& opt = {});

MeasuredData parse_measured_csv(const std::string& text, const std::string& name);
MeasuredData parse_measured_jsonl(const std::string& text, const std::string& name);
/// Transfer series with a transport become transfer rows (group = series name); other series
/// (and transfer series that do not say who issued them) are noted.
MeasuredData from_measurements(const calibrate::Measurements& m);

/// The CSV spelling of `rows` (reads back with parse_measured_csv).
std::string to_csv(const std::vector<MeasuredRow>& rows);

} // namespace xattn::validate
