#include "sim/engine/output.hpp"
#include "sim/core/atomic_file.hpp"

#include "sim/engine/driver.hpp"
#include "sim/engine/ensemble.hpp"
#include "sim/engine/run_folder.hpp"
#include "sim/engine/verdict.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <string_view>
#include <unistd.h>

namespace xattn::sim::engine
{
namespace fs = std::filesystem;
namespace
{

// header + the policies' fragments, in the scenario's policy order, to `target` atomically; each
// line gets the run id as its last column.
void concat(const Scenario& sc, const fs::path& parts, const std::string& suffix, const char* header,
            const std::string& run_id, const fs::path& target)
{
  const fs::path tmp = core::temporary_name(target);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << header << ",run_id\n";
    const std::string tail = "," + run_id + "\n";
    for (const std::string& p : sc.policies) {
      std::ifstream in(parts / (p + suffix), std::ios::binary);
      for (std::string line; std::getline(in, line);)
        out << line << tail;
    }
    out.flush();
    if (!out) core::fail(tmp.string(), 0, 0, "", "cannot write");
  }
  core::commit_file(tmp, target);
}

std::string human_seconds(double s)
{
  return core::format_seconds(core::Seconds(s));
}

} // namespace

RunResult make_result(const Scenario& sc, std::vector<std::pair<std::string, PolicyResult>> policies)
{
  RunResult r;
  r.scenario = sc.name;
  r.seed = sc.seed;
  r.ok = !policies.empty();
  for (const auto& [name, p] : policies)
    r.ok = r.ok && p.invariants.ok;
  r.policies = std::move(policies);
  return r;
}

std::string comparison_table(const RunResult& result)
{
  const int w = policy_column(result);
  std::string out = fmt::format("{:<{}} {:>9} {:>10} {:>10} {:>10} {:>11} {:>27} {:>5} {:>10}  {}\n", "policy", w,
                                "requests", "steps", "step mean", "step p99", "wire bytes", "route/fetch/local/cached",
                                "ok", "delivered", "busiest (share of the run)");
  for (const auto& [name, p] : result.policies) {
    const Decisions& d = p.decisions;
    const std::string busiest = p.busiest.empty() ? "-" : fmt::format("{} {:.0f}%", p.busiest, 100 * p.busiest_share);
    const std::string delivered =
        p.load.window_s > 0 ? fmt::format("{:.0f}%{}", 100 * p.load.steady_share(), p.load.overloaded ? " OVER" : "")
                            : std::string("-");
    out += fmt::format("{:<{}} {:>9} {:>10} {:>10} {:>10} {:>11} {:>27} {:>5} {:>10}  {}\n", name, w, p.requests,
                       p.steps, human_seconds(p.step_latency_s.mean), human_seconds(p.step_latency_s.p99),
                       core::format_bytes(core::Bytes(static_cast<double>(p.wire_bytes))),
                       fmt::format("{}/{}/{}/{}", d.route, d.fetch, d.local, d.cached), p.invariants.ok ? "yes" : "NO",
                       delivered, busiest);
  }
  // The request's figures as vLLM's benchmark reports them.
  out += fmt::format("\n{:<{}} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>16}\n", "policy", w, "TTFT mean",
                     "TTFT p99", "TPOT mean", "TPOT p99", "ITL p99", "E2E p50", "E2E p99", "goodput");
  for (const auto& [name, p] : result.policies)
    out += fmt::format("{:<{}} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>16}\n", name, w,
                       human_seconds(p.ttft_s.mean), human_seconds(p.ttft_s.p99), human_seconds(p.tpot_s.mean),
                       human_seconds(p.tpot_s.p99), human_seconds(p.itl_s.p99), human_seconds(p.e2e_s.p50),
                       human_seconds(p.e2e_s.p99),
                       fmt::format("{:.0f}% {:.3g}/s", 100 * p.goodput.share, p.goodput.requests_per_s));
  if (std::any_of(result.policies.begin(), result.policies.end(), [](const auto& p) { return p.second.full_step; })) {
    out += fmt::format("\n{:<{}} {:>10} {:>10} {:>27} {:>12} {:>12}\n", "policy", w, "tok/s/GPU", "step mean",
                       "= attention + GEMMs + MoE", "EP dispatch", "EP combine");
    for (const auto& [name, p] : result.policies)
      out += fmt::format("{:<{}} {:>10.1f} {:>10} {:>27} {:>12} {:>12}\n", name, w, p.output_tokens_per_s_per_gpu,
                         human_seconds(p.step_latency_s.mean),
                         fmt::format("{} + {} + {}", human_seconds(p.split_attention_s), human_seconds(p.split_gemm_s),
                                     human_seconds(p.split_moe_s)),
                         p.expert_parallel ? human_seconds(p.ep_dispatch_s.mean) : std::string("-"),
                         p.expert_parallel ? human_seconds(p.ep_combine_s.mean) : std::string("-"));
  }
  if (result.any_prefill()) {
    // Where the prompts' blocks were found, summed over the requester instances; with a host
    // tier, what it gave back and dropped.
    const bool host = result.any_host_tier();
    const bool handoff = result.any_handoff();
    out += fmt::format("\n{:<{}} {:>14} {:>8} {:>9} {:>26} {:>10} {:>10}{}{}\n", "policy", w, "prefilled tok", "chunks",
                       "hit share", "blocks local/remote/miss", "evictions", "overflows",
                       host ? fmt::format(" {:>24}", "host hits/reads/evicted") : "",
                       handoff ? fmt::format(" {:>22}", "handoffs (mean wait)") : "");
    for (const auto& [name, p] : result.policies) {
      PoolCounts sum;
      for (const PoolCounts& c : p.pools)
        for (const auto& [field, member] : kPoolFields)
          sum.*member += c.*member;
      out += fmt::format(
          "{:<{}} {:>14} {:>8} {:>8.1f}% {:>26} {:>10} {:>10}{}{}\n", name, w, p.prefill_counts.prefilled_tokens,
          p.prefill_counts.chunks, 100 * p.prefill_counts.hit_share(),
          fmt::format("{}/{}/{}", sum.local_hits, sum.remote_hits, sum.misses), sum.evictions, sum.overflows,
          host ? fmt::format(" {:>24}", fmt::format("{}/{}/{}", sum.host_hits, sum.host_reads, sum.host_evictions))
               : "",
          handoff ? fmt::format(" {:>22}",
                                fmt::format("{} ({})", p.prefill_counts.handoffs, human_seconds(p.handoff_wait_s.mean)))
                  : "");
    }
  }
  if (result.ensemble) out += ensemble_table(result);
  return out + "\n" + verdict(result) + table_legend(result);
}

void write_outputs(const Scenario& sc, const RunResult& result, const fs::path& parts, const std::string& out_dir)
{
  const fs::path dir(out_dir);
  // summary.json marks a complete folder: an earlier run's goes first, so that a run killed while
  // it replaces the other files leaves a folder without one (incomplete), never one whose files
  // come from two runs.
  // An earlier run's files that this one does not rewrite go too (its report's plots, its
  // interrupted summary); summary.json is kRunFiles' first.
  static_assert(std::string_view(kRunFiles.front()) == "summary.json");
  std::error_code ec;
  for (const char* name : kRunFiles)
    fs::remove_all(dir / name, ec);
  concat(sc, parts, ".requests.csv", kRequestsHeader, result.run_id, dir / "requests.csv");
  concat(sc, parts, ".links.csv", kLinksHeader, result.run_id, dir / "links.csv");
  concat(sc, parts, ".holders.csv", kHoldersHeader, result.run_id, dir / "holders.csv");
  std::string report = "# xattn run: " + sc.name + ", run " + result.run_id + "\n\n";
  report += fmt::format(
      "Scenario `{}`, seed {}, model {}, profile {}, topology {} ({} GPUs), {} requester and {} holder "
      "instances (tp = {}), {} granularity, {} selection.\n\n",
      sc.file, sc.seed, sc.model.name, sc.profile.name, sc.topology->name(), sc.topology->gpu_count(),
      sc.requester_instances(), sc.holder_instances(), sc.tp, sc.granularity == Granularity::kStep ? "step" : "layer",
      sc.selection.sparse ? fmt::format("top-{}", sc.selection.top_k_tokens) : std::string("dense"));
  if (sc.full_step)
    report += fmt::format("The whole model's step (engine.step: full): serving instances of {} GPUs with "
                          "data-parallel attention, the routed experts over {} of them; TPOT as vLLM defines it, "
                          "(end - first token) / (tokens - 1) per finished request; EP dispatch and combine are "
                          "per GPU and MoE round (docs/cost-path.md, \"The serving step\").\n\n",
                          sc.dp_attention, sc.ep);
  report += "```\n" + comparison_table(result) + "```\n\n";
  report += result.ok ? "All invariants hold.\n\n" : "**An invariant failed**: see summary.json.\n\n";
  report +=
      "Files: `summary.json` (the figures above and the invariants), `requests.csv` (one row per finished request "
      "and policy), `links.csv` (bytes and utilisation per link direction that carried traffic), `holders.csv` "
      "(per holder GPU: kernels, busy fraction, sharing delay, copy-stream queueing). Columns: see "
      "sim/engine/README.md.\n";
  core::write_file_atomically((dir / "report.md").string(), report);
  core::write_file_atomically((dir / "summary.json").string(),
                              to_json(result).dump(2) + "\n"); // last: its presence means complete
}

} // namespace xattn::sim::engine
