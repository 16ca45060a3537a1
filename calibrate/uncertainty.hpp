// How sure a profile is of its values, and profiles drawn from that uncertainty.
//
// A profile may give a relative standard deviation for any of its scalar values (`uncertainty:`,
// keyed by the value's dotted profile key, each with the source of its spread) and correlations
// between them (`correlations:`); `xattn calibrate fit` writes both for what it fitted. A draw
// multiplies each uncertain value by exp(sigma x), x a standard normal correlated as given: the
// median is the profile's value, every draw stays positive, and for small sigma the relative
// standard deviation is sigma. A fabric's `bandwidth` draw scales its whole transfer curve; its
// probe draws shift the curve with it (curve latencies are relative to the probe).
#pragma once

#include "calibrate/profile.hpp"

#include <Eigen/Core>

#include <span>
#include <string_view>
#include <vector>

namespace xattn::calibrate
{

/// The dotted profile keys a profile may give an uncertainty for, in a fixed order.
std::span<const std::string> uncertain_keys();
bool is_uncertain_key(std::string_view key);
/// A profile's value at one of uncertain_keys() (SI units).
double value_of(const Profile& p, std::string_view key);

class ProfileSampler
{
public:
  /// Throws core::InputError (naming the profile) when its correlations are not a valid
  /// correlation matrix.
  explicit ProfileSampler(const Profile& p);
  /// Uncertain values (0: the profile gives points only).
  std::size_t dimensions() const { return sigma_.size(); }
  /// A profile drawn with `z`: dimensions() independent standard normals. REQUIRES: z.size() ==
  /// dimensions().
  Profile draw(std::span<const double> z) const;

private:
  const Profile& base_;
  std::vector<std::size_t> param_; ///< index into uncertain_keys()
  std::vector<double> sigma_;
  Eigen::MatrixXd chol_; ///< lower Cholesky factor of the correlation matrix
};

} // namespace xattn::calibrate
