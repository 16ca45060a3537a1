// `xattn calibrate check MEASURED`: the calibration loop judged on data it did not see. Each
// transfer series is split in two (alternate sizes, or a seeded random half); the fitter fits one
// half and writes a profile, and every point of the other half runs through the engine, as
// `xattn validate` runs it. Beside the engine's error stands the data's own **noise floor**: each
// held-out point predicted by linear interpolation between its measured neighbours in the fit
// half, the best any smooth model of these measurements could be expected to do. A group (one
// series: a fabric, a transport) fails when its error is more than `max_over_floor` times its
// floor.
#pragma once

#include "calibrate/fitter.hpp"
#include "validate/validator.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace xattn::validate
{

enum class Split { kParity, kRandom };

struct CheckOptions {
  Split split = Split::kParity;
  std::uint64_t seed = 1;      ///< kRandom: the shuffle's seed
  double max_over_floor = 1.5; ///< a group passes when MAPE <= this x max(floor, kFloorMin)
  std::string base = std::string(calibrate::kDefaultProfile); ///< the fitted profile extends it
  calibrate::FitOptions fit;
};

/// A floor below this (0.1%, the timer resolution the fitter assumes) counts as this: exact
/// synthetic data must not demand an exact engine.
inline constexpr double kFloorMin = 1e-3;

/// The two halves of `m`: transfer series split by `opt.split` (by size order: even ranks fit,
/// odd ranks held out; or a seeded half), every other series kept whole in the fit half.
struct Halves {
  calibrate::Measurements fit, held;
};
Halves split_measurements(const calibrate::Measurements& m, const CheckOptions& opt);

/// Per held-out point, the noise floor's prediction: linear interpolation in size between the
/// nearest fit-half sizes below and above it in the same series (the mean time where a size
/// repeats); nullopt where the point lies outside the fit half's sizes.
std::vector<std::optional<double>> interpolate_floor(const calibrate::Series& fit, const calibrate::Series& held);

struct CheckReport {
  /// The engine against the held-out half; each group carries its floor and limit, each point its
  /// floor prediction (PointResult::floor_s).
  ValidationReport validation;
  std::string profile_text; ///< the profile fitted on the fit half
  bool ok = false;          ///< every group within its limit and the engine's invariants held
};

/// Splits, fits, writes the profile to `profile_path`, and runs the held-out half through the
/// engine. Throws core::InputError when the data cannot be split or fitted.
CheckReport check_calibration(const calibrate::Measurements& m, const CheckOptions& opt,
                              const std::string& profile_path, bool progress = false);

/// The terminal table: per group MAPE, floor, ratio and verdict, then the worst points.
std::string check_table(const CheckReport& r, double max_over_floor, std::size_t worst = 10);

} // namespace xattn::validate
