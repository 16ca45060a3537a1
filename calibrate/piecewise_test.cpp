#include "calibrate/piecewise.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

using namespace xattn::calibrate;

TEST_CASE("calibrate: the breakpoint search finds a known protocol switch")
{
  // Below 64 KiB a low-latency protocol (alpha 5 us, beta 4 GB/s); above it a bandwidth protocol
  // (alpha 30 us, beta 40 GB/s): a 48% jump at the switch, 1% noise. Sizes step by 2^(1/8), so the cut lies between the
  // two sizes around 64 KiB.
  std::mt19937_64 rng(42);
  std::normal_distribution<double> n(0.0, 0.01);
  std::vector<double> x, t;
  const double cut = 65536;
  for (int i = 0; i <= 120; ++i) {
    double s = 1024.0 * std::pow(2.0, (i + 0.5) / 8.0);
    x.push_back(s);
    t.push_back((s < cut ? 5e-6 + s / 4e9 : 30e-6 + s / 40e9) * (1 + n(rng)));
  }
  Piecewise p = fit_piecewise(x, t);
  REQUIRE(p.lines.size() == 2);
  REQUIRE(p.breakpoints.size() == 1);
  CHECK(p.breakpoints[0] > cut / std::pow(2.0, 1.0 / 8));
  CHECK(p.breakpoints[0] < cut * std::pow(2.0, 1.0 / 8));
  CHECK(p.lines[0].intercept == Approx(5e-6).epsilon(0.03));
  CHECK(1 / p.lines[0].slope == Approx(4e9).epsilon(0.03));
  CHECK(p.lines[1].intercept == Approx(30e-6).epsilon(0.05));
  CHECK(1 / p.lines[1].slope == Approx(40e9).epsilon(0.01));
  CHECK(p.quality.mape < 0.012);
  CHECK(p.quality.loo_mape < 0.013);
  CHECK(p(1024) == Approx(5e-6 + 1024 / 4e9).epsilon(0.02));
}

TEST_CASE("calibrate: a straight sweep stays one segment")
{
  std::mt19937_64 rng(3);
  std::normal_distribution<double> n(0.0, 0.01);
  std::vector<double> x, t;
  for (int i = 0; i <= 100; ++i) {
    double s = 1024.0 * std::pow(2.0, i / 6.0);
    x.push_back(s);
    t.push_back((16e-6 + s / 25e9) * (1 + n(rng)));
  }
  Piecewise p = fit_piecewise(x, t);
  CHECK(p.lines.size() == 1);
}

TEST_CASE("calibrate: repeated sizes are never split between segments")
{
  std::vector<double> x, t;
  for (int i = 0; i < 12; ++i)
    for (int r = 0; r < 3; ++r) { // three repetitions per size
      double s = 1024.0 * std::pow(4.0, i);
      x.push_back(s);
      t.push_back((i < 6 ? 4e-6 + s / 2e9 : 30e-6 + s / 50e9) * (1 + 0.01 * (r - 1)));
    }
  Piecewise p = fit_piecewise(x, t);
  REQUIRE(p.breakpoints.size() >= 1);
  for (double b : p.breakpoints)
    for (double s : x)
      CHECK(b != s);
  CHECK(p.quality.mape < 0.02);
}

TEST_CASE("calibrate: too few points is an error")
{
  std::vector<double> x{1024}, t{1e-5};
  CHECK_THROWS_AS(fit_piecewise(x, t), std::domain_error);
}

namespace
{
// A protocol switch at 256 KiB that makes messages 20% faster: below it 8 us + s / 10 GB/s, above
// it 80% of that time at the switch plus s / 40 GB/s; 0.3% noise.
constexpr double kCut = 262144;
double dip_truth(double s)
{
  const double below = 8e-6 + s / 10e9;
  return s < kCut ? below : 0.8 * (8e-6 + kCut / 10e9) + (s - kCut) / 40e9;
}
} // namespace

TEST_CASE("calibrate: a protocol dip is fitted as a non-decreasing curve, and the fit says where")
{
  std::mt19937_64 rng(11);
  std::normal_distribution<double> noise(0.0, 0.003);
  std::vector<double> x, t;
  for (int i = 0; i <= 120; ++i) {
    const double s = 1024.0 * std::pow(2.0, i / 8.0);
    x.push_back(s);
    t.push_back(dip_truth(s) * (1 + noise(rng)));
  }
  // The step down is 20% of the time just below the switch.
  REQUIRE(dip_truth(kCut) / dip_truth(kCut * 0.999) == Approx(0.8).epsilon(0.01));
  PiecewiseOptions opt;
  opt.growing = opt.monotone = true;
  opt.allow_negative_alpha = false;
  const Piecewise p = fit_piecewise(x, t, opt);
  // Never falls, on a fine grid across every size.
  double last = 0;
  for (double s = 1024; s < 1.1 * x.back(); s *= 1.001) {
    CHECK(p(s) >= last * (1 - 1e-12));
    last = p(s);
  }
  // Says where: one held breakpoint at the switch, the data falling there by about 20%.
  REQUIRE(p.flattened.size() == 1);
  const Flattened& f = p.flattened[0];
  CHECK(f.at_B > kCut / std::pow(2.0, 1.0 / 8));
  CHECK(f.at_B < kCut * std::pow(2.0, 1.0 / 8));
  // At the breakpoint (the midpoint between the sizes around the switch), the truth falls by 18%.
  const double below = 8e-6 + f.at_B / 10e9, after = 0.8 * (8e-6 + kCut / 10e9) + (f.at_B - kCut) / 40e9;
  CHECK(f.fell == Approx(1 - after / below).margin(0.02));
  CHECK(f.from_B <= f.at_B);
  CHECK(f.to_B >= f.at_B);
  CHECK(f.points > 0);
  CHECK(f.max_change > 0.05);
  CHECK(f.max_change < 0.3);
  REQUIRE_FALSE(p.adjustments.empty());
  // Elsewhere it is the curve: within 1% of the truth at every measured size outside the run.
  std::size_t outside = 0;
  for (double s : x) {
    if (s >= f.from_B && s < f.to_B) continue;
    ++outside;
    INFO(s);
    CHECK(std::abs(p(s) - dip_truth(s)) / dip_truth(s) < 0.01);
  }
  CHECK(outside > 100); // the run is a few sizes, not a segment
  // Without `monotone` the same fit follows the dip: the curve falls at the switch.
  opt.monotone = false;
  const Piecewise free = fit_piecewise(x, t, opt);
  CHECK(free.flattened.empty());
  CHECK(free(f.at_B * 1.001) < free(f.at_B * 0.999));
}

TEST_CASE("calibrate: a flat, quantised segment gets a finite rate whichever way its noise leans")
{
  // Latency-bound sizes timed on a 1 us clock: the same 8 us for 12 sizes, then a bandwidth regime.
  std::vector<double> x, t;
  for (int i = 0; i < 12; ++i)
    x.push_back(1024.0 * (i + 1)), t.push_back(8e-6);
  for (int i = 0; i < 12; ++i) {
    const double s = 1e6 * (i + 1);
    x.push_back(s), t.push_back(8e-6 + s / 20e9);
  }
  PiecewiseOptions opt;
  opt.growing = opt.monotone = true;
  opt.allow_negative_alpha = false;
  for (double lean : {-1e-15, 0.0, 1e-15}) { // one part in 10^15, either way, at the flat run's end
    std::vector<double> tt = t;
    tt[11] *= 1 + lean;
    const Piecewise p = fit_piecewise(x, tt, opt);
    INFO(lean);
    REQUIRE(p.lines.size() == 2);
    // Its time grows by the noise floor (0.1%) across the flat run: s/B over 11 KiB = 8 ns.
    CHECK(1 / p.lines[0].slope == Approx(11.0 * 1024 / (1e-3 * 8e-6)).epsilon(1e-6));
    CHECK(1 / p.lines[1].slope == Approx(20e9).epsilon(1e-3));
  }
}
