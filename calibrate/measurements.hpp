// Measurements in one shape, whatever tool produced them: named series of points, each point a
// few features (bytes; or tokens and rows; or a concurrency) and a time in seconds. Importers
// (importers.hpp) read tool outputs into this; the fitter (fitter.hpp) reads only this.
#pragma once

#include "sim/core/fabric.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace xattn::calibrate
{

/// What a series measures, hence which model it is fitted with and which profile keys it sets.
enum class Measured {
  kTransfer,     ///< x = {bytes}: t = α + s/β, piecewise where the protocol changes
  kKernel,       ///< x = {tokens, rows}: partial attention, fixed + a·T + b·T·R
  kMerge,        ///< x = {partials, rows}: fixed + per_row · P·R
  kSplice,       ///< x = {runs, tokens}: fixed · runs + per_token · tokens
  kLaunch,       ///< x = {launches}: a line, recorded only (the profile has no launch key)
  kCopyElbow,    ///< x = {concurrent streams}: makespan, hinge knee -> holder.copy_streams
  kComputeElbow, ///< x = {concurrent requesters}: makespan, hinge knee -> holder.compute_concurrency
  kOther,        ///< kept in the file, not fitted
};

/// "transfer", "kernel", "merge", "splice", "launch", "copy-elbow", "compute-elbow", "other".
std::string_view to_string(Measured m);
std::optional<Measured> parse_measured(std::string_view s);

/// One measured point. `line` is where it was read (1-based; 0 if not known).
struct Point {
  std::vector<double> x;
  double t_s = 0; ///< median time, seconds
  int line = 0;
};

struct Series {
  std::string name; ///< unique within a file, e.g. "send_recv/nvlink"
  Measured measured = Measured::kOther;
  std::optional<core::FabricClass> fabric;  ///< transfers: which fabric class it crossed
  std::optional<core::Transport> transport; ///< transfers: who issued it (sets probe_gpu or probe_proxy)
  bool single_block = false;                ///< transfers: one thread block dispatched (sets block_rate)
  std::vector<std::string> features;        ///< names of the x entries
  std::vector<Point> points;
  int line = 0; ///< where the series starts in its file
};

/// The name of a transfer series that only its fabric, transport and dispatch identify (the
/// plain CSV's and vidur's rows): "nvlink/proxy", "ib-spine/gpu/single-block", "pcie".
std::string transfer_series_name(core::FabricClass f, std::optional<core::Transport> t, bool single_block);

struct Measurements {
  std::string file;
  std::string format; ///< the importer's name
  std::vector<Series> series;
  std::vector<std::string> notes; ///< what the importer skipped, and why
};

} // namespace xattn::calibrate
