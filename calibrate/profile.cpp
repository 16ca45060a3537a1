#include "calibrate/profile.hpp"
#include "sim/core/check.hpp"
#include "sim/core/plausible.hpp"
#include "sim/core/yaml.hpp"

#include "calibrate/uncertainty.hpp"

#include "sim/core/resources.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <vector>

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

const core::Schema kFabricsSchema{
    {.key = "nvlink", .kind = FieldKind::kSection, .meaning = "NVLink through NVSwitch", .sub = &kFabricSchema},
    {.key = "pcie", .kind = FieldKind::kSection, .meaning = "PCIe within a node", .sub = &kFabricSchema},
    {.key = "ib-same-leaf", .kind = FieldKind::kSection, .meaning = "InfiniBand under one leaf", .sub = &kFabricSchema},
    {.key = "ib-spine", .kind = FieldKind::kSection, .meaning = "InfiniBand through a spine", .sub = &kFabricSchema},
};

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

// Fills `child` in place with what only `base` has; mappings merge key by key, the child wins
// everywhere else. The child's own nodes are kept (not copied), so their marks survive and an
// error in a child's key points into the child file.
void fill_from(YAML::Node child, const YAML::Node& base)
{
  if (!child.IsMap() || !base.IsMap()) return;
  for (auto it = base.begin(); it != base.end(); ++it) {
    const std::string key = it->first.Scalar();
    if (!child[key])
      child[key] = it->second;
    else
      fill_from(child[key], it->second);
  }
}

core::Document load_with_extends(const std::filesystem::path& path, std::vector<std::string>& chain)
{
  core::Document doc = core::load_yaml(path);
  std::string canonical = std::filesystem::weakly_canonical(path).string();
  if (std::find(chain.begin(), chain.end(), canonical) != chain.end())
    core::fail(path.string(), 0, 0, "extends", "profiles extend each other in a cycle");
  chain.push_back(canonical);
  if (!doc.root.IsMap() || !doc.root["extends"]) return doc;
  YAML::Node ext = doc.root["extends"];
  int line = ext.Mark().line + 1, column = ext.Mark().column + 1;
  if (!ext.IsScalar()) core::fail(doc.file, line, column, "extends", "expected a profile name or path");
  if (chain.size() > 8) core::fail(doc.file, line, column, "extends", "more than 8 levels of extends");
  std::string base_name = ext.Scalar();
  auto base_path = core::resolve_preset(base_name, "calibrate/profiles");
  if (!base_path) {
    // A relative path is read relative to the file that names it.
    auto sibling = path.parent_path() / base_name;
    std::error_code ec; // a name the file system refuses (too long) is simply not found
    if (std::filesystem::is_regular_file(sibling, ec)) base_path = sibling;
  }
  if (!base_path) core::fail(doc.file, line, column, "extends", "no profile named '" + base_name + "'");
  // A cycle is reported where it closes: at the `extends` that names a file already in the chain.
  const std::string base_canonical = std::filesystem::weakly_canonical(*base_path).string();
  if (auto seen = std::find(chain.begin(), chain.end(), base_canonical); seen != chain.end()) {
    std::string cycle;
    for (auto it = seen; it != chain.end(); ++it)
      cycle += std::filesystem::path(*it).filename().string() + " -> ";
    core::fail(doc.file, line, column, "extends",
               "profiles extend each other in a cycle: " + cycle + base_path->filename().string());
  }
  core::Document base = load_with_extends(*base_path, chain);
  read_profile(base); // the base must be valid on its own: its errors name its own file
  doc.root.remove("extends");
  fill_from(doc.root, base.root);
  return doc;
}

// A transfer curve: ascending sizes from 0 B. A segment of small messages may fit a rate above the
// link's (its line fits times that latency dominates): it is kept, since it is what was measured.
void read_curve(core::Section& s, FabricCosts& c)
{
  if (!s.has("transfer")) return;
  for (core::Section& seg : s.sections("transfer")) {
    CurveSegment k{seg.bytes("from"), seg.seconds("latency"), seg.rate("bandwidth")};
    if (c.curve.empty() && k.from.value() != 0)
      seg.error("from", "the first segment must start at 0B");
    else if (!c.curve.empty() && !(k.from > c.curve.back().from))
      seg.error("from", "segments must be in ascending order of size");
    c.curve.push_back(k);
  }
  if (c.curve.empty()) s.error("transfer", "an empty curve: give at least one segment, or leave the key out");
}

// Whether the value under `key` enters any price: a measured group's values only when the profile
// gives the group, the gpu's only when it has one (the roofline).
bool prices(const Profile& p, std::string_view key)
{
  if (key.starts_with("gpu.")) return p.gpu.given();
  if (key.starts_with("holder.kernel_")) return p.measured.kernel;
  if (key.starts_with("merge.")) return p.measured.merge;
  if (key == "splice.fixed" || key == "splice.per_token") return p.measured.splice;
  if (key == "splice.insert") return !p.measured.splice;
  if (key.starts_with("prefill.")) return p.measured.prefill;
  return true;
}

} // namespace

RouteProtocol route_protocol_named(std::string_view name)
{
  XATTN_CHECK(name == "absorbed" || name == "compressed", "a route protocol the schema allows");
  return name == "compressed" ? RouteProtocol::kCompressed : RouteProtocol::kAbsorbed;
}

const core::Schema& profile_schema()
{
  return kProfileSchema;
}

Profile read_profile(const core::Document& doc)
{
  core::Diagnostics diags;
  core::Section top(doc.file, doc.root, "", kProfileSchema, diags);
  if (!doc.root.IsMap()) diags.throw_if_any();
  Profile p;
  p.file = doc.file;
  p.name = top.string("name");
  p.description = top.string("description");
  (void)top.string("extends");

  core::Section fabrics = top.section("fabrics");
  for (core::FabricClass f : core::kAllFabrics) {
    if (f == core::FabricClass::kSameGpu) continue;
    core::Section s = fabrics.section(core::to_string(f));
    FabricCosts& c = p.fabric(f);
    c.probe_gpu = s.seconds("probe_gpu");
    c.probe_proxy = s.seconds("probe_proxy");
    c.block_rate = s.rate("block_rate");
    c.bandwidth = s.rate("bandwidth");
    c.nominal_bandwidth = s.has("nominal_bandwidth") ? s.rate("nominal_bandwidth") : BytesPerSec(0);
    if (c.bandwidth > c.nominal() * (1 + 1e-9))
      s.error("bandwidth", "the effective rate exceeds nominal_bandwidth (" + core::format_rate(c.nominal()) + ")");
    c.wire_latency = s.seconds("wire_latency");
    const core::Hardware& port = f == core::FabricClass::kNvlink ? core::kNvlinkRate
                                 : f == core::FabricClass::kPcie ? core::kPcieRate
                                                                 : core::kNicRate;
    s.plausible("bandwidth", port, c.bandwidth.value());
    s.plausible("nominal_bandwidth", port, c.nominal_bandwidth.value());
    for (auto [k, v] : {std::pair{"probe_gpu", c.probe_gpu}, std::pair{"probe_proxy", c.probe_proxy},
                        std::pair{"wire_latency", c.wire_latency}})
      s.plausible(k, core::kProbeLatency, v.value());
    read_curve(s, c);
  }
  // Same GPU: nothing crosses a link. An unbounded rate keeps min(...) expressions uniform.
  // One thread block issues InfiniBand transfers whatever the path beyond the NIC: one rate (the
  // simulated platform has one IB dispatch cap per GPU).
  {
    const BytesPerSec leaf = p.fabric(core::FabricClass::kIbSameLeaf).block_rate;
    const BytesPerSec spine = p.fabric(core::FabricClass::kIbSpine).block_rate;
    if (std::abs(leaf.value() - spine.value()) > 1e-9 * spine.value())
      fabrics.section("ib-same-leaf")
          .error("block_rate", "differs from ib-spine's block_rate (" + core::format_rate(spine) +
                                   "): one thread block dispatches both IB classes at one rate");
  }
  FabricCosts& same_gpu = p.fabric(core::FabricClass::kSameGpu);
  same_gpu = FabricCosts{};
  same_gpu.block_rate = BytesPerSec(1e30);
  same_gpu.bandwidth = BytesPerSec(1e30);

  core::Section dispatch = top.section("dispatch");
  p.route_blocks = dispatch.count("route_blocks");
  p.route_protocol = route_protocol_named(dispatch.choice("route_protocol"));
  p.fetch_blocks = dispatch.count("fetch_blocks");

  const bool has_gpu = top.has("gpu");
  if (has_gpu) {
    core::Section g = top.section("gpu");
    p.gpu.sm_count = g.count("sm_count");
    p.gpu.hbm = g.rate("hbm_bandwidth");
    p.gpu.bf16 = g.flops("bf16");
    p.gpu.fp8 = g.flops("fp8");
    p.gpu.memory_efficiency = g.number("memory_efficiency");
    p.gpu.attention_efficiency = g.number("attention_efficiency");
    p.gpu.gemm_efficiency = g.number("gemm_efficiency");
    p.gpu.launch = g.seconds("launch");
    p.gpu.hbm_capacity = g.bytes("hbm_capacity");
    g.plausible("hbm_capacity", core::kHbmCapacity, p.gpu.hbm_capacity.value());
    g.plausible("hbm_bandwidth", core::kHbmRate, p.gpu.hbm.value());
    g.plausible("bf16", core::kGpuFlops, p.gpu.bf16.value());
    g.plausible("fp8", core::kGpuFlops, p.gpu.fp8.value());
    for (auto [k, v] : {std::pair{"memory_efficiency", p.gpu.memory_efficiency},
                        std::pair{"attention_efficiency", p.gpu.attention_efficiency},
                        std::pair{"gemm_efficiency", p.gpu.gemm_efficiency}})
      if (v > 1) g.error(k, "an efficiency is a share of the peak: at most 1");
  }
  // A group of measured costs is given whole or not at all; without it the roofline prices that
  // kernel, which needs the gpu section.
  auto group = [&](core::Section& s, std::initializer_list<const char*> keys, const char* what) {
    std::size_t given = 0;
    for (const char* k : keys)
      given += s.has(k) ? 1 : 0;
    if (given > 0 && given < keys.size())
      for (const char* k : keys)
        if (!s.has(k)) s.error(k, std::string("missing: the measured ") + what + " is given whole or not at all");
    if (given == 0 && !has_gpu)
      s.error(*keys.begin(),
              std::string("missing: without a gpu section (the roofline) the ") + what + " must be given as measured");
    return given == keys.size();
  };
  core::Section holder = top.section("holder");
  p.measured.kernel = group(holder, {"kernel_fixed", "kernel_per_token", "kernel_per_token_row"}, "attention kernel");
  p.kernel_fixed = holder.seconds("kernel_fixed");
  p.kernel_per_token = holder.seconds("kernel_per_token");
  p.kernel_per_token_row = holder.seconds("kernel_per_token_row");
  p.measured.concurrency = group(holder, {"compute_concurrency"}, "compute concurrency");
  p.compute_concurrency = p.measured.concurrency ? holder.count("compute_concurrency") : 0;
  p.copy_streams = holder.count("copy_streams");

  core::Section merge_s = top.section("merge");
  p.measured.merge = group(merge_s, {"fixed", "per_row"}, "merge");
  p.merge_fixed = merge_s.seconds("fixed");
  p.merge_per_row = merge_s.seconds("per_row");

  core::Section splice = top.section("splice");
  p.measured.splice = group(splice, {"fixed", "per_token"}, "splice");
  p.splice_fixed = splice.seconds("fixed");
  p.splice_per_token = splice.seconds("per_token");
  p.splice_insert = splice.seconds("insert");

  core::Section prefill = top.section("prefill");
  p.measured.prefill = group(prefill, {"tokens_per_s"}, "re-prefill rate");
  p.prefill_tokens_per_s = p.measured.prefill ? prefill.number("tokens_per_s") : 0;
  p.host_overhead = top.section("host").seconds("overhead");
  p.step_other = top.section("step").seconds("other_compute");
  {
    core::Section ep = top.section("expert_parallel");
    if (ep.has("nvlink_dispatch")) p.ep_nvlink_dispatch = ep.rate("nvlink_dispatch");
    if (ep.has("nvlink_combine")) p.ep_nvlink_combine = ep.rate("nvlink_combine");
  }
  {
    core::Section tp = top.section("tensor_parallel");
    if (tp.has("all_reduce_latency")) p.tp_all_reduce_latency = tp.seconds("all_reduce_latency");
    if (tp.has("all_reduce_bus_bandwidth")) p.tp_all_reduce_bus = tp.rate("all_reduce_bus_bandwidth");
  }
  for (auto& [fit_name, f] : top.named_sections("fit")) {
    FitRecord r;
    r.name = fit_name;
    r.measured = f.string("measured");
    r.model = f.string("model");
    r.points = f.integer("points");
    r.r2 = f.number("r2");
    r.mape = f.number("mape");
    r.max_error = f.number("max_error");
    r.loo_mape = f.number("loo_mape");
    r.breakpoints_B = f.numbers("breakpoints", Dimension::kBytes);
    r.sets = f.strings("sets");
    if (f.has("flattened"))
      for (core::Section& run : f.sections("flattened"))
        r.flattened.push_back({run.bytes("at").value(), run.bytes("from").value(), run.bytes("to").value(),
                               static_cast<std::size_t>(run.integer("points")), run.number("fell"),
                               run.number("max_change")});
    r.adjustments = f.strings("adjustments");
    for (auto& [key, c] : f.named_sections("spread_check"))
      r.spread_check.push_back({key, c.number("relative"), "least squares"});
    p.fits.push_back(std::move(r));
  }
  for (auto& [key, u] : top.named_sections("uncertainty")) {
    const double rel = u.number("relative");
    const std::string source = u.string("source");
    if (!is_uncertain_key(key))
      u.error("", "'" + key + "' is not a profile value that can carry an uncertainty");
    else if (!prices(p, key))
      u.error("", "'" + key + "' prices nothing in this profile (" +
                      (key.starts_with("gpu.") ? std::string("it has no gpu section")
                                               : std::string("the roofline prices that kernel")) +
                      "): its spread would change no result");
    else if (rel > 1)
      u.error("relative", "a relative standard deviation above 1 (100%) is not a measurement's spread");
    p.uncertainty.push_back({key, rel, source});
  }
  if (top.has("correlations"))
    for (core::Section& c : top.sections("correlations")) {
      const std::string rho = c.string("rho");
      Correlation k{c.string("a"), c.string("b"), std::nan("")};
      auto [end, ec] = std::from_chars(rho.data(), rho.data() + rho.size(), k.rho);
      if (ec != std::errc() || end != rho.data() + rho.size()) k.rho = std::nan("");
      for (const std::string* key : {&k.a, &k.b})
        if (std::none_of(p.uncertainty.begin(), p.uncertainty.end(),
                         [key](const Uncertainty& u) { return u.key == *key; }))
          c.error(key == &k.a ? "a" : "b", "'" + *key + "' has no uncertainty to correlate");
      if (!(k.rho >= -1 && k.rho <= 1)) c.error("rho", "a correlation is between -1 and 1");
      if (k.a == k.b) c.error("b", "a value is not correlated with itself");
      p.correlations.push_back(k);
    }
  diags.throw_if_any();
  if (!p.uncertainty.empty()) ProfileSampler check(p); // correlations that are no correlation matrix are bad input
  return p;
}

Profile load_profile(std::string_view name_or_path)
{
  auto path = core::resolve_preset(name_or_path, "calibrate/profiles");
  if (!path) {
    core::fail("command line", 0, 0, "--profile",
               core::no_preset_message("profile", name_or_path, "calibrate/profiles"));
  }
  std::vector<std::string> chain;
  return read_profile(load_with_extends(*path, chain));
}

} // namespace xattn::calibrate
