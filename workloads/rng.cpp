#include "workloads/rng.hpp"

#include "sim/core/check.hpp"
#include <algorithm>

#include <cmath>

namespace xattn::workloads
{
namespace
{
std::uint64_t splitmix64(std::uint64_t& x)
{
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
} // namespace

Rng::Rng(std::uint64_t seed)
{
  for (auto& w : s_)
    w = splitmix64(seed);
}

Rng Rng::derive(std::uint64_t seed, std::uint64_t stream)
{
  std::uint64_t x = seed ^ (stream * 0xd1b54a32d192ed03ULL);
  return Rng(splitmix64(x) ^ stream);
}

double Rng::exponential(double mean)
{
  return -std::log1p(-uniform()) * mean;
}

double Rng::normal()
{
  const double u1 = 1.0 - uniform(); // (0, 1]
  const double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

double Rng::lognormal(double mean, double cv)
{
  const double sigma2 = std::log1p(cv * cv);
  const double mu = std::log(mean) - sigma2 / 2;
  return std::exp(mu + std::sqrt(sigma2) * normal());
}

ZipfSampler::ZipfSampler(std::uint64_t n, double s) : cdf_(n)
{
  XATTN_CHECK(n > 0, "Zipf over an empty support");
  double sum = 0.0;
  for (std::uint64_t r = 0; r < n; ++r) {
    sum += std::pow(static_cast<double>(r + 1), -s);
    cdf_[r] = sum;
  }
  for (double& c : cdf_)
    c /= sum;
  cdf_.back() = 1.0;
}

std::uint64_t ZipfSampler::operator()(Rng& rng) const
{
  const double u = rng.uniform();
  return static_cast<std::uint64_t>(std::upper_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin());
}

double ZipfSampler::probability(std::uint64_t r) const
{
  return r == 0 ? cdf_[0] : cdf_[r] - cdf_[r - 1];
}

} // namespace xattn::workloads
