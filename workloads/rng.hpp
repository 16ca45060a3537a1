// A seeded random source with fixed algorithms, so that a seed gives the same trace on every
// platform and standard library (std:: distributions are not portable across libstdc++ versions).
#pragma once

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
