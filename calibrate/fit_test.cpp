#include "calibrate/fit.hpp"
#include "calibrate/piecewise.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

using namespace xattn::calibrate;

namespace
{
// A log-spaced sweep 1 KiB .. 256 MiB of t = alpha + s / beta with multiplicative noise.
void sweep(double alpha, double beta, double noise, unsigned seed, std::vector<double>& x, std::vector<double>& t)
{
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n(0.0, noise);
  for (int i = 0; i <= 180; ++i) {
    double s = 1024.0 * std::pow(2.0, i / 10.0);
    x.push_back(s);
    t.push_back((alpha + s / beta) * (1 + n(rng)));
  }
}
} // namespace

TEST_CASE("calibrate: weighted least squares recovers alpha and beta within 1% under 2% noise")
{
  const double alpha = 16e-6, beta = 25e9; // the paper's IBGDA probe and single-block rate
  for (unsigned seed : {1u, 2u, 3u}) {
    std::vector<double> x, t;
    sweep(alpha, beta, 0.02, seed, x, t);
    Line l = fit_line(x, t);
    CHECK(std::abs(l.intercept / alpha - 1) < 0.01);
    CHECK(std::abs(1 / l.slope / beta - 1) < 0.01);
  }
}

TEST_CASE("calibrate: noise-free data gives exact parameters and zero errors")
{
  std::vector<double> x, t;
  sweep(8e-6, 450e9, 0.0, 7, x, t);
  PiecewiseOptions one;
  one.max_segments = 1;
  Piecewise p = fit_piecewise(x, t, one);
  REQUIRE(p.lines.size() == 1);
  CHECK(p.lines[0].intercept == Approx(8e-6).epsilon(1e-9));
  CHECK(1 / p.lines[0].slope == Approx(450e9).epsilon(1e-9));
  CHECK(p.quality.mape < 1e-9);
  CHECK(p.quality.loo_mape < 1e-9);
  CHECK(p.quality.r2 == Approx(1.0));
}

TEST_CASE("calibrate: leave-one-out MAPE is reported and exceeds the in-sample MAPE")
{
  std::vector<double> x, t;
  sweep(16e-6, 25e9, 0.03, 11, x, t);
  PiecewiseOptions one;
  one.max_segments = 1;
  Piecewise p = fit_piecewise(x, t, one);
  CHECK(p.quality.points == x.size());
  // Multiplicative N(0, 3%) noise: E|e| = 0.03 sqrt(2/pi) = 2.39%.
  CHECK(p.quality.mape == Approx(0.0239).margin(0.005));
  CHECK(p.quality.loo_mape > p.quality.mape);
  CHECK(p.quality.loo_mape < p.quality.mape * 1.1);
  CHECK(p.quality.max_error > p.quality.mape);
}

TEST_CASE("calibrate: the weights make the fit relative: small sizes keep their latency")
{
  // An ordinary least-squares line through this sweep would put alpha wherever the big sizes like;
  // with weights 1/t² the tiny-message latency is recovered.
  std::vector<double> x{1e3, 1e4, 1e5, 1e6, 1e7, 1e8}, t;
  for (double s : x)
    t.push_back(10e-6 + s / 20e9);
  t[5] *= 1.05; // one large outlier
  Line l = fit_line(x, t);
  CHECK(l.intercept == Approx(10e-6).epsilon(0.02));
}

TEST_CASE("calibrate: the multilinear model recovers kernel-time coefficients")
{
  std::vector<std::vector<double>> rows;
  std::vector<double> t;
  std::mt19937_64 rng(5);
  std::normal_distribution<double> n(0.0, 0.01);
  for (double T : {256.0, 512.0, 1024.0, 2048.0, 4096.0, 8192.0})
    for (double R : {16.0, 64.0, 128.0, 256.0, 512.0}) {
      rows.push_back({1.0, T, T * R});
      t.push_back((2e-6 + 0.384e-9 * T + 5.44e-12 * T * R) * (1 + n(rng)));
    }
  std::vector<double> c = fit_linear_model(rows, t);
  CHECK(c[0] == Approx(2e-6).epsilon(0.05));
  CHECK(c[1] == Approx(0.384e-9).epsilon(0.05));
  CHECK(c[2] == Approx(5.44e-12).epsilon(0.02));
}

TEST_CASE("calibrate: degenerate input is refused, not fitted")
{
  std::vector<double> x{4096, 4096, 4096}, t{1e-5, 1.1e-5, 0.9e-5};
  CHECK_THROWS_AS(fit_line(x, t), std::domain_error);
  std::vector<std::vector<double>> rows{{1, 2}, {1, 2}, {1, 2}};
  CHECK_THROWS_AS(fit_linear_model(rows, t), std::domain_error);
}
