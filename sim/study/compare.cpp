#include "sim/study/compare.hpp"

#include "sim/core/atomic_file.hpp"
#include "sim/core/units.hpp"
#include "sim/engine/figures.hpp"
#include "sim/engine/verdict.hpp"
#include "sim/study/table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>

namespace xattn::sim::study
{
namespace
{
using engine::PolicyResult;
using engine::RunResult;

struct Compared {
  std::string label;
  RunResult result;
};

// A point's name in the comparison: the label key's value, else every swept value.
std::string label_of(const Manifest& m, const ManifestPoint& p)
{
  std::string out;
  for (const auto& [k, v] : p.values) {
    if (!m.label.empty() && k != m.label) continue;
    out += (out.empty() ? "" : " / ") + v;
  }
  return out.empty() ? p.id : out;
}

const PolicyResult* policy_of(const RunResult& r, const std::string& policy)
{
  for (const auto& [name, p] : r.policies)
    if (name == policy) return &p;
  return nullptr;
}

// A figure as the comparison prints it, with the ensemble's 5-95% range where there is one.
std::string cell(const Compared& c, const std::string& policy, const char* figure)
{
  const PolicyResult& p = *policy_of(c.result, policy);
  const engine::FigureInfo& f = engine::figure(figure);
  const auto text = [&](double v) { return engine::format_figure(f, v); };
  std::string out = text(f.value(p));
  if (c.result.ensemble)
    if (const engine::Spread* s = c.result.ensemble->spread(policy, figure))
      out += " [" + text(s->p5) + ", " + text(s->p95) + "]";
  return out;
}

// The run table's verdict over the points: each point a "policy" of one run, its ensemble's
// spreads under its label (paired member by member: one seed, one set of profile draws).
std::string points_verdict(const std::vector<Compared>& points, const std::string& policy, const std::string& figure)
{
  RunResult r;
  const bool paired = std::all_of(points.begin(), points.end(), [&](const Compared& c) {
    return c.result.ensemble && c.result.ensemble->members == points.front().result.ensemble->members;
  });
  engine::Ensemble en;
  for (const Compared& c : points) {
    r.policies.emplace_back(c.label, *policy_of(c.result, policy));
    if (!paired) continue;
    en.members = c.result.ensemble->members;
    en.profile_drawn = c.result.ensemble->profile_drawn;
    en.ok = en.ok && c.result.ensemble->ok;
    for (const auto& [name, figures] : c.result.ensemble->policies)
      if (name == policy) en.policies.emplace_back(c.label, figures);
  }
  if (paired) r.ensemble = std::move(en);
  return engine::verdict(r, figure);
}

std::string compare_seed(const std::vector<Compared>& points, std::int64_t seed, bool ensemble)
{
  std::string out;
  std::size_t width = 5;
  for (const Compared& c : points)
    width = std::max(width, c.label.size());
  for (const auto& named : points.front().result.policies) {
    const std::string& policy = named.first; // clang before 16 cannot capture a structured binding
    const PolicyResult& first = named.second;
    if (!std::all_of(points.begin(), points.end(),
                     [&](const Compared& c) { return policy_of(c.result, policy) != nullptr; }))
      continue;
    const engine::Ensemble* en = points.front().result.ensemble ? &*points.front().result.ensemble : nullptr;
    out += fmt::format("\n{}, seed {}{}:\n", policy, seed,
                       ensemble && en != nullptr
                           ? fmt::format(" (each figure the run's own, then {} of its {} ensemble members)",
                                         en->range_is_ends() ? "[least, most]" : "[5%, 95%]", en->members)
                           : "");
    out += fmt::format("{:<{}}  {:>28}  {:>28}  {:>24}  {:>9}\n", "point", width, "TTFT mean", "TPOT mean",
                       "goodput (requests/s)", "delivered");
    for (const Compared& c : points) {
      const PolicyResult& p = *policy_of(c.result, policy);
      out += fmt::format("{:<{}}  {:>28}  {:>28}  {:>24}  {:>8.0f}%\n", c.label, width, cell(c, policy, "ttft_s.mean"),
                         cell(c, policy, "tpot_s.mean"), cell(c, policy, "goodput.requests_per_s"),
                         100 * p.load.steady_share());
    }
    out += points_verdict(points, policy, first.full_step ? "tpot_s.mean" : "step_latency_s.mean");
    if (first.ttft_s.mean > 0) out += points_verdict(points, policy, "ttft_s.mean");
  }
  return out;
}
} // namespace

std::string compare_points(const Manifest& m, const std::string& dir)
{
  // Points of one seed, in the manifest's order.
  std::map<std::int64_t, std::vector<Compared>> by_seed;
  std::vector<std::int64_t> seeds;
  for (const ManifestPoint& p : m.points) {
    std::optional<RunResult> r = point_result(dir, p.id);
    if (!r) continue;
    if (!by_seed.contains(p.seed)) seeds.push_back(p.seed);
    by_seed[p.seed].push_back({label_of(m, p), std::move(*r)});
  }
  std::string body;
  for (std::int64_t seed : seeds)
    if (by_seed[seed].size() >= 2) body += compare_seed(by_seed[seed], seed, m.ensemble > 0);
  if (body.empty()) return "";
  return fmt::format("comparison of the points of sweep {}{}:\n", m.name,
                     m.ensemble > 0 ? fmt::format(", each an ensemble of {} profile draws", m.ensemble) : "") +
         body;
}

std::string write_comparison(const Manifest& m, const std::string& dir)
{
  const std::string text = compare_points(m, dir);
  if (!text.empty()) core::write_file_atomically(std::filesystem::path(dir) / "comparison.txt", text);
  return text;
}

} // namespace xattn::sim::study
