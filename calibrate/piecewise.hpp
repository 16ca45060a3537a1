// Piecewise α-β fits: NCCL (and any transport with protocols) switches how it moves data at some
// message sizes, so one line t = α + s/β does not fit a whole sweep. The sweep is cut into
// segments, each with its own line; the cuts (breakpoints) are found by dynamic programming over
// all cut positions, and the number of segments by the Bayesian information criterion.
//
// A transfer's curve must not fall with size (the engine prices every message on it), while a
// measured table does dip where a protocol switches. With `growing`, every segment's time grows
// (flat within the noise floor at least: curve_fit.hpp); with `monotone`, the curve never falls
// at a breakpoint either: a segment starts where its line meets the curve, or the curve holds its
// level across the fall (calibrate/README.md, "Falling times"). `flattened` and `adjustments`
// say where and by how much. Quality figures score the fitted curve against the times as measured.
#pragma once

#include "calibrate/curve_fit.hpp"
#include "calibrate/fit.hpp"

#include <span>
#include <string>
#include <vector>

namespace xattn::calibrate
{

struct PiecewiseOptions {
  int max_segments = 24;            ///< upper bound on segments tried (the information criterion picks)
  int min_points = 4;               ///< points per segment at least
  bool allow_negative_alpha = true; ///< when false, a segment whose line has α < 0 is not a candidate
  /// When true, a segment whose line does not grow with x is not a candidate (a transfer's time
  /// grows with its size within any one protocol: a flat piece is noise, and has no rate).
  bool growing = false;
  /// Relative scatter below which residuals count as measurement noise (timers and medians are
  /// never better than ~0.1%): without this floor, exact data would buy segments by fitting rounding.
  double noise_floor = 1e-3;
  /// Each segment's line minimises absolute relative error (MAPE's own loss) once the cuts are
  /// found; false: the least-squares line the cuts were found with.
  bool least_absolute = true;
  /// The curve never falls with x, at breakpoints too.
  bool monotone = false;
};

/// Segment k covers lower[k] <= x < lower[k+1] (the first from -inf, the last to +inf).
struct Piecewise {
  std::vector<double> breakpoints; ///< ascending; size = segments - 1; midway (geometric) between measured sizes
  std::vector<Line> lines;         ///< one per segment
  std::vector<std::size_t> counts; ///< points per segment
  Quality quality;
  /// Per segment, by bootstrap: the segment's points resampled with replacement (200 times, a
  /// fixed seed) and its line refitted as it was fitted; the cuts are kept.
  std::vector<LineCovariance> bootstrap;
  /// Per segment, the weighted least-squares formula sigma² (XᵀWX)⁻¹ (a cross-check of the bootstrap).
  std::vector<LineCovariance> analytic;
  /// With `monotone`: where the measured times fall with size and the curve holds its level (its
  /// pieces there are in `lines` too, with empty spreads in `bootstrap` and `analytic`).
  std::vector<Flattened> flattened;
  /// What was done to keep every segment growing and the curve non-decreasing, in words
  /// (segments numbered from 1, as a reader counts them).
  std::vector<std::string> adjustments;

  std::size_t segment(double x) const;
  double operator()(double x) const { return lines[segment(x)](x); }
};

/// Fits a piecewise line to (x, t); points need not be sorted. With max_segments = 1 this is the
/// plain weighted least-squares line. Leave-one-out refits the segment the point falls in, with
/// the breakpoints kept. Throws std::domain_error when there are too few distinct sizes.
Piecewise fit_piecewise(std::span<const double> x, std::span<const double> t, const PiecewiseOptions& opt = {});

} // namespace xattn::calibrate
