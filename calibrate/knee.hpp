// Knee detection for the holder elbows (the paper measured a pool of K = 8 copy streams, ≈ 8
// concurrent routed requesters). A probe runs k concurrent operations and records the makespan;
// while the GPU has room it stays flat, past the knee it grows. The model is a hinge,
//   t(k) = c                 for k <= knee
//   t(k) = c + s · (k - knee) for k >  knee,
// fitted by weighted least squares (weights 1/t²) with the knee searched over the measured k.
#pragma once

#include "calibrate/fit.hpp"

#include <span>

namespace xattn::calibrate
{

struct Knee {
  double knee = 0;    ///< the last concurrency before the makespan rises (a measured k)
  double flat = 0;    ///< c: makespan up to the knee (s)
  double slope = 0;   ///< s: added makespan per operation past the knee (s)
  bool found = false; ///< false: no rise within the sweep (knee = largest k measured)
  Quality quality;
  double operator()(double k) const { return flat + slope * (k > knee ? k - knee : 0.0); }
};

/// Fits the hinge to (k, t). `min_rise` is the relative rise over the whole sweep below which the
/// curve counts as flat (no knee inside it). Throws std::domain_error with fewer than 3 distinct k.
Knee find_knee(std::span<const double> k, std::span<const double> t, double min_rise = 0.10);

} // namespace xattn::calibrate
