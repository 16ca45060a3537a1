#include "sim/core/units.hpp"
#include "sim/engine/ensemble.hpp"
#include "sim/engine/figures.hpp"
#include "sim/engine/verdict.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace xattn::sim::engine
{
namespace
{

// The figures of the table, as their cells and notes name them.
struct Shown {
  const char* figure;
  const char* words;
};
constexpr Shown kShown[] = {
    {"step_latency_s.mean", "step mean"}, {"step_latency_s.p99", "step p99"}, {"e2e_s.p50", "E2E p50"}};
constexpr Shown kDecisions[] = {
    {"decisions.route", "route"}, {"decisions.fetch", "fetch"}, {"decisions.local", "local"}};

// A spread whose ends are this far apart, or that leaves out the base run by this share of it, is split.
constexpr double kSplit = 3;
constexpr double kOutside = 0.25;

std::string seconds(double s)
{
  return core::format_seconds(core::Seconds(s));
}

// "its local calls range 8815 to 16229 (this run 10385)": the decision whose count moved most
// over the members, relative to the base run's.
std::string moved_decision(const Ensemble& e, const std::string& policy, const PolicyResult& base)
{
  std::string out;
  double widest = 0;
  for (const Shown& d : kDecisions) {
    const Spread* s = e.spread(policy, d.figure);
    if (s == nullptr || s->values.empty()) continue;
    const auto [lo, hi] = std::minmax_element(s->values.begin(), s->values.end());
    const double b = figure(d.figure).value(base), width = (*hi - *lo) / std::max(b, 1.0);
    if (width > widest) {
      widest = width;
      out = fmt::format("; its {} calls range {:.0f} to {:.0f} (this run {:.0f})", d.words, *lo, *hi, b);
    }
  }
  return widest > 0.01 ? out : "";
}

} // namespace

std::string ensemble_table(const RunResult& result)
{
  const Ensemble& e = *result.ensemble;
  std::string out = fmt::format("\nensemble of {} members ({}), median [{}]:\n", e.members,
                                e.profile_drawn ? "profiles drawn from the profile's uncertainty, distinct seeds"
                                                : "the profile gives points only: distinct seeds alone",
                                e.range_is_ends() ? "min, max: too few members for a 5-95% range" : "5%, 95%");
  const int w = policy_column(result);
  out += fmt::format("{:<{}}", "policy", w);
  for (const Shown& shown : kShown)
    out += fmt::format(" {:>30}", shown.words);
  out += fmt::format(" {:>5}\n", "ok");
  std::string notes;
  for (const auto& policy : e.policies) {
    const std::string& name = policy.first;
    std::string row = fmt::format("{:<{}}", name, w);
    const PolicyResult* base = result.find(name);
    for (const Shown& shown : kShown) {
      const Spread* s = e.spread(name, shown.figure);
      row += s == nullptr
                 ? fmt::format(" {:>30}", "-")
                 : fmt::format(" {:>30}", seconds(s->p50) + " [" + seconds(s->p5) + ", " + seconds(s->p95) + "]");
      if (s == nullptr || base == nullptr) continue;
      const double b = figure(shown.figure).value(*base);
      const bool outside = b * (1 - kOutside) > s->p95 || b * (1 + kOutside) < s->p5;
      const bool wide = s->p5 > 0 && s->p95 > kSplit * s->p5;
      if (!outside && !wide) continue;
      std::string values;
      for (double v : s->values)
        values += (values.empty() ? "" : ", ") + seconds(v);
      notes += wrap(fmt::format("note: {}'s {} splits over the members ({}; this run {}){}: the figure is "
                                "sensitive to a drawn parameter, next to a threshold or on a saturated resource "
                                "(docs/confidence.md, \"Split members\").",
                                name, shown.words, values, seconds(b), moved_decision(e, name, *base)),
                    100);
    }
    out += row + fmt::format(" {:>5}\n", e.ok ? "yes" : "NO");
  }
  return out + notes;
}

} // namespace xattn::sim::engine
