#include "sim/model/sweep.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

using namespace xattn;
using Catch::Matchers::Contains;

namespace
{
// The paper's prototype: these cases check its published decisions (a 3 ms splice, break-even
// near 80 later steps).
struct Fixture {
  sim::ModelSpec model = sim::load_model("deepseek-v3");
  calibrate::Profile profile = calibrate::load_profile(calibrate::kPaperProfile);
};
double sum_breakdown(const nlohmann::json& b)
{
  double s = 0;
  for (const auto& [k, v] : b.items())
    s += v.get<double>();
  return s;
}
} // namespace

TEST_CASE("predict: the issue's decode case routes in tens of microseconds")
{
  Fixture f;
  sim::PredictRequest r;
  r.fabric = core::FabricClass::kIbSpine;
  r.mq = 256;
  r.ct = 4096;
  sim::Prediction p = sim::predict(f.model, f.profile, r);
  nlohmann::json j = sim::to_json(p, f.model, f.profile);
  CHECK(j["decision"] == "route");
  double route = j["cost_s"]["route"].get<double>();
  CHECK(route > 10e-6);
  CHECK(route < 100e-6);
  for (const char* prim : {"route", "fetch", "local"})
    CHECK(sum_breakdown(j["breakdown_s"][prim]) == Approx(j["cost_s"][prim].get<double>()));
  CHECK(j["breakdown_s"]["fetch"]["splice"].get<double>() >= 3e-3);
  // Past the reported break-even the decision flips to fetch.
  double n = j["break_even_reuse"].get<double>();
  r.reuse = std::ceil(n);
  CHECK(sim::to_json(sim::predict(f.model, f.profile, r), f.model, f.profile)["decision"] == "fetch");
  r.reuse = std::floor(n);
  CHECK(sim::to_json(sim::predict(f.model, f.profile, r), f.model, f.profile)["decision"] == "route");
}

TEST_CASE("predict: under the production profile the splice is microseconds and fetch breaks even within a few steps")
{
  Fixture f;
  f.profile = calibrate::load_profile(calibrate::kDefaultProfile);
  sim::PredictRequest r;
  r.fabric = core::FabricClass::kIbSpine;
  r.mq = 256;
  r.ct = 4096;
  nlohmann::json j = sim::to_json(sim::predict(f.model, f.profile, r), f.model, f.profile);
  // One layer: a 3 us launch, 4096 x 256 B of RoPE dims at 3.35 TB/s x 0.895, 20 us / 61 of insertion.
  CHECK(j["breakdown_s"]["fetch"]["splice"].get<double>() ==
        Approx(3e-6 + 4096 * 256 / (3.35e12 * 0.895) + 20e-6 / 61).epsilon(1e-9));
  CHECK(j["decision"] == "route");
  CHECK(j["break_even_reuse"].get<double>() < 10);
}

TEST_CASE("predict: layers scale every term, and the break-even does not move")
{
  Fixture f;
  sim::PredictRequest one, step;
  step.layers = 61;
  auto a = sim::predict(f.model, f.profile, one);
  auto b = sim::predict(f.model, f.profile, step);
  CHECK(b.route.total().value() == Approx(61 * a.route.total().value()));
  CHECK(b.local.total().value() == Approx(61 * a.local.total().value()));
  CHECK(b.decision.break_even_reuse == Approx(a.decision.break_even_reuse));
}

TEST_CASE("predict: bad flags name the flag")
{
  Fixture f;
  sim::PredictRequest r;
  r.mq = 0;
  CHECK_THROWS_WITH(sim::predict(f.model, f.profile, r), "command line: error: --mq: must be greater than zero");
  r = {};
  r.layers = 62;
  CHECK_THROWS_WITH(sim::predict(f.model, f.profile, r), Contains("--layers: must be between 1 and the model's 61"));
  r = {};
  r.blocks = 4;
  CHECK_THROWS_WITH(sim::predict(f.model, f.profile, r),
                    Contains("--blocks: model 'deepseek-v3' has no sparse indexer"));
  sim::ModelSpec sparse = sim::load_model("deepseek-v3.2");
  r.holders = 8;
  CHECK_THROWS_WITH(sim::predict(sparse, f.profile, r), Contains("4 selected runs cannot cover 8 holders"));
  r = {};
  r.rails = 0;
  CHECK_THROWS_WITH(sim::predict(f.model, f.profile, r), Contains("--rails: must be at least 1"));
}

TEST_CASE("predict: --rails spreads holders over the requester's NICs on InfiniBand only")
{
  Fixture f;
  sim::PredictRequest r;
  r.holders = 8;
  const double one_nic = sim::predict(f.model, f.profile, r).route.transfer.value();
  r.rails = 8;
  sim::Prediction p = sim::predict(f.model, f.profile, r);
  // A NIC per holder instead of one for all: the dispatch rate instead of an eighth of the NIC.
  const auto& ib = f.profile.fabric(core::FabricClass::kIbSpine);
  const double rate = std::min(ib.block_rate.value() * f.profile.route_blocks, ib.bandwidth.value());
  CHECK(p.route.transfer.value() == Approx(one_nic * (ib.bandwidth.value() / 8) / rate));
  CHECK(sim::to_json(p, f.model, f.profile)["inputs"]["rails"] == 8);
  CHECK_THAT(sim::to_table(p, f.model, f.profile), Contains("8 holders over 8 rails"));
  r.fabric = core::FabricClass::kNvlink; // one node: no rails to stripe over
  CHECK(sim::predict(f.model, f.profile, r).path.lanes == 1);
}

TEST_CASE("predict: the reuse sweep's crossover is the closed-form break-even")
{
  Fixture f;
  sim::PredictRequest r;
  auto expected = sim::predict(f.model, f.profile, r).decision.break_even_reuse;
  sim::SweepResult s = sim::sweep(f.model, f.profile, r, sim::parse_sweep("reuse=0:1000"));
  REQUIRE(s.crossovers.size() == 1);
  CHECK(s.crossovers[0].before == sim::Primitive::kRoute);
  CHECK(s.crossovers[0].after == sim::Primitive::kFetch);
  CHECK(s.crossovers[0].at == Approx(expected).epsilon(1e-6));
}

TEST_CASE("predict: an integer sweep finds the first value with the new decision")
{
  Fixture f;
  sim::PredictRequest r;
  r.reuse = 50; // below the break-even at M_q 256: route wins small batches, fetch large ones
  sim::SweepResult s = sim::sweep(f.model, f.profile, r, sim::parse_sweep("mq=1:65536"));
  REQUIRE(s.crossovers.size() == 1);
  CHECK(s.crossovers[0].before == sim::Primitive::kRoute);
  CHECK(s.crossovers[0].after == sim::Primitive::kFetch);
  for (const sim::Crossover& c : s.crossovers) {
    auto at = r;
    at.mq = c.at;
    auto before = r;
    before.mq = c.at - 1;
    CHECK(sim::predict(f.model, f.profile, at).decision.choice == c.after);
    CHECK(sim::predict(f.model, f.profile, before).decision.choice == c.before);
  }
  CHECK_THROWS_WITH(sim::parse_sweep("foo=1:2"), Contains("unknown variable 'foo'"));
  CHECK_THROWS_WITH(sim::parse_sweep("mq=4:2"), Contains("TO must be greater than FROM"));
  CHECK_THROWS_WITH(sim::parse_sweep("mq"), Contains("expected VAR=FROM:TO"));
}
