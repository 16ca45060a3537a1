// The calibration profile's schema: every key a profile file may hold, its unit, default and
// meaning (calibrate/profile.hpp reads a profile against it; --describe renders it).
#include "calibrate/profile.hpp"
#include "sim/core/fabric.hpp"

#include "sim/core/schema.hpp"

namespace xattn::calibrate
{
namespace
{
using core::Check;
using core::Dimension;
using core::FieldKind;
using core::kNoDefault;
using core::kRequired;

const core::Schema kSegmentSchema{
    {.key = "from", .dim = Dimension::kBytes, .meaning = "smallest message size of the segment (the first: 0B)"},
    {.key = "latency",
     .dim = Dimension::kSeconds,
     .meaning = "fixed time of a message in the segment (relative to the first segment's, which is the probe's)"},
    {.key = "bandwidth",
     .dim = Dimension::kBytesPerSec,
     .meaning = "effective rate of a message in the segment",
     .check = Check::kPositive},
};

const core::Schema kFabricSchema{
    {.key = "probe_gpu", .dim = Dimension::kSeconds, .meaning = "fixed latency of one device-initiated exchange"},
    {.key = "probe_proxy", .dim = Dimension::kSeconds, .meaning = "fixed latency of one CPU-proxy exchange"},
    {.key = "block_rate",
     .dim = Dimension::kBytesPerSec,
     .meaning = "rate one thread block sustains issuing transfers",
     .check = Check::kPositive},
    {.key = "bandwidth",
     .dim = Dimension::kBytesPerSec,
     .meaning = "effective per-direction rate of a bulk transfer (measured; the one-segment transfer curve)",
     .check = Check::kPositive},
    {.key = "nominal_bandwidth",
     .dim = Dimension::kBytesPerSec,
     .def = kNoDefault,
     .meaning = "nominal per-direction link rate (datasheet), the bottleneck of the path without a topology; "
                "default: bandwidth",
     .check = Check::kPositive},
    {.key = "transfer",
     .kind = FieldKind::kList,
     .def = kNoDefault,
     .meaning = "piecewise transfer curve (written by calibrate fit), replaces probe + size / bandwidth",
     .sub = &kSegmentSchema},
    {.key = "wire_latency",
     .dim = Dimension::kSeconds,
     .def = "0us",
     .meaning = "one-way wire latency of the path the probe was measured on (already inside the probe: a "
                "topology adds only what its paths have beyond it)"},
};

// A section per class that crosses a link (sim/core/fabrics.def).
const core::Schema kFabricsSchema = [] {
  core::Schema s;
  for (const core::FabricInfo& f : core::kFabrics)
    if (f.scope != core::FabricScope::kSameGpu)
      s.push_back({.key = f.name, .kind = FieldKind::kSection, .meaning = f.what, .sub = &kFabricSchema});
  return s;
}();

const core::Schema kDispatchSchema{
    {.key = "route_blocks",
     .kind = FieldKind::kInteger,
     .def = "1",
     .meaning = "thread blocks dispatching a routed query",
     .check = Check::kPositive},
    {.key = "route_protocol",
     .kind = FieldKind::kChoice,
     .def = "absorbed",
     .meaning = "what a routed query carries: absorbed (the per-head latent query out, the latent partial output "
                "back; the paper's prototype) or compressed (the query's low-rank latent c_Q out, expanded on the "
                "holder, the partial output projected to values there, as a serving engineer sends it)",
     .choices = "absorbed|compressed"},
    {.key = "fetch_blocks",
     .kind = FieldKind::kInteger,
     .def = "32",
     .meaning = "thread blocks moving a fetched chunk",
     .check = Check::kPositive},
    {.key = "proxy_post",
     .dim = Dimension::kSeconds,
     .def = "0s",
     .meaning = "a CPU proxy thread's time to post one network message (engine.transport proxy: work request, "
                "doorbell); a GPU's proxy threads post one message each at a time, so a message of a fan-out waits "
                "for the posts of those before it (a lone message's post is inside the fabric's probe); 0s: no "
                "queue. Device-initiated messages post from their own thread blocks, in parallel: no queue",
     .range = {0, 1e-3, "posting a message takes ns to us"}},
    {.key = "proxy_threads",
     .kind = FieldKind::kInteger,
     .def = "1",
     .meaning = "CPU proxy threads posting a GPU's network messages (NCCL runs one per GPU)",
     .check = Check::kPositive,
     .range = {1, 64, "a few threads per GPU"}},
};

const core::Schema kGpuSchema{
    {.key = "sm_count", .kind = FieldKind::kInteger, .meaning = "streaming multiprocessors", .check = Check::kPositive},
    {.key = "hbm_bandwidth",
     .dim = Dimension::kBytesPerSec,
     .meaning = "peak HBM bandwidth",
     .check = Check::kPositive},
    {.key = "bf16", .dim = Dimension::kFlopsPerSec, .meaning = "dense BF16 tensor peak", .check = Check::kPositive},
    {.key = "fp8", .dim = Dimension::kFlopsPerSec, .meaning = "dense FP8 tensor peak", .check = Check::kPositive},
    {.key = "memory_efficiency",
     .dim = Dimension::kCount,
     .meaning = "share of hbm_bandwidth a memory-bound kernel reaches",
     .check = Check::kPositive},
    {.key = "attention_efficiency",
     .dim = Dimension::kCount,
     .meaning = "share of bf16 a compute-bound attention kernel reaches",
     .check = Check::kPositive},
    {.key = "gemm_efficiency",
     .dim = Dimension::kCount,
     .meaning = "share of fp8 a large FP8 GEMM reaches",
     .check = Check::kPositive},
    {.key = "launch", .dim = Dimension::kSeconds, .meaning = "launch and tail of one kernel"},
    {.key = "hbm_capacity",
     .dim = Dimension::kBytes,
     .def = "0B",
     .meaning = "HBM one GPU holds (the serving step's weights and cache must fit); 0B: not given"},
};

const core::Schema kHolderSchema{
    {.key = "kernel_fixed",
     .dim = Dimension::kSeconds,
     .def = kNoDefault,
     .meaning = "measured partial-attention kernel: fixed time (default: the gpu roofline)"},
    {.key = "kernel_per_token",
     .dim = Dimension::kSeconds,
     .def = kNoDefault,
     .meaning = "measured partial-attention kernel: per cached token"},
    {.key = "kernel_per_token_row",
     .dim = Dimension::kSeconds,
     .def = kNoDefault,
     .meaning = "measured partial-attention kernel: per token x query row"},
    {.key = "compute_concurrency",
     .kind = FieldKind::kInteger,
     .def = kNoDefault,
     .meaning = "measured: kernels one GPU runs at full speed at once (default: kernels share the SMs they fill)",
     .check = Check::kPositive},
    {.key = "copy_streams",
     .kind = FieldKind::kInteger,
     .def = "8",
     .meaning = "staging-copy stream pool per holder (copy elbow)",
     .check = Check::kPositive},
};

const core::Schema kMergeSchema{
    {.key = "fixed",
     .dim = Dimension::kSeconds,
     .def = kNoDefault,
     .meaning = "measured online-softmax merge: fixed time (default: the gpu roofline)"},
    {.key = "per_row",
     .dim = Dimension::kSeconds,
     .def = kNoDefault,
     .meaning = "measured online-softmax merge: per partial row"},
};

const core::Schema kSpliceSchema{
    {.key = "fixed",
     .dim = Dimension::kSeconds,
     .def = kNoDefault,
     .meaning = "measured splice (position re-adaptation) per contiguous run, each layer (default: the gpu roofline)"},
    {.key = "per_token",
     .dim = Dimension::kSeconds,
     .def = kNoDefault,
     .meaning = "measured splice per token re-rotated"},
    {.key = "insert",
     .dim = Dimension::kSeconds,
     .def = "0us",
     .meaning = "roofline splice: host-side insertion of one contiguous run into the block table (a measured "
                "splice contains it)"},
};

const core::Schema kPrefillSchema{
    {.key = "tokens_per_s",
     .dim = Dimension::kCount,
     .def = kNoDefault,
     .meaning = "measured re-prefill rate of one instance, tokens per second, all layers (default: the gpu roofline)",
     .check = Check::kPositive},
};

const core::Schema kHostSchema{
    {.key = "overhead", .dim = Dimension::kSeconds, .def = "0us", .meaning = "host-side dispatch per exchange"},
};

const core::Schema kKvTransferSchema{
    {.key = "registration",
     .dim = Dimension::kSeconds,
     .def = "0us",
     .meaning = "registering a KV transfer's memory with the NIC, per transfer (0 where the serving engine registers "
                "its KV cache once at start-up, as vLLM's and SGLang's KV connectors do)"},
    {.key = "post",
     .dim = Dimension::kSeconds,
     .def = "0us",
     .meaning = "posting one KV transfer between instances: the receiver's request, the sender's batch of writes "
                "handed to the NIC"},
    {.key = "completion",
     .dim = Dimension::kSeconds,
     .def = "0us",
     .meaning = "learning that one KV transfer ended: polling its completions and notifying the receiver"},
};

const core::Schema kStepSchema{
    {.key = "other_compute",
     .dim = Dimension::kSeconds,
     .def = "0us",
     .meaning = "per decode step compute outside attention (MLP, other layers)"},
};

const core::Schema kExpertParallelSchema{
    {.key = "nvlink_dispatch",
     .dim = Dimension::kBytesPerSec,
     .def = kNoDefault,
     .meaning = "what an MoE layer's dispatch kernel moves per GPU over NVLink (SM copies, as DeepEP's low-latency "
                "kernels; default: the fabric's bandwidth)"},
    {.key = "nvlink_combine", .dim = Dimension::kBytesPerSec, .def = kNoDefault, .meaning = "the same for its combine"},
};

const core::Schema kTensorParallelSchema{
    {.key = "all_reduce_latency",
     .dim = Dimension::kSeconds,
     .def = kNoDefault,
     .meaning = "fixed time of one all-reduce among the tensor-parallel ranks of a node (NVLink), whatever its size"},
    {.key = "all_reduce_bus_bandwidth",
     .dim = Dimension::kBytesPerSec,
     .def = kNoDefault,
     .meaning = "its bus bandwidth: an all-reduce of S bytes over n ranks moves 2 (n - 1) / n x S at this rate"},
};

const core::Schema kSpreadCheckSchema{
    {.key = "relative",
     .dim = Dimension::kCount,
     .meaning = "relative standard deviation by the least-squares formula"},
};

const core::Schema kFlattenedSchema{
    {.key = "at", .dim = Dimension::kBytes, .meaning = "the breakpoint where the measured times fall"},
    {.key = "from", .dim = Dimension::kBytes, .meaning = "first size over which the curve holds its level"},
    {.key = "to", .dim = Dimension::kBytes, .meaning = "where the segment's line catches up with the level"},
    {.key = "points", .kind = FieldKind::kInteger, .meaning = "measured points from..to"},
    {.key = "fell",
     .dim = Dimension::kCount,
     .meaning = "how far the segment starts below the level, a fraction of the level"},
    {.key = "max_change", .dim = Dimension::kCount, .meaning = "largest |curve - measured| / measured from..to"},
};

const core::Schema kFitSchema{
    {.key = "measured", .kind = FieldKind::kString, .meaning = "what the series measured"},
    {.key = "model", .kind = FieldKind::kString, .meaning = "the fitted model"},
    {.key = "points", .kind = FieldKind::kInteger, .meaning = "measured points fitted", .check = Check::kPositive},
    {.key = "r2", .dim = Dimension::kCount, .meaning = "weighted (1/t^2) coefficient of determination"},
    {.key = "mape", .dim = Dimension::kCount, .meaning = "mean absolute relative error, fraction"},
    {.key = "max_error", .dim = Dimension::kCount, .meaning = "largest relative error, fraction"},
    {.key = "loo_mape", .dim = Dimension::kCount, .meaning = "leave-one-out mean relative error, fraction"},
    {.key = "breakpoints",
     .kind = FieldKind::kList,
     .dim = Dimension::kBytes,
     .def = kNoDefault,
     .meaning = "message sizes where the protocol changes"},
    {.key = "sets", .kind = FieldKind::kList, .def = kNoDefault, .meaning = "profile keys this fit set"},
    {.key = "flattened",
     .kind = FieldKind::kList,
     .def = kNoDefault,
     .meaning = "transfers: where the measured times fall with size and the curve holds its level",
     .sub = &kFlattenedSchema},
    {.key = "adjustments",
     .kind = FieldKind::kList,
     .def = kNoDefault,
     .meaning = "transfers: what was done to keep every segment growing and the curve non-decreasing"},
    {.key = "spread_check",
     .kind = FieldKind::kMap,
     .def = kNoDefault,
     .meaning = "the fitted values' relative spread by the least-squares formula (the bootstrap's cross-check)",
     .sub = &kSpreadCheckSchema},
};

const core::Schema kUncertaintySchema{
    {.key = "relative",
     .dim = Dimension::kCount,
     .meaning = "relative standard deviation (0.05 = 5%)",
     .check = Check::kPositive},
    {.key = "source",
     .kind = FieldKind::kString,
     .meaning = "where the spread comes from ([paper], [measured: where], fit, ...)"},
};

const core::Schema kCorrelationSchema{
    {.key = "a", .kind = FieldKind::kString, .meaning = "one uncertain value (dotted profile key)"},
    {.key = "b", .kind = FieldKind::kString, .meaning = "the other"},
    {.key = "rho", .kind = FieldKind::kString, .meaning = "their correlation, a number from -1 to 1"},
};

const core::Schema kProfileSchema{
    {.key = "name", .kind = FieldKind::kString, .meaning = "profile name"},
    {.key = "description", .kind = FieldKind::kString, .def = kNoDefault, .meaning = "where the numbers come from"},
    {.key = "extends", .kind = FieldKind::kString, .def = kNoDefault, .meaning = "base profile (name or path)"},
    {.key = "fabrics", .kind = FieldKind::kSection, .meaning = "per fabric class costs", .sub = &kFabricsSchema},
    {.key = "dispatch", .kind = FieldKind::kSection, .meaning = "thread blocks per transfer", .sub = &kDispatchSchema},
    {.key = "gpu",
     .kind = FieldKind::kSection,
     .meaning = "the GPU's peaks and efficiencies: the roofline of every kernel not measured below",
     .sub = &kGpuSchema},
    {.key = "holder", .kind = FieldKind::kSection, .meaning = "attention kernel and elbows", .sub = &kHolderSchema},
    {.key = "merge", .kind = FieldKind::kSection, .meaning = "online-softmax merge", .sub = &kMergeSchema},
    {.key = "splice", .kind = FieldKind::kSection, .meaning = "fetch's position re-adaptation", .sub = &kSpliceSchema},
    {.key = "prefill", .kind = FieldKind::kSection, .meaning = "local re-prefill", .sub = &kPrefillSchema},
    {.key = "host", .kind = FieldKind::kSection, .meaning = "host overhead", .sub = &kHostSchema},
    {.key = "step", .kind = FieldKind::kSection, .meaning = "decode step terms", .sub = &kStepSchema},
    {.key = "kv_transfer",
     .kind = FieldKind::kSection,
     .meaning = "per-transfer costs of a KV hand-off between instances (a transfer engine's or KV connector's), "
                "paid once by each transfer on top of its bytes and its path's latency",
     .sub = &kKvTransferSchema},
    {.key = "expert_parallel",
     .kind = FieldKind::kSection,
     .def = "",
     .meaning = "the MoE layers' dispatch and combine kernels (engine.step full)",
     .sub = &kExpertParallelSchema},
    {.key = "tensor_parallel",
     .kind = FieldKind::kSection,
     .def = "",
     .meaning = "the all-reduce of tensor-parallel ranks (engine.step full with instances.tp > 1)",
     .sub = &kTensorParallelSchema},
    {.key = "fit",
     .kind = FieldKind::kMap,
     .def = kNoDefault,
     .meaning = "fit quality per measured series (written by xattn calibrate fit)",
     .sub = &kFitSchema},
    {.key = "uncertainty",
     .kind = FieldKind::kMap,
     .def = kNoDefault,
     .meaning = "spread of profile values, by dotted key (fabrics.ib-spine.probe_gpu: {relative, source})",
     .sub = &kUncertaintySchema},
    {.key = "correlations",
     .kind = FieldKind::kList,
     .def = kNoDefault,
     .meaning = "correlations between uncertain values ({a, b, rho})",
     .sub = &kCorrelationSchema},
};
} // namespace

const core::Schema& profile_schema()
{
  return kProfileSchema;
}

} // namespace xattn::calibrate
