#include "calibrate/knee.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>
#include <vector>

namespace xattn::calibrate
{
namespace
{

// The hinge at `knee` is a line in z = max(0, k - knee); fit it, optionally without point `skip`.
Line hinge_fit(std::span<const double> k, std::span<const double> t, double knee, std::size_t skip, double& sse)
{
  Moments m;
  for (std::size_t i = 0; i < k.size(); ++i)
    if (i != skip) m.add(std::max(0.0, k[i] - knee), t[i]);
  sse = m.sse();
  return m.line();
}

} // namespace

Knee find_knee(std::span<const double> k, std::span<const double> t, double min_rise)
{
  std::set<double> distinct(k.begin(), k.end());
  if (distinct.size() < 3 || k.size() != t.size())
    throw std::domain_error("knee detection needs at least three distinct concurrency levels");
  std::vector<double> levels(distinct.begin(), distinct.end());

  Knee best;
  double best_sse = std::numeric_limits<double>::infinity();
  // Candidates leave at least two levels on the rising side, so the slope is measured.
  for (std::size_t c = 0; c + 2 < levels.size(); ++c) {
    double sse = 0;
    Line l;
    try {
      l = hinge_fit(k, t, levels[c], k.size(), sse);
    } catch (const std::domain_error&) {
      continue;
    }
    if (l.slope < 0) continue; // a falling tail is noise, not saturation
    if (sse < best_sse) {
      best_sse = sse;
      best.knee = levels[c];
      best.flat = l.intercept;
      best.slope = l.slope;
    }
  }
  double tmin = *std::min_element(t.begin(), t.end());
  double tmax = *std::max_element(t.begin(), t.end());
  best.found = std::isfinite(best_sse) && tmax > (1 + min_rise) * tmin;
  if (!best.found) {
    // Flat over the whole sweep: the elbow lies beyond it; report the largest k measured.
    double w = 0, wt = 0;
    for (double ti : t) {
      w += 1 / (ti * ti);
      wt += 1 / ti;
    }
    best.knee = levels.back();
    best.flat = wt / w;
    best.slope = 0;
  }
  const Knee fitted = best;
  auto predict = [&](std::size_t i) { return fitted(k[i]); };
  auto loo = [&](std::size_t i) {
    if (!fitted.found) return fitted.flat;
    double sse = 0;
    try {
      return hinge_fit(k, t, fitted.knee, i, sse)(std::max(0.0, k[i] - fitted.knee));
    } catch (const std::domain_error&) {
      return fitted(k[i]);
    }
  };
  best.quality = quality(t, predict, loo);
  return best;
}

} // namespace xattn::calibrate
