// Calibration profile: what the hardware does on top of the physical links (DESIGN.md §3.1).
// The topology owns links (bandwidth, latency, sharing); the profile owns probe latencies per
// fabric class and transport, the per-thread-block dispatch rate, kernel, merge, splice and
// prefill models, the holder elbows and host overhead. Profiles are YAML files written by hand
// or by `xattn calibrate fit`; a profile may `extends:` a base profile and set only what it
// measured.
#pragma once

#include "sim/core/fabric.hpp"
#include "sim/core/units.hpp"
#include "sim/core/yaml.hpp"

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace xattn::calibrate {

using core::Bytes;
using core::BytesPerSec;
using core::Seconds;

/// Costs of one fabric class.
struct FabricCosts {
  Seconds probe_gpu;      ///< fixed latency of one exchange, device-initiated (IBGDA-like)
  Seconds probe_proxy;    ///< the same through a CPU proxy (host-mediated)
  BytesPerSec block_rate; ///< what one thread block issuing transfers sustains
  BytesPerSec bandwidth;  ///< nominal per-direction link rate (predict without a topology)
  /// One-way wire latency of the path the probe was measured on. The probe already contains it,
  /// so a topology's path adds only (its latency - this) to each leg, and the profile's nominal
  /// path (no topology) adds nothing.
  Seconds wire_latency;

  Seconds probe(core::Transport t) const { return t == core::Transport::kGpu ? probe_gpu : probe_proxy; }
};

/// How well one fitted quantity matched its measurements (the profile's `fit:` section, written by
/// `xattn calibrate fit`). Errors are fractions of the measured time.
struct FitRecord {
  std::string name;     ///< the measured series, e.g. "send_recv/nvlink"
  std::string measured; ///< transfer, kernel, merge, splice, launch, copy-elbow, compute-elbow
  std::string model;    ///< e.g. "piecewise alpha-beta (2 segments)"
  std::int64_t points = 0;
  double r2 = 0, mape = 0, max_error = 0, loo_mape = 0;
  std::vector<double> breakpoints_B; ///< transfers: sizes where the protocol changes
  std::vector<std::string> sets;     ///< profile keys this fit set
};

struct Profile {
  std::string name;
  std::string file; ///< where it was read from ("" if built in code)
  std::string description;

  /// Indexed by core::FabricClass; same-gpu is all zero probe and unbounded bandwidth.
  std::array<FabricCosts, core::kAllFabrics.size()> fabrics{};

  int route_blocks = 1; ///< thread blocks that dispatch a routed query (1: single-block)
  int fetch_blocks = 1; ///< thread blocks (or copy-engine equivalent) that move a fetched chunk

  // Partial-attention kernel (absorbed MLA decode): fixed + per_token * T + per_token_row * T * R.
  Seconds kernel_fixed;
  Seconds kernel_per_token;
  Seconds kernel_per_token_row;
  int compute_concurrency = 8; ///< kernels a GPU runs at full speed at once (compute elbow)
  int copy_streams        = 8; ///< staging-copy stream pool per holder (copy elbow)

  Seconds merge_fixed;   ///< online-softmax merge launch
  Seconds merge_per_row; ///< per merged partial row

  Seconds splice_fixed;     ///< per contiguous run re-adapted (RoPE re-rotation, cache insert)
  Seconds splice_per_token; ///< per token re-rotated

  double prefill_tokens_per_s = 0; ///< re-prefill rate of one instance, all layers
  Seconds host_overhead;           ///< host-side dispatch per exchange (0 for a GPU-driven path)
  Seconds step_other;              ///< per decode step compute outside attention (MLP, other layers)

  std::vector<FitRecord> fits; ///< fit quality per fitted quantity (empty for hand-written profiles)

  const FabricCosts& fabric(core::FabricClass f) const { return fabrics[static_cast<std::size_t>(f)]; }
  FabricCosts& fabric(core::FabricClass f) { return fabrics[static_cast<std::size_t>(f)]; }

  /// Partial attention of `rows` query rows over `tokens` cached tokens, one layer.
  Seconds kernel_time(double tokens, double rows) const
  {
    return kernel_fixed + kernel_per_token * tokens + kernel_per_token_row * (tokens * rows);
  }
  /// Merge of `partials` partial results of `rows` rows each into the running output.
  Seconds merge_time(double partials, double rows) const { return merge_fixed + merge_per_row * (partials * rows); }
  /// Splice of `runs` contiguous runs totalling `tokens` tokens.
  Seconds splice_time(double runs, double tokens) const { return splice_fixed * runs + splice_per_token * tokens; }
  /// Re-prefill of `tokens` tokens over all layers.
  Seconds prefill_time(double tokens) const { return Seconds(tokens / prefill_tokens_per_s); }
};

/// The profile schema (for --describe and for writers that must stay inside it).
const core::Schema& profile_schema();

/// Loads a profile by preset name (calibrate/profiles/NAME.yaml) or path, following `extends:`
/// (at most 8 levels; a cycle is an error). Throws core::InputError on any problem.
Profile load_profile(std::string_view name_or_path);

/// Reads a profile from a parsed document (no `extends:` resolution beyond what `load_profile`
/// does; used by tests and by load_profile itself).
Profile read_profile(const core::Document& doc);

/// The default profile's preset name.
inline constexpr std::string_view kDefaultProfile = "h100-ndr200-ibgda";

} // namespace xattn::calibrate
