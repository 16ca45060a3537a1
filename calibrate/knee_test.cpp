#include "calibrate/knee.hpp"

#include <catch2/catch.hpp>

#include <random>
#include <vector>

using namespace xattn::calibrate;

TEST_CASE("calibrate: knee detection finds the copy-stream elbow at 8")
{
  std::mt19937_64 rng(8);
  std::normal_distribution<double> n(0.0, 0.02);
  std::vector<double> k, t;
  for (int rep = 0; rep < 3; ++rep)
    for (int s = 1; s <= 24; ++s) {
      k.push_back(s);
      t.push_back((100e-6 + (s > 8 ? 12.5e-6 * (s - 8) : 0.0)) * (1 + n(rng)));
    }
  Knee kn = find_knee(k, t);
  CHECK(kn.found);
  CHECK(kn.knee == 8);
  CHECK(kn.flat == Approx(100e-6).epsilon(0.02));
  CHECK(kn.slope == Approx(12.5e-6).epsilon(0.05));
  CHECK(kn.quality.mape < 0.03);
  CHECK(kn.quality.loo_mape >= kn.quality.mape);
}

TEST_CASE("calibrate: a flat sweep reports no knee inside it")
{
  std::vector<double> k{1, 2, 4, 8, 16}, t{40e-6, 40.4e-6, 39.8e-6, 40.2e-6, 40.1e-6};
  Knee kn = find_knee(k, t);
  CHECK_FALSE(kn.found);
  CHECK(kn.knee == 16);
  CHECK(kn.flat == Approx(40.1e-6).epsilon(0.01));
}

TEST_CASE("calibrate: knee detection needs three levels")
{
  std::vector<double> k{1, 2}, t{1e-5, 2e-5};
  CHECK_THROWS_AS(find_knee(k, t), std::domain_error);
}
