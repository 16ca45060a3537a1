#include "sim/engine/verdict.hpp"

#include "sim/core/units.hpp"
#include "sim/engine/figures.hpp"
#include "sim/model/confidence.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace xattn::sim::engine
{
namespace
{

// Within this relative distance of the best, a policy ties with it.
constexpr double kTie = 0.005;

std::string words(const std::string& path)
{
  return std::string(figure(path).words);
}

// A ratio to three significant figures, trailing zeros kept: 1.10x, 41.6x, 123x.
std::string times(double r)
{
  return r < 10 ? fmt::format("{:.2f}x", r) : r < 100 ? fmt::format("{:.1f}x", r) : fmt::format("{:.0f}x", r);
}

// A resource busy this share of the run or more is where the loser's queue grows.
constexpr double kSaturated = 0.5;

// The member-by-member ratio of `policy`'s figure to the best's, its 5-95% range; empty without
// an ensemble or where a member's best figure is zero.
std::string ratio_range(const RunResult& r, const std::string& figure, const std::string& best,
                        const std::string& policy)
{
  if (!r.ensemble) return "";
  const Spread* a = r.ensemble->spread(policy, figure);
  const Spread* b = r.ensemble->spread(best, figure);
  if (a == nullptr || b == nullptr || a->values.size() != b->values.size() || a->values.empty()) return "";
  std::vector<double> ratios;
  for (std::size_t k = 0; k < a->values.size(); ++k) {
    if (!(b->values[k] > 0)) return "";
    ratios.push_back(a->values[k] / b->values[k]);
  }
  const Quantiles q = quantiles(ratios);
  return fmt::format(" ({} over the {} ensemble members: {} to {})", r.ensemble->range_is_ends() ? "range" : "5-95%",
                     ratios.size(), times(q.p5), times(q.p95));
}

// Under the whole step: the part of the step (attention, GEMMs, MoE) that grew most over the
// best's, or empty.
std::string step_growth(const PolicyResult& p, const PolicyResult& best)
{
  if (!p.full_step || !best.full_step) return "";
  struct Part {
    const char* name;
    double mine, theirs;
  };
  const Part parts[] = {{"attention", p.split_attention_s, best.split_attention_s},
                        {"GEMMs", p.split_gemm_s, best.split_gemm_s},
                        {"MoE exchange (waits for the group's slowest GPU included)", p.split_moe_s, best.split_moe_s}};
  const Part* most = nullptr;
  for (const Part& part : parts)
    if (part.mine > part.theirs && (most == nullptr || part.mine - part.theirs > most->mine - most->theirs))
      most = &part;
  if (most == nullptr) return "";
  return fmt::format("; its step grew most in the {}: {} against {}", most->name,
                     core::format_seconds(core::Seconds(most->mine)),
                     core::format_seconds(core::Seconds(most->theirs)));
}

// Where the policy's queue grew: its busiest resource, when busy half the run or more.
std::string held_back(const PolicyResult& p)
{
  if (p.busiest.empty() || p.busiest_share < kSaturated) return "";
  return fmt::format(", held back by {} (busy {:.0f}% of the run)", p.busiest, 100 * p.busiest_share);
}

// "route is overloaded: ..." for a policy that did not keep up with the load.
std::string overloaded(const std::string& name, const PolicyResult& p)
{
  return fmt::format("{} is overloaded: it delivered {:.0f}% of the output tokens offered over the second half of "
                     "the arrivals ({:.0f} of {:.0f} per s), {:.0f} requests waiting at the last arrival; its "
                     "latencies are a growing queue's and are not ranked{}{}",
                     name, 100 * p.load.steady_share(), p.load.steady_delivered_tokens_per_s,
                     p.load.steady_offered_tokens_per_s, p.load.backlog_requests, held_back(p),
                     p.invariants.ok ? "" : "; an invariant failed too");
}

// The verdict when no policy kept up: each one's delivered share, once.
std::string all_overloaded(const RunResult& r)
{
  const LoadFigures& any = r.policies.front().second.load;
  std::string text = fmt::format("verdict: no policy keeps up with this load ({:.0f} output tokens/s offered over "
                                 "the second half of the arrivals), so none is ranked by latency. Each delivered:",
                                 any.steady_offered_tokens_per_s);
  for (std::size_t i = 0; i < r.policies.size(); ++i) {
    const auto& [name, p] = r.policies[i];
    text += fmt::format("{} {} {:.0f}%{}", i == 0 ? "" : ";", name, 100 * p.load.steady_share(), held_back(p));
  }
  return text + ". Lower the load (workload.time_scale below 1) to compare them.";
}

} // namespace

int policy_column(const RunResult& result)
{
  std::size_t w = 10;
  for (const auto& p : result.policies)
    w = std::max(w, p.first.size());
  return static_cast<int>(w);
}

// Breaks `text` into lines of at most `width` characters at spaces, each ending in a newline.
std::string wrap(const std::string& text, std::size_t width)
{
  std::string out, line;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line = "  " + word;
    } else {
      line += (line.empty() ? "" : " ") + word;
    }
    start = end + 1;
  }
  return out + line + "\n";
}

std::string headline_figure(const RunResult& result)
{
  const bool full =
      std::any_of(result.policies.begin(), result.policies.end(), [](const auto& p) { return p.second.full_step; });
  return full ? "tpot_s.mean" : "step_latency_s.mean";
}

std::string verdict(const RunResult& result, const std::string& on)
{
  if (result.policies.empty()) return "verdict: no policy finished.\n";
  const std::string figure = on.empty() ? headline_figure(result) : on;
  std::vector<double> value; // each policy's headline figure, in the policies' order
  for (const auto& [name, p] : result.policies)
    value.push_back(engine::figure(figure).value(p));
  if (result.policies.size() == 1) {
    const auto& [name, p] = result.policies.front();
    return wrap(fmt::format("verdict: only {} ran ({} {}); name more policies (--policy NAME, repeatable; "
                            "`xattn run --describe` lists them) to compare.{}",
                            name, words(figure), core::format_seconds(core::Seconds(value.front())),
                            p.load.overloaded ? " " + overloaded(name, p) + "." : ""),
                100);
  }
  // The best among the policies that kept up with the load and whose invariants held (all of
  // those that kept up when none held). A policy that did not keep up is never ranked by latency.
  const bool any_ok = std::any_of(result.policies.begin(), result.policies.end(),
                                  [](const auto& q) { return q.second.invariants.ok && !q.second.load.overloaded; });
  std::size_t best = result.policies.size();
  for (std::size_t i = 0; i < result.policies.size(); ++i) {
    const PolicyResult& p = result.policies[i].second;
    if (!p.load.overloaded && (p.invariants.ok || !any_ok) &&
        (best == result.policies.size() || value[i] < value[best]))
      best = i;
  }
  if (best == result.policies.size()) return wrap(all_overloaded(result), 100);
  const auto& [best_name, best_result] = result.policies[best];
  const double b = value[best];
  const auto ties = [&](std::size_t i) {
    return i != best && !result.policies[i].second.load.overloaded && std::abs(value[i] - b) <= kTie * b;
  };
  std::string text =
      fmt::format("verdict: {} is best on {} ({}{}).", best_name, words(figure), core::format_seconds(core::Seconds(b)),
                  best_result.invariants.ok ? "" : "; its invariants failed too");
  std::vector<std::string> tied;
  for (std::size_t i = 0; i < result.policies.size(); ++i)
    if (ties(i)) tied.push_back(result.policies[i].first);
  if (!tied.empty()) {
    std::string list;
    for (std::size_t i = 0; i < tied.size(); ++i)
      list += (i == 0 ? "" : i + 1 == tied.size() ? " and " : ", ") + tied[i];
    text += fmt::format(" {} {} with it (within {:g}%).", list, tied.size() == 1 ? "ties" : "tie", 100 * kTie);
  }
  for (std::size_t i = 0; i < result.policies.size(); ++i) {
    if (i == best || ties(i)) continue;
    const auto& [name, p] = result.policies[i];
    if (p.load.overloaded) {
      text += " " + overloaded(name, p) + ".";
      continue;
    }
    const double v = value[i];
    const std::string margin = b > 0 ? times(v / b) : core::format_seconds(core::Seconds(v - b));
    // Only a policy whose invariants failed can be faster than the best (it was not eligible).
    text += fmt::format(" {} is {} {}{}", name, v < b ? "faster," : margin, v < b ? margin + " of it" : "slower",
                        ratio_range(result, figure, best_name, name));
    if (!p.invariants.ok) text += ", an invariant failed";
    if (const std::string held = held_back(p); !held.empty())
      text += held;
    else if (!p.busiest.empty())
      text += fmt::format(", no resource near saturation (the busiest, {}, {:.0f}% of the run)", p.busiest,
                          100 * p.busiest_share);
    text += step_growth(p, best_result) + ".";
  }
  return wrap(text, 100);
}

std::string table_legend(const RunResult& result)
{
  std::string text =
      "legend: a step is one decode iteration of one request over every layer; wire bytes are the bytes "
      "moved between GPUs, each transfer once whatever its hops; route/fetch/local/cached counts the chunk calls each "
      "primitive served (cached: the chunk already sat in the requester's cache; calls whose chunk is "
      "on the requester's own GPU are not counted); ok: every invariant held (summary.json, "
      "\"invariants\"); delivered: the output tokens decoded over those offered across the second half "
      "of the arrival window, OVER where the policy fell short by more than engine.overload_tolerance "
      "(its backlog grew: overloaded); busiest: the link, holder or requester busy the largest share of the run.";
  // The request figures as vLLM's benchmark defines them, and the run's goodput bounds.
  std::string bounds;
  if (!result.policies.empty())
    for (const RequestBound& b : result.policies.front().second.goodput.bounds)
      bounds += (bounds.empty() ? "" : ", ") +
                fmt::format("{} <= {}", request_figure_name(b.figure), core::format_seconds(core::Seconds(b.max_s)));
  text += " TTFT: arrival to the end of the step that made the first token; TPOT: (last token - first token) / "
          "(tokens - 1) per request; ITL: every gap between two tokens of a request; E2E: arrival to last token; "
          "goodput: the requests within " +
          (bounds.empty() ? std::string("no bound (the scenario's goodput is [])") : bounds) +
          ", as a share of those that made a token and per simulated second.";
  if (result.any_prefill())
    text += " Prefill: the prompt tokens prefilled and the chunks they ran in; hit share: the prompts' block "
            "references found prefilled in a pool; blocks local/remote/miss: found in the requester's own pool, in "
            "another instance's (served by cross-instance calls), or prefilled; evictions: chunks pools dropped to "
            "make room; overflows: placements that left a pool over its bound, every other chunk in use.";
  if (result.any_host_tier())
    text += " Host hits/reads/evicted: block references found in the requester's own host tier, chunks read back "
            "from it over PCIe, chunks it dropped to make room.";
  if (result.any_handoff())
    text += " Handoffs (mean wait): prompts whose KV went from the prefill pool to their requester instance, and "
            "the mean time from the end of a prefill to its KV's last byte landed.";
  return wrap(text, 100);
}

} // namespace xattn::sim::engine
