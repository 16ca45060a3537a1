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
