// The lines of a segmented sweep, fitted under the constraints a transfer curve obeys: each
// segment grows (its slope at least what makes its time rise by the noise floor across it: a
// latency-bound run timed on a coarse clock is flat, and a flat line has no rate), and none has a
// negative latency (the profile writes each segment's as a time).
//
// The problem: minimise Σ_i |t_i - a_k(i) - b_k(i) x_i| / t_i (least absolute relative error,
// the error MAPE scores; least squares with `least_absolute` off) over every segment's (a_k, b_k).
// Constraints start inactive; each round solves the equality-constrained problem (a KKT system,
// 2K unknowns plus one row per active constraint) by iteratively reweighted least squares, and
// activates every constraint the solution breaks: a segment that does not grow gets its least
// slope, a segment whose latency is below zero gets 0. Constraints are never released, so it ends
// within 2K + 1 rounds. Plain doubles (scaled sizes and times), as in fit.hpp.
#pragma once

#include "calibrate/fit.hpp"

#include <cstddef>
#include <span>
#include <vector>

namespace xattn::calibrate
{

struct SegmentFitOptions {
  bool least_absolute = true; ///< least absolute relative error; false: weighted least squares
  bool growing = false;       ///< every slope at least its least slope
  bool nonnegative = false;   ///< no segment's latency below 0
  double noise_floor = 1e-3;
};

struct SegmentFit {
  std::vector<Line> lines;
  /// Segments held at their least slope (flat within the noise floor).
  std::vector<std::size_t> flat;
};

/// Fits one line per segment: segment k covers points [starts[k], starts[k + 1]) of (x, t), sorted
/// by x. Throws std::domain_error when a segment cannot fix a line (fewer than two distinct sizes).
SegmentFit fit_segments(std::span<const double> x, std::span<const double> t, std::span<const std::size_t> starts,
                        const SegmentFitOptions& opt);

/// Segment k's least slope: its time rises by `noise_floor` across its sizes.
double least_slope(std::span<const double> x, std::span<const double> t, std::size_t from, std::size_t to,
                   double noise_floor);

} // namespace xattn::calibrate
