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

namespace
{
// Each fabric class's costs and curve; the same GPU's, which cross no link.
void read_fabrics(Profile& p, core::Section& top)
{
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
}

// The gpu section (the roofline), where given; returns whether it is.
bool read_gpu(Profile& p, core::Section& top)
{
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
  return has_gpu;
}

// The measured kernel costs (holder, merge, splice, re-prefill), each group whole or not at all.
void read_measured(Profile& p, core::Section& top, bool has_gpu)
{
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
}

// The fits `xattn calibrate fit` recorded.
void read_fits(Profile& p, core::Section& top)
{
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
    r.breakpoints_B = f.numbers("breakpoints", core::Dimension::kBytes);
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
}

// The values' spreads and their correlations.
void read_uncertainty(Profile& p, core::Section& top)
{
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
}
} // namespace

Profile read_profile(const core::Document& doc)
{
  core::Diagnostics diags;
  core::Section top(doc.file, doc.root, "", profile_schema(), diags);
  if (!doc.root.IsMap()) diags.throw_if_any();
  Profile p;
  p.file = doc.file;
  p.name = top.string("name");
  p.description = top.string("description");
  (void)top.string("extends");
  read_fabrics(p, top);
  core::Section dispatch = top.section("dispatch");
  p.route_blocks = dispatch.count("route_blocks");
  p.route_protocol = route_protocol_named(dispatch.choice("route_protocol"));
  p.fetch_blocks = dispatch.count("fetch_blocks");
  p.proxy_post = dispatch.seconds("proxy_post");
  p.proxy_threads = dispatch.count("proxy_threads");

  const bool has_gpu = read_gpu(p, top);
  read_measured(p, top, has_gpu);
  p.host_overhead = top.section("host").seconds("overhead");
  p.step_other = top.section("step").seconds("other_compute");
  {
    core::Section kv = top.section("kv_transfer");
    p.kv_transfer = {kv.seconds("registration"), kv.seconds("post"), kv.seconds("completion")};
  }
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
  read_fits(p, top);
  read_uncertainty(p, top);
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
