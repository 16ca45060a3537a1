// Calibration profile: what the hardware does on top of the physical links (docs/cost-path.md).
// The topology owns links (bandwidth, latency, sharing); the profile owns probe latencies per
// fabric class and transport, the per-thread-block dispatch rate, kernel, merge, splice and
// prefill models, the holder elbows and host overhead. Profiles are YAML files written by hand
// or by `xattn calibrate fit`; a profile may `extends:` a base profile and set only what it
// measured.
#pragma once

#include "calibrate/fit.hpp"
#include "sim/core/fabric.hpp"
#include "sim/core/schema.hpp"
#include "sim/core/units.hpp"

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace xattn::calibrate
{

using core::Bytes;
using core::BytesPerSec;
using core::Seconds;

/// One piece of a fabric's transfer curve: a bulk message of `from` bytes or more (up to the next
/// segment's `from`) takes `latency + size / bandwidth` on the profile's nominal path. Latencies are
/// read relative to the first segment's: that one is the probe's (`probe_gpu` or `probe_proxy`, as
/// measured), and a later segment adds what its protocol adds on top.
struct CurveSegment {
  Bytes from;
  Seconds latency;
  BytesPerSec bandwidth;
};

/// Costs of one fabric class.
struct FabricCosts {
  Seconds probe_gpu;      ///< fixed latency of one exchange, device-initiated (IBGDA-like)
  Seconds probe_proxy;    ///< the same through a CPU proxy (host-mediated)
  BytesPerSec block_rate; ///< what one thread block issuing transfers sustains
  /// Effective per-direction rate of a bulk transfer (what a measurement sees: protocol and
  /// dispatch overheads included); the one-segment transfer curve.
  BytesPerSec bandwidth;
  /// One-way wire latency of the path the probe was measured on. The probe already contains it,
  /// so a topology's path adds only (its latency - this) to each leg, and the profile's nominal
  /// path (no topology) adds nothing.
  Seconds wire_latency;
  /// The link's nominal per-direction rate (the datasheet figure): the bottleneck of the
  /// profile's nominal path (predict without a topology). A bulk message moves at
  /// bandwidth / nominal_bandwidth of whatever link capacity it gets. 0: the same as `bandwidth`.
  BytesPerSec nominal_bandwidth;
  /// Piecewise transfer curve, ascending `from`, the first from 0 B (written by `calibrate fit`
  /// where a protocol changes); empty: the single line probe + size / bandwidth.
  std::vector<CurveSegment> curve;

  Seconds probe(core::Transport t) const { return t == core::Transport::kGpu ? probe_gpu : probe_proxy; }
  BytesPerSec nominal() const { return nominal_bandwidth.value() > 0 ? nominal_bandwidth : bandwidth; }
};

/// The spread of one profile value: relative standard deviation and where it comes from.
struct Uncertainty {
  std::string key; ///< dotted profile key (calibrate/uncertainty.hpp lists them)
  double relative = 0;
  std::string source;
};
struct Correlation {
  std::string a, b;
  double rho = 0;
};

/// How well one fitted quantity matched its measurements (the profile's `fit:` section, written by
/// `xattn calibrate fit`). Errors are fractions of the measured time.
struct FitRecord {
  std::string name;     ///< the measured series, e.g. "send_recv/nvlink"
  std::string measured; ///< transfer, kernel, merge, splice, launch, copy-elbow, compute-elbow
  std::string model;    ///< e.g. "piecewise alpha-beta (2 segments)"
  std::int64_t points = 0;
  double r2 = 0, mape = 0, max_error = 0, loo_mape = 0;
  std::vector<double> breakpoints_B;     ///< transfers: sizes where the protocol changes
  std::vector<std::string> sets;         ///< profile keys this fit set
  std::vector<Uncertainty> spread_check; ///< the least-squares formula's spread (vs the bootstrap's)
  /// Transfers: where the non-decreasing fit departs from falling measured times (piecewise.hpp).
  std::vector<Flattened> flattened;
  std::vector<std::string> adjustments;
};

/// A GPU's peaks and the shares of them its kernels reach: the roofline that prices every kernel
/// the profile does not give as a measured cost (sim/model/pricing.hpp). sm_count 0: not given.
struct GpuSpec {
  int sm_count = 0;
  BytesPerSec hbm;                 ///< peak HBM bandwidth
  core::FlopsPerSec bf16, fp8;     ///< dense tensor-core peaks
  double memory_efficiency = 0;    ///< share of `hbm` a memory-bound kernel reaches
  double attention_efficiency = 0; ///< share of `bf16` a compute-bound attention kernel reaches
  double gemm_efficiency = 0;      ///< share of `fp8` a large FP8 GEMM reaches
  Seconds launch;                  ///< launch and tail of one kernel (overlaps other kernels' work)
  core::Bytes hbm_capacity{0};     ///< HBM one GPU holds; 0: not given
  bool given() const { return sm_count > 0; }
};

/// Which costs the profile gives as measured figures of one implementation (a prototype's, or
/// `xattn calibrate fit`'s): each replaces the roofline for its kernel.
struct MeasuredCosts {
  bool kernel = false;      ///< holder.kernel_*: the attention kernel's line
  bool merge = false;       ///< merge.*
  bool splice = false;      ///< splice.fixed, splice.per_token
  bool prefill = false;     ///< prefill.tokens_per_s
  bool concurrency = false; ///< holder.compute_concurrency: each kernel takes 1/n of the GPU
};

/// What a routed query carries (docs/cost-path.md, "Route protocols").
enum class RouteProtocol {
  /// The absorbed per-head query out (heads rows of kv_lora_rank + rope_dim BF16 values), the
  /// per-head latent partial output and its log-sum-exp back: the paper's prototype.
  kAbsorbed,
  /// The compressed query c_Q out (q_lora_rank BF16 values and the token's position); the holder,
  /// which holds the model too, expands it (q_b_proj, W_UK), attends, and projects the partial
  /// output to values (W_UV: linear, so it commutes with the merge) before it answers with heads x
  /// v_head_dim BF16 values and the log-sum-exp.
  kCompressed,
};

/// A route protocol by its name in a profile or scenario ("absorbed", "compressed"); the caller's
/// schema has already checked the name.
RouteProtocol route_protocol_named(std::string_view name);

struct Profile {
  std::string name;
  std::string file; ///< where it was read from ("" if built in code)
  std::string description;

  /// Indexed by core::FabricClass; same-gpu is all zero probe and unbounded bandwidth.
  std::array<FabricCosts, core::kAllFabrics.size()> fabrics{};

  int route_blocks = 1; ///< thread blocks that dispatch a routed query (1: single-block)
  RouteProtocol route_protocol = RouteProtocol::kAbsorbed;
  int fetch_blocks = 1; ///< thread blocks (or copy-engine equivalent) that move a fetched chunk
  /// Posting a message to the network through a CPU proxy (docs/contention.md, "Posting a
  /// fan-out"): each of a GPU's `proxy_threads` posts one message at a time, `proxy_post` each, so
  /// a message waits for the posts of those before it (a lone message's post is inside the probe).
  /// 0: no queue.
  Seconds proxy_post{0};
  int proxy_threads = 1;

  GpuSpec gpu;
  MeasuredCosts measured;

  // Measured costs (each group given whole or not at all; see MeasuredCosts).
  // Partial-attention kernel (absorbed MLA decode): fixed + per_token * T + per_token_row * T * R.
  Seconds kernel_fixed;
  Seconds kernel_per_token;
  Seconds kernel_per_token_row;
  int compute_concurrency = 0; ///< measured: kernels a GPU runs at full speed at once (compute elbow)
  int copy_streams = 8;        ///< staging-copy stream pool per holder (copy elbow)

  Seconds merge_fixed;   ///< online-softmax merge launch
  Seconds merge_per_row; ///< per merged partial row

  Seconds splice_fixed;     ///< per contiguous run re-adapted (RoPE re-rotation, cache insert)
  Seconds splice_per_token; ///< per token re-rotated
  /// Roofline splice: host-side insertion of one contiguous run into the cache's block table.
  Seconds splice_insert;

  double prefill_tokens_per_s = 0; ///< re-prefill rate of one instance, all layers
  Seconds host_overhead;           ///< host-side dispatch per exchange (0 for a GPU-driven path)
  Seconds step_other;              ///< per decode step compute outside attention (MLP, other layers)
  /// A KV hand-off's per-transfer costs (profile section kv_transfer), paid once by each transfer.
  struct KvTransferCosts {
    Seconds registration, post, completion;
    Seconds total() const { return registration + post + completion; }
  } kv_transfer;
  /// What an MoE layer's dispatch and combine kernels move per GPU over NVLink (0: the fabric's
  /// bandwidth): DeepEP's low-latency kernels copy with SMs, below the link's rate.
  BytesPerSec ep_nvlink_dispatch{0}, ep_nvlink_combine{0};
  /// One all-reduce among a node's tensor-parallel ranks: a fixed time and a bus bandwidth
  /// (sim/model/serving.hpp, all_reduce_time). 0: not given (the full step then refuses tp > 1).
  Seconds tp_all_reduce_latency{0};
  BytesPerSec tp_all_reduce_bus{0};

  std::vector<FitRecord> fits;          ///< fit quality per fitted quantity (empty for hand-written profiles)
  std::vector<Uncertainty> uncertainty; ///< empty: the profile gives points only
  std::vector<Correlation> correlations;

  const FabricCosts& fabric(core::FabricClass f) const { return fabrics[static_cast<std::size_t>(f)]; }
  FabricCosts& fabric(core::FabricClass f) { return fabrics[static_cast<std::size_t>(f)]; }
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
/// The paper's research prototype, as measured (what `xattn validate --paper` reproduces).
inline constexpr std::string_view kPaperProfile = "paper-prototype";

} // namespace xattn::calibrate
