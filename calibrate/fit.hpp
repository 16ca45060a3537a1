// The fitter's math: weighted least squares with weights 1/t² (it minimises relative error, the
// error MAPE scores), piecewise fits with a breakpoint search where a protocol changes, and the
// quality figures every fitted quantity carries (R², MAPE, max error, leave-one-out MAPE).
//
// Plain doubles here: x is whatever the feature is (bytes for transfers, tokens and rows for
// kernels) and t is seconds. The fitter (fitter.hpp) gives the results their units.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <vector>

namespace xattn::calibrate
{

/// How well a model predicts the points it was fitted on. Errors are relative (|pred - t| / t), as
/// fractions (0.05 = 5%).
struct Quality {
  std::size_t points = 0;
  double r2 = 0;        ///< weighted (1/t²) coefficient of determination, in [0, 1] for these fits
  double mape = 0;      ///< mean relative error
  double max_error = 0; ///< largest relative error
  double loo_mape = 0;  ///< leave-one-out: each point predicted by a fit without it
};

/// A straight line t = intercept + slope · x. For transfers: intercept = α (s), slope = 1/β (s/B).
struct Line {
  double intercept = 0;
  double slope = 0;
  double operator()(double x) const { return intercept + slope * x; }
};

/// Where a fitted transfer curve does not follow measured times that fall with size: from a
/// breakpoint where a segment starts below the level the curve has reached, the curve holds that
/// level (rising by the noise floor only) until the segment's line catches up.
struct Flattened {
  double at_B = 0;             ///< the breakpoint where the times fall
  double from_B = 0, to_B = 0; ///< the sizes over which the level is held: [from, to)
  std::size_t points = 0;      ///< measured points in [from, to)
  double fell = 0;             ///< how far the segment starts below the level, a fraction of the level (0.2 = 20%)
  double max_change = 0;       ///< the largest |curve - measured| / measured over those points
};

/// The spread of a fitted line's parameters: variances and their covariance.
struct LineCovariance {
  double var_intercept = 0, var_slope = 0, cov = 0;
};

/// Weighted sums of one set of points, w = 1/t² (a segment of a sorted sweep). Adding and removing
/// points is O(1), which the breakpoint search and leave-one-out both need.
class Moments
{
public:
  void add(double x, double t, double sign = 1.0);
  void remove(double x, double t) { add(x, t, -1.0); }
  /// The weighted least-squares line; throws std::domain_error when the points cannot fix a line
  /// (fewer than two distinct x).
  Line line() const;
  /// Weighted residual sum of squares of line() (relative squared errors summed).
  double sse() const;
  double count() const { return n_; }
  /// The covariance of line()'s parameters when the relative residuals have variance `sigma2`:
  /// sigma2 (XᵀWX)⁻¹, W = 1/t². Zero when the points fix no line.
  LineCovariance covariance(double sigma2) const;

private:
  double n_ = 0, w_ = 0, wx_ = 0, wxx_ = 0, wt_ = 0, wxt_ = 0;
};

/// Weighted least-squares line through (x, t), weights 1/t².
Line fit_line(std::span<const double> x, std::span<const double> t);
/// The line of least absolute relative error, Σ |t - a - b x| / t (the error MAPE scores; robust to
/// the odd outlier a repeated measurement leaves), by iteratively reweighted least squares from
/// fit_line. Throws std::domain_error as fit_line does.
Line fit_line_lad(std::span<const double> x, std::span<const double> t);

/// Quality of `predict` on (x, t); `loo(i)` predicts point i from a fit without it.
Quality quality(std::span<const double> t, const std::function<double(std::size_t)>& predict,
                const std::function<double(std::size_t)>& loo);

/// Relative error statistics of predictions against measurements (for held-out checks).
struct Errors {
  double mape = 0, max_error = 0;
};
Errors relative_errors(std::span<const double> t, std::span<const double> predicted);

/// Weighted (1/t²) least squares for t = Σ c_k · f_k over `features` (row i: f_k of point i). A
/// column of ones gives an intercept. Throws std::domain_error when the features are degenerate.
std::vector<double> fit_linear_model(const std::vector<std::vector<double>>& features, std::span<const double> t);

} // namespace xattn::calibrate
