// From measurements to a calibration profile: fit each series with the model its quantity needs,
// map the fitted parameters to profile keys, and write a profile that `extends:` a base for what
// was not measured, with the fit quality of every fitted quantity in its `fit:` section.
//
//   transfer  piecewise t = α + s/β,     fabrics.<class>.probe_<transport> = α of the smallest sizes (transport known)
//             non-decreasing             fabrics.<class>.block_rate (single-block; both IB classes) = β of the largest
//                                         bulk: .bandwidth, .nominal_bandwidth = β of the largest, .transfer = every
//                                         segment
//   kernel    t = fixed + a·T + b·T·R     holder.kernel_fixed, kernel_per_token, kernel_per_token_row
//   merge     t = fixed + c·P·R           merge.fixed, merge.per_row
//   splice    t = f·runs + c·tokens       splice.fixed, splice.per_token
//   elbows    hinge knee                  holder.copy_streams, holder.compute_concurrency
//   launch    line (recorded, no key)
#pragma once

#include "calibrate/knee.hpp"
#include "calibrate/measurements.hpp"
#include "calibrate/piecewise.hpp"
#include "calibrate/profile.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace xattn::calibrate
{

struct FitOptions {
  PiecewiseOptions piecewise;
  double knee_min_rise = 0.10; ///< relative rise below which an elbow sweep counts as flat
};

/// One fitted series.
struct FittedSeries {
  std::string name;
  Measured measured = Measured::kOther;
  std::string model;
  Quality quality;
  std::optional<Piecewise> line; ///< transfer, launch
  std::vector<double>
      coeffs; ///< kernel {fixed, per_token, per_token_row}; merge {fixed, per_row}; splice {fixed, per_token}
  std::optional<Knee> knee; ///< elbows
  /// Profile keys set, as (dotted key, value text with unit), e.g. ("fabrics.nvlink.bandwidth", "231.5GBps").
  std::vector<std::pair<std::string, std::string>> sets;
  std::vector<std::string> notes; ///< why a key was not set
  /// The spread of what it set (relative standard deviations, from a bootstrap of the fit) and
  /// their correlations; `spread_check` the same from the least-squares formula, for comparison.
  std::vector<Uncertainty> uncertainty;
  std::vector<Correlation> correlations;
  std::vector<Uncertainty> spread_check;
  /// Bulk transfers fitted with several segments: the curve (profile key `curve_key`).
  std::vector<CurveSegment> curve;
  std::string curve_key;

  /// The fitted time (s) at point x (same features as the series).
  double predict(const std::vector<double>& x) const;
};

/// The transfer (and launch) part of fit_series: a monotone piecewise fit (piecewise.hpp), then
/// the keys it sets. One path for every importer: what a series sets depends only on its fabric,
/// transport and dispatch, never on the file it came from (calibrate/fit_transfer.cpp).
void fit_transfer(FittedSeries& f, const Series& s, const PiecewiseOptions& opt);

/// Fits one series. Throws core::InputError (naming the series) when it cannot be fitted.
FittedSeries fit_series(const Series& s, const std::string& file, const FitOptions& opt = {});

/// Fits every fittable series of a file; two series setting one key is an InputError. A transfer
/// series of a single size is not fitted, and `notes` (when given) says so.
std::vector<FittedSeries> fit_measurements(const Measurements& m, const FitOptions& opt = {},
                                           std::vector<std::string>* notes = nullptr);

struct ProfileHeader {
  std::string name;        ///< profile name
  std::string base;        ///< `extends:` (empty: none; then the fit must set every key)
  std::string description; ///< where the numbers come from
};

/// The profile YAML text (profile_schema() compatible).
std::string render_profile(const std::vector<FittedSeries>& fits, const ProfileHeader& header);

/// Quantity text with a unit, as the profile parser reads it: "16.0123us", "25.1GBps".
std::string seconds_text(double s);
std::string rate_text(double bytes_per_s);
/// `v` with 6 significant digits and `unit` appended.
std::string fixed6(double v, const char* unit);

} // namespace xattn::calibrate
