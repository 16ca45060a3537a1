// Policy variants: a policy of the registry under parameters of its own, run under a label. Each
// is checked against an independent answer: ski-rental's purchase step from its rule by hand, the
// predicate's prior against the engine key it overrides.
#include "sim/engine/test_util.hpp"
#include "sim/policy/policy.hpp"
#include "sim/policy/test_need.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace xattn;
using namespace xattn::sim;
using namespace xattn::sim::engine::test;

namespace
{
// One request, one 2048-token chunk across the spine (ski_rental_test.cpp's adversary).
const std::string kScenario = policy::test::spine_chunk_scenario("variants");
} // namespace

TEST_CASE("ski-rental's buy_at: it buys once the routing spent passes that many times the buy cost")
{
  CallCost c;
  c.route.transfer = core::Seconds(1.0);
  c.fetch.transfer = core::Seconds(3.5);
  c.local.prefill = core::Seconds(10.0);
  const policy::test::PricedNeed need{0, 7, c};
  // a = 0.5: 1.75 s of routing allowed; the second route would spend 2 s.
  auto half = policy::make(*policy::find("ski-rental"), {{"buy_at", 0.5}});
  CHECK(half->decide(need) == Primitive::kRoute);
  CHECK(half->decide(need) == Primitive::kFetch);
  // a = 2: 7 s allowed; the eighth route would spend 8 s.
  auto twice = policy::make(*policy::find("ski-rental"), {{"buy_at", 2.0}});
  for (int i = 0; i < 7; ++i)
    CHECK(twice->decide(need) == Primitive::kRoute);
  CHECK(twice->decide(need) == Primitive::kFetch);
}

TEST_CASE("a ski-rental variant runs under its label beside the policy itself, within 1 + 1/a of the oracle")
{
  nlohmann::json one = run(kScenario + "policies: [route, fetch]\n", request(0, 0.0, 0, 0, 32, 1));
  const double r = step_mean(one, "route"), f = step_mean(one, "fetch");
  const double a = 0.5;
  const int n = static_cast<int>(std::floor(a * f / r)) + 1; // the step at which the variant buys
  const int classic = static_cast<int>(std::floor(f / r)) + 1;
  INFO("route step " << r << " s, fetch step " << f << " s, the variant buys at step " << n);
  REQUIRE(n >= 2);
  REQUIRE(n < classic);
  const std::string variants =
      "policy_variants:\n  ski-half: {policy: ski-rental, buy_at: " + std::to_string(a) + "}\n";
  nlohmann::json s =
      run(kScenario + variants + "policies: [ski-half, ski-rental, oracle]\n", request(0, 0.0, 0, 0, 32, n));
  CHECK(s["policies"]["ski-half"]["decisions"]["route"] == n - 1);
  CHECK(s["policies"]["ski-half"]["decisions"]["fetch"] == 1);
  CHECK(s["policies"]["ski-rental"]["decisions"]["fetch"] == 0); // the classic rule is still renting
  const auto total = [&](const char* p) { return step_mean(s, p) * n; };
  CHECK(total("ski-half") <= (1 + 1 / a) * total("oracle"));
  // --policy picks a variant by its label.
  nlohmann::json picked =
      run(kScenario + variants + "policies: [route]\n", request(0, 0.0, 0, 0, 32, n), {"policies=[ski-half]"});
  CHECK(picked["policies"]["ski-half"]["decisions"] == s["policies"]["ski-half"]["decisions"]);
}

TEST_CASE("a variant's prior_steps is the run's prior, as engine.predicate_prior_steps is for the others")
{
  // Before any request finished, the predicate expects prior_steps later calls: with one it
  // routes, with a million it fetches.
  const std::string trace = request(0, 0.0, 0, 0, 32, 8);
  const std::string variants = "policy_variants:\n"
                               "  pred-short: {policy: predicate, prior_steps: 1}\n"
                               "  pred-long: {policy: predicate, prior_steps: 1000000}\n";
  nlohmann::json v = run(kScenario + variants + "policies: [pred-short, pred-long]\n", trace);
  nlohmann::json shortp = run(kScenario + "policies: [predicate]\n", trace, {"engine.predicate_prior_steps=1"});
  nlohmann::json longp = run(kScenario + "policies: [predicate]\n", trace, {"engine.predicate_prior_steps=1000000"});
  CHECK(v["policies"]["pred-short"]["decisions"] == shortp["policies"]["predicate"]["decisions"]);
  CHECK(v["policies"]["pred-long"]["decisions"] == longp["policies"]["predicate"]["decisions"]);
  CHECK(v["policies"]["pred-short"]["step_latency_s"] == shortp["policies"]["predicate"]["step_latency_s"]);
  CHECK(v["policies"]["pred-short"]["decisions"] != v["policies"]["pred-long"]["decisions"]);
}
