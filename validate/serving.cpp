#include "validate/serving.hpp"

#include "sim/core/error.hpp"
#include "sim/core/resources.hpp"
#include "sim/core/yaml.hpp"
#include "sim/engine/driver.hpp"
#include "validate/table.hpp"
#include "workloads/batch.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>

namespace xattn::validate
{
namespace fs = std::filesystem;

namespace
{
constexpr int kGpusPerNode = 8; // the H800 servers of DeepSeek's profile

// The shipped scenario a point runs: its phase's, or the shared-corpus study's.
std::string scenario_name(const ServingMeasurement& m, bool shared)
{
  return shared ? "deepseek-profile-shared" : "deepseek-profile-" + m.phase;
}

// The overrides that give the shipped scenario point `m`'s sizes, on the validation's machine:
// its GPUs (whole nodes from node 0), one instance a GPU, EP over all of them, `micro_batches`
// pipelined layer by layer (or one at step granularity), `per_gpu` requests a GPU of its context,
// the batch (decode) or an iteration's prompts and token budget (prefill).
std::vector<std::string> point_sets(const ServingMeasurement& m, int micro_batches, int per_gpu,
                                    const ServingValidation& v)
{
  const bool decode = m.phase == "decode";
  const std::string gpus = fmt::format("[node0-{}]", m.gpus / kGpusPerNode - 1);
  std::vector<std::string> sets = {
      "profile=" + v.profile,
      "topology=" + v.topology,
      "instances.requesters=" + gpus,
      "instances.holders=" + gpus,
      fmt::format("instances.dp_attention={}", m.gpus),
      fmt::format("instances.ep={}", m.ep),
      fmt::format("instances.micro_batches={}", micro_batches),
      fmt::format("engine.granularity={}", micro_batches > 1 ? "layer" : "step"),
      fmt::format("corpus.chunk_tokens={}", m.context_tokens),
      fmt::format("workload.batch.context_tokens={}", m.context_tokens),
      fmt::format("workload.batch.requests_per_instance={}", per_gpu),
      fmt::format("engine.max_batch={}", decode ? m.requests_per_gpu : m.tokens_per_gpu / m.context_tokens)};
  if (!decode) sets.push_back(fmt::format("prefill.max_num_batched_tokens={}", m.tokens_per_gpu));
  return sets;
}

// Point `m` run from its shipped scenario with the point's sizes (point_sets): a decode point's
// batch on each GPU; a prefill point's prompts for as many iterations as the shipped scenario holds
// (its requests a GPU over its iteration's prompts), each iteration the row's. Every request's context is its own on
// its GPU (every policy then local), or with `shared_tokens` a chunk of a shared corpus of that many tokens, under the
// study's policies. The scenario as run is written to `dir` as `stem`.yaml, its results to out-`stem`.
sim::engine::RunOutcome run_point(const ServingMeasurement& m, int micro_batches, std::int64_t shared_tokens,
                                  const std::string& stem, const fs::path& dir, ServingValidation& v,
                                  sim::engine::Scenario& sc, int members = 0)
{
  const std::string name = scenario_name(m, shared_tokens > 0);
  const std::optional<fs::path> shipped = core::find_data("scenarios/" + name + ".yaml");
  if (!shipped)
    throw std::runtime_error("scenarios/" + name +
                             ".yaml is in none of xattn's data folders ($XATTN_DATA_DIR, <exe>/../share/xattn, "
                             "the source tree it was built from)");
  int per_gpu = m.requests_per_gpu;
  if (m.phase == "prefill") {
    const sim::engine::Scenario as_shipped = sim::engine::load_scenario(shipped->string());
    per_gpu = m.tokens_per_gpu / m.context_tokens *
              static_cast<int>(as_shipped.workload.batch->requests_per_instance / as_shipped.max_batch);
  }
  core::Document doc = core::load_yaml(*shipped);
  std::vector<std::string> sets = point_sets(m, micro_batches, per_gpu, v);
  if (shared_tokens > 0) sets.push_back(fmt::format("workload.batch.shared_tokens={}", shared_tokens));
  for (const std::string& s : sets)
    core::apply_override(doc, s);
  const fs::path file = dir / (stem + ".yaml");
  const std::string text = YAML::Dump(doc.root) + "\n";
  std::ofstream(file) << "# Written by xattn validate --serving: scenarios/" << name << ".yaml with the sizes of line "
                      << m.line << " of the measured table (validate/README.md, \"--serving\").\n"
                      << text;
  sc = sim::engine::parse_scenario(text, file.string());
  sim::engine::RunOptions opt;
  opt.out_dir = (dir / ("out-" + stem)).string();
  opt.progress = false;
  opt.ensemble = members;
  sim::engine::RunOutcome o = sim::engine::run_scenario(sc, opt);
  v.invariants_ok = v.invariants_ok && o.exit_code == 0 && o.result.ok;
  const std::uint64_t expected = sc.workload.batch->requests();
  for (const auto& [policy, p] : o.result.policies)
    if (!p.full_step || p.requests != expected)
      throw std::runtime_error(
          fmt::format("{} at EP {}, {}: {} of {} requests finished", m.phase, m.ep, policy, p.requests, expected));
  return o;
}

ServingRun simulate(const ServingMeasurement& m, int micro_batches, const fs::path& dir, ServingValidation& v,
                    ServingPoint& pt, int members = 0)
{
  const bool decode = m.phase == "decode";
  sim::engine::Scenario sc;
  const sim::engine::RunOutcome o =
      run_point(m, micro_batches, 0, fmt::format("{}-ep{}-mb{}", m.phase, m.ep, micro_batches), dir, v, sc, members);
  const sim::engine::PolicyResult& p = o.result.policies.front().second;
  // None attended anything off its own GPU.
  const sim::engine::Decisions& d = p.decisions;
  const std::uint64_t calls = d.route + d.fetch + d.local + d.cached;
  if (calls != 0)
    throw std::runtime_error(fmt::format("{} at EP {}: {} calls off the GPU (expected none)", m.phase, m.ep, calls));
  pt.layers = sc.model.layers;
  pt.moe_layers = sc.model.moe_layers();
  ServingRun run;
  run.tokens_per_s_per_gpu =
      decode ? m.requests_per_gpu / p.tpot_s.mean
             : static_cast<double>(sc.workload.batch->requests_per_instance) * m.context_tokens / p.simulated_time_s;
  const double layers = pt.layers, moe_layers = std::max(1, pt.moe_layers);
  run.per_layer = {p.step_latency_s.mean / layers, p.split_attention_s / layers,      p.split_gemm_s / layers,
                   p.split_moe_s / moe_layers,     p.ep_dispatch_s.mean / moe_layers, p.ep_combine_s.mean / moe_layers};
  if (o.result.ensemble)
    run.member_tpot_s = o.result.ensemble->spread(o.result.policies.front().first, "tpot_s.mean")->values;
  return run;
}

// Decode point `m` again over a shared corpus (scenarios/deepseek-profile-shared.yaml), under each
// of its policies, each (with `members`) as an ensemble whose members pair with the baseline's,
// member by member.
void study_shared(const ServingMeasurement& m, std::int64_t shared_tokens, int members, const fs::path& dir,
                  ServingValidation& v, ServingPoint& pt)
{
  pt.shared_chunks = std::max<std::int64_t>(1, shared_tokens / m.context_tokens);
  pt.shared_members = members;
  sim::engine::Scenario sc;
  // One micro-batch at step granularity: two pipelined run every layer's calls apart, hundreds of
  // times the events, where the study compares policies at one configuration.
  const sim::engine::RunOutcome o = run_point(m, 1, pt.shared_chunks * m.context_tokens,
                                              fmt::format("decode-ep{}-shared", m.ep), dir, v, sc, members);
  pt.shared_output_tokens = static_cast<int>(sc.workload.batch->output_tokens);
  for (const auto& [name, r] : o.result.policies) {
    SharedRun run{name,
                  m.requests_per_gpu / r.tpot_s.mean,
                  r.tpot_s.mean,
                  r.decisions.route,
                  r.decisions.fetch,
                  r.decisions.local,
                  r.decisions.cached,
                  static_cast<double>(r.wire_bytes),
                  {},
                  {}};
    if (o.result.ensemble) {
      const std::vector<double>& tpot = o.result.ensemble->spread(name, "tpot_s.mean")->values;
      std::vector<double> tokens, share;
      for (std::size_t k = 0; k < tpot.size(); ++k) {
        tokens.push_back(m.requests_per_gpu / tpot[k]);
        share.push_back(pt.one.member_tpot_s.at(k) / tpot[k]); // the batch over each TPOT: their ratio
      }
      run.tokens = sim::quantiles(tokens);
      run.share = sim::quantiles(share);
    }
    pt.shared.push_back(run);
  }
}
} // namespace

std::vector<ServingMeasurement> read_serving_measurements(const std::string& path)
{
  std::vector<ServingMeasurement> out;
  read_table(
      path,
      {"phase", "ep", "tp", "gpus", "tokens_per_gpu", "requests_per_gpu", "context_tokens", "tokens_per_s_per_gpu"},
      [&](const TableRow& row) {
        ServingMeasurement m;
        m.line = row.line();
        m.phase = row.cell("phase");
        if (m.phase != "decode" && m.phase != "prefill")
          row.fail("phase", "'" + m.phase + "' is neither decode nor prefill");
        // A whole, positive count; an empty cell where `allowed_empty`.
        auto count = [&row](const char* key, const std::string& what, bool allowed_empty = false) {
          if (allowed_empty && row.cell(key).empty()) return 0;
          const double x = row.number(key, what);
          if (x != static_cast<int>(x) || x < 1) row.fail(key, fmt::format("{} is not {}", x, what));
          return static_cast<int>(x);
        };
        const bool decode = m.phase == "decode";
        m.ep = count("ep", "a whole number of GPUs");
        m.gpus = count("gpus", "a whole number of GPUs");
        if (count("tp", "a whole number of GPUs") != 1)
          row.fail("tp", "only data-parallel attention (tp 1) is rebuilt, as DeepSeek's profile runs it");
        if (m.gpus % kGpusPerNode != 0 || m.gpus / kGpusPerNode > 256)
          row.fail("gpus", fmt::format("{} GPUs do not fill whole nodes of {} of the 256 of the topology", m.gpus,
                                       kGpusPerNode));
        if (m.ep != m.gpus || 256 % m.ep != 0)
          row.fail("ep", fmt::format("EP {} is not every GPU of the point, a divisor of the 256 experts", m.ep));
        m.context_tokens = count("context_tokens", "a whole number of tokens");
        // The shipped scenarios' blocks: the batch's default size.
        if (const std::int64_t block = workloads::BatchConfig{}.block_tokens; m.context_tokens % block != 0)
          row.fail("context_tokens", fmt::format("{} is not whole {}-token blocks", m.context_tokens, block));
        m.tokens_per_gpu = count("tokens_per_gpu", "a whole number of tokens", decode);
        m.requests_per_gpu = count("requests_per_gpu", "a whole number of requests", !decode);
        if (!decode && (m.tokens_per_gpu == 0 || m.tokens_per_gpu % m.context_tokens != 0))
          row.fail("tokens_per_gpu", "a prefill point's tokens per GPU are whole prompts of context_tokens");
        m.tokens_per_s_per_gpu = row.number("tokens_per_s_per_gpu", "a number of tokens per second");
        if (m.tokens_per_s_per_gpu <= 0) row.fail("tokens_per_s_per_gpu", "a throughput is positive");
        out.push_back(m);
      });
  return out;
}

ServingValidation validate_serving(const std::vector<ServingMeasurement>& data, const std::string& profile,
                                   const std::string& topology, const std::vector<EpMeasurement>& deepep,
                                   const std::string& keep, std::int64_t shared_tokens, int shared_members)
{
  ServingValidation v{{}, profile, topology, true};
  std::optional<ScratchDir> scratch;
  if (keep.empty()) scratch.emplace("xattn_validate_serving");
  const fs::path dir = keep.empty() ? scratch->path() : fs::absolute(keep);
  fs::create_directories(dir);
  for (const ServingMeasurement& m : data) {
    ServingPoint pt;
    pt.measured = m;
    const bool study = m.phase == "decode" && shared_tokens > 0;
    pt.one = simulate(m, 1, dir, v, pt, study ? shared_members : 0);
    pt.two = simulate(m, 2, dir, v, pt);
    if (study) study_shared(m, shared_tokens, shared_members, dir, v, pt);
    if (m.phase == "decode")
      for (const EpMeasurement& e : deepep)
        if (e.table == "pure-rdma" && e.ep == m.ep)
          (e.op == "dispatch" ? pt.deepep_dispatch_s : pt.deepep_combine_s) = e.latency_s;
    v.points.push_back(pt);
  }
  return v;
}

std::string serving_report(const ServingValidation& v, double max_error)
{
  std::string out = fmt::format(
      "xattn validate --serving: profile {}, topology {}; DeepSeek-V3, data-parallel attention and EP over every "
      "GPU of the point, each request's context its own and on its GPU, expert shares as expected; each point with "
      "one micro-batch and with two overlapped (as measured: the one checked)\n\n",
      v.profile, v.topology);
  out += fmt::format("{:<8} {:>4} {:>10} {:>18} {:>8} {:>18} {:>8}\n", "phase", "EP", "measured", "one micro-batch",
                     "error", "two, overlapped", "error");
  for (const ServingPoint& p : v.points)
    out += fmt::format("{:<8} {:>4} {:>10.0f} {:>18.1f} {:>+7.1f}% {:>18.1f} {:>+7.1f}%{}\n", p.measured.phase,
                       p.measured.ep, p.measured.tokens_per_s_per_gpu, p.one.tokens_per_s_per_gpu, 100 * p.one_error(),
                       p.two.tokens_per_s_per_gpu, 100 * p.error(),
                       std::abs(p.error()) > max_error ? "  over the bound" : "");
  out += fmt::format("\ntokens/s per GPU. Time per layer, us (step, attention and GEMMs over all layers; the MoE "
                     "layers' wait past the compute, dispatch and combine over the MoE layers)\n"
                     "{:<8} {:>4} {:>13} {:>9} {:>10} {:>9} {:>9} {:>9} {:>9}\n",
                     "phase", "EP", "micro-batches", "step", "attention", "GEMMs", "MoE", "dispatch", "combine");
  for (const ServingPoint& p : v.points)
    for (const auto& [batches, run] : {std::pair{1, &p.one}, std::pair{2, &p.two}}) {
      const ServingSplit& s = run->per_layer;
      out += fmt::format("{:<8} {:>4} {:>13} {:>9.1f} {:>10.1f} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.1f}\n",
                         p.measured.phase, p.measured.ep, batches, 1e6 * s.step, 1e6 * s.attention, 1e6 * s.gemm,
                         1e6 * s.moe, 1e6 * s.dispatch, 1e6 * s.combine);
    }
  for (const ServingPoint& p : v.points)
    if (p.deepep_dispatch_s > 0 && p.deepep_combine_s > 0)
      out += fmt::format("\ndecode at EP {}, one micro-batch of {} tokens a GPU, per MoE layer: dispatch {:.1f} us "
                         "against DeepEP's {:.0f} us ({:+.1f}%{}), combine {:.1f} us against {:.0f} us ({:+.1f}%)\n",
                         p.measured.ep, p.measured.requests_per_gpu, 1e6 * p.one.per_layer.dispatch,
                         1e6 * p.deepep_dispatch_s, 100 * p.dispatch_error(),
                         std::abs(p.dispatch_error()) > kDispatchBound
                             ? fmt::format(", over the {:.0f}% bound", 100 * kDispatchBound)
                             : "",
                         1e6 * p.one.per_layer.combine, 1e6 * p.deepep_combine_s, 100 * p.combine_error());
  for (const ServingPoint& p : v.points) {
    if (p.shared.empty()) continue;
    const bool ranged = p.shared_members > 0;
    out += fmt::format("\ndecode at EP {} over a shared corpus of {} chunks of {} tokens (popularity 1 / rank, spread "
                       "over its GPUs), one micro-batch, {} tokens a request, against every context on its own "
                       "GPU ({:.1f} tokens/s per GPU)",
                       p.measured.ep, p.shared_chunks, p.measured.context_tokens, p.shared_output_tokens,
                       p.one.tokens_per_s_per_gpu);
    if (ranged)
      out += fmt::format("; ranges over {} profile draws, each against the baseline's same draw ({})", p.shared_members,
                         p.shared_members < 20 ? "every member" : "5-95%");
    out += fmt::format("\n{:<11} {:>10} {:>8} {:>10} {:>28} {:>10}{}\n", "policy", "tok/s/GPU", "of own", "TPOT",
                       "route/fetch/local/cached", "wire GB",
                       ranged ? fmt::format(" {:>15} {:>15}", "tok/s/GPU range", "of own range") : "");
    for (const SharedRun& r : p.shared) {
      out += fmt::format("{:<11} {:>10.1f} {:>7.1f}% {:>8.1f}ms {:>28} {:>10.1f}", r.policy, r.tokens_per_s_per_gpu,
                         100 * r.tokens_per_s_per_gpu / p.one.tokens_per_s_per_gpu, 1e3 * r.tpot_s,
                         fmt::format("{}/{}/{}/{}", r.route, r.fetch, r.local, r.cached), r.wire_bytes / 1e9);
      if (ranged)
        out += fmt::format(" {:>15} {:>15}", fmt::format("{:.1f}-{:.1f}", r.tokens.p5, r.tokens.p95),
                           fmt::format("{:.1f}-{:.1f}%", 100 * r.share.p5, 100 * r.share.p95));
      out += "\n";
    }
  }
  return out;
}

} // namespace xattn::validate
