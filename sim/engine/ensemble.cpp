#include "sim/engine/ensemble.hpp"

#include "calibrate/uncertainty.hpp"
#include "sim/engine/figures.hpp"
#include "sim/model/confidence.hpp"
#include "workloads/rng.hpp"

namespace xattn::sim::engine
{

std::vector<Scenario> ensemble_members(const Scenario& sc, int n)
{
  std::vector<Scenario> out;
  if (n <= 0) return out;
  const calibrate::ProfileSampler sampler(sc.profile);
  workloads::Rng rng = workloads::Rng::derive(sc.seed, 0xe75e);
  std::vector<double> z(sampler.dimensions());
  for (int k = 0; k < n; ++k) {
    Scenario m = sc;
    m.seed = sc.seed + 1 + static_cast<std::uint64_t>(k);
    for (double& x : z)
      x = rng.normal();
    if (sampler.dimensions() > 0) m.profile = sampler.draw(z);
    out.push_back(std::move(m));
  }
  return out;
}

Ensemble summarise_ensemble(const std::vector<std::vector<std::pair<std::string, PolicyResult>>>& members,
                            bool profile_drawn, std::span<const FigureInfo> spread)
{
  Ensemble e;
  e.members = static_cast<int>(members.size());
  e.profile_drawn = profile_drawn;
  if (members.empty()) return e;
  for (std::size_t k = 0; k < members.size(); ++k)
    for (const auto& [name, r] : members[k]) {
      e.ok = e.ok && r.invariants.ok;
      for (const std::string& what : r.invariants.problems)
        if (e.problems.size() < 10) e.problems.push_back("member " + std::to_string(k) + ", " + name + ": " + what);
      if (!r.invariants.ok && r.invariants.problems.empty() && e.problems.size() < 10)
        e.problems.push_back("member " + std::to_string(k) + ", " + name + ": " +
                             std::to_string(r.invariants.step_bound_violations) + " steps below their idle bound");
    }
  for (std::size_t p = 0; p < members.front().size(); ++p) {
    std::vector<std::pair<std::string, Spread>> figs;
    for (const FigureInfo& f : spread) {
      if (!f.used_for(kSpread)) continue;
      std::vector<double> v;
      for (const auto& run : members)
        v.push_back(f.value(run[p].second));
      std::vector<double> sorted = v;
      const Quantiles q = quantiles(sorted);
      figs.emplace_back(std::string(f.path), Spread{q.p5, q.p50, q.p95, std::move(v)});
    }
    e.policies.emplace_back(members.front()[p].first, std::move(figs));
  }
  return e;
}

} // namespace xattn::sim::engine
