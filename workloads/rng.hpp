// A seeded random source with fixed algorithms, so that a seed gives the same trace on every
// platform and standard library (std:: distributions are not portable across libstdc++ versions).
#pragma once

#include "sim/core/check.hpp"

#include <bit>
#include <cstdint>
#include <vector>

namespace xattn::workloads
{

/// xoshiro256** (Blackman & Vigna), seeded through splitmix64. Every derived draw below is
/// computed from raw 64-bit outputs with fixed arithmetic.
class Rng
{
public:
  explicit Rng(std::uint64_t seed);
  /// A raw 64-bit draw.
  std::uint64_t next();
  /// Uniform in [0, 1), 53 bits.
  double uniform();
  /// Uniform integer in [0, n), n > 0, unbiased (Lemire's multiply-and-reject).
  std::uint64_t below(std::uint64_t n);
  /// Exponential with the given mean (mean >= 0).
  double exponential(double mean);
  /// Standard normal (Box-Muller; the second value is dropped so each call costs two draws).
  double normal();
  /// Log-normal with the given mean and coefficient of variation (std/mean).
  double lognormal(double mean, double cv);
  /// An independent stream derived from this seed and `stream` (for per-agent randomness).
  static Rng derive(std::uint64_t seed, std::uint64_t stream);

private:
  std::uint64_t s_[4];
};

// The draws every step takes, inline (a step's block selection takes thousands).
inline std::uint64_t Rng::next()
{
  const std::uint64_t result = std::rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = std::rotl(s_[3], 45);
  return result;
}

inline double Rng::uniform()
{
  return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

inline std::uint64_t Rng::below(std::uint64_t n)
{
  XATTN_CHECK(n > 0, "Rng::below needs a positive bound");
  __extension__ using u128 = unsigned __int128; // GCC and Clang: a 64x64 -> 128 bit multiply
  u128 m = static_cast<u128>(next()) * n;
  auto low = static_cast<std::uint64_t>(m);
  if (low < n) {
    const std::uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      m = static_cast<u128>(next()) * n;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

/// Zipf(s) over ranks 0..n-1: P(rank r) ∝ 1 / (r+1)^s. Exact inverse-CDF table (n doubles) and a
/// binary search per draw; memory is O(n), independent of how many draws are taken.
class ZipfSampler
{
public:
  ZipfSampler(std::uint64_t n, double s);
  std::uint64_t operator()(Rng& rng) const;
  /// P(rank r), for tests and analytic expectations.
  double probability(std::uint64_t r) const;
  std::uint64_t size() const { return cdf_.size(); }

private:
  std::vector<double> cdf_;
};

} // namespace xattn::workloads
