// The capacity search (capacity.hpp) on a queue whose service rate is known: one requester that
// decodes one request at a time (engine.max_batch 1), identical requests arriving at a fixed
// interval, each routing its one chunk to an NVLink neighbour every step. That is a D/D/1 queue:
// it keeps up exactly while the arrival rate is at most 1 / S, S the time one request takes
// alone, and past it delivers 1 / S whatever is offered.
#include "sim/study/capacity.hpp"

#include "sim/engine/test_util.hpp"

#include <fmt/format.h>

using namespace xattn;
using namespace xattn::sim::engine::test;

namespace
{
constexpr int kRequests = 160, kTokens = 16;
constexpr double kGap = 0.01; // s between arrivals at load 1x

// The scenario and its trace in `dir`; returns the scenario's path.
std::string write_case(const std::filesystem::path& dir, int requests)
{
  std::string trace = "{\"xattn_trace\": 1, \"source\": \"capacity test\"}\n";
  for (int k = 0; k < requests; ++k)
    trace += request(k, k * kGap, k, 0, 32, kTokens);
  std::ofstream(dir / "trace.jsonl") << trace;
  std::ofstream(dir / "s.yaml") << "name: dd1\n"
                                   "model: {name: dsv3, layers: 61, heads: 128, kv_lora_rank: 512, rope_dim: 64}\n"
                                   "topology: testbed-ndr200\n"
                                   "instances: {requesters: [node0.gpu0], holders: [node0.gpu1]}\n"
                                   "corpus: {chunk_tokens: 2048}\n"
                                   "workload: {trace: trace.jsonl}\n"
                                   "policies: [route, fetch]\n"
                                   "engine: {max_batch: 1, overload_tolerance: 0.02, route_protocol: absorbed}\n";
  return (dir / "s.yaml").string();
}

sim::engine::PolicyResult run_at(const std::string& scenario, const std::filesystem::path& out,
                                 std::vector<std::string> sets)
{
  sim::engine::RunOptions opt;
  opt.out_dir = out.string();
  opt.progress = false;
  return sim::engine::run_scenario(sim::engine::load_scenario(scenario, sets), opt).result.policies.front().second;
}
} // namespace

TEST_CASE("capacity: the search lands on a D/D/1 queue's service rate, and the flag marks the policy past it")
{
  const auto dir = fresh_dir("capacity");
  // S: one request alone, arrival to last token (the idle test checks the step it repeats).
  const std::filesystem::path alone = dir / "alone";
  std::filesystem::create_directories(alone);
  const double S = run_at(write_case(alone, 1), alone / "out", {"policies=[route]"}).e2e_s.mean;
  REQUIRE(S > 0);
  // Arrivals every kGap / x s; the queue keeps up while kGap / x >= S: x* = kGap / S.
  const double x_star = kGap / S;
  INFO("S = " << S << " s, x* = " << x_star);

  const std::string scenario = write_case(dir, kRequests);
  // At 1.5 x*, route delivers 1 / 1.5 of what is offered: overloaded. Fetch splices the chunk once
  // and attends it from the cache: it keeps up.
  const std::string faster = fmt::format("workload.time_scale={:.17g}", 1.5 * x_star);
  const auto route = run_at(scenario, dir / "route", {faster, "policies=[route]"});
  CHECK(route.load.overloaded);
  CHECK(route.load.steady_share() == Approx(1 / 1.5).epsilon(0.04));
  const auto fetch = run_at(scenario, dir / "fetch", {faster, "policies=[fetch]"});
  CHECK_FALSE(fetch.load.overloaded);
  CHECK(fetch.load.steady_share() > 0.98);

  // The search: meets up to x*, fails past x* / (1 - tolerance), within its 2% precision.
  sim::study::CapacitySpec spec;
  spec.scenario = scenario;
  spec.policies = {"route"};
  spec.precision = 0.02;
  spec.out = (dir / "capacity").string();
  const sim::study::CapacityResult r = sim::study::run_capacity(spec, false);
  REQUIRE(r.policies.size() == 1);
  const sim::study::PolicyCapacity& c = r.policies.front();
  REQUIRE(c.answer);
  REQUIRE(c.next);
  CHECK(c.answer->load >= 0.97 * x_star);
  CHECK(c.answer->load <= x_star / 0.98 * 1.01);
  CHECK(c.next->load / c.answer->load <= 1.02);
  CHECK_THAT(c.next->why, Catch::Matchers::StartsWith("overloaded"));
  CHECK(r.base_requests_per_s == Approx(1 / kGap).epsilon(0.01));

  // An SLO on the request latency tighter than a queue-free request fails at every load.
  spec.slo = sim::study::Slo{"e2e_s.max", 0.5 * S};
  spec.out = (dir / "slo").string();
  spec.min_load = 1.0 / 8;
  const sim::study::CapacityResult none = sim::study::run_capacity(spec, false);
  CHECK_FALSE(none.policies.front().answer);
  CHECK_THAT(sim::study::capacity_text(spec, none), Catch::Matchers::Contains("route fails even at 0.125x"));
}

TEST_CASE("capacity: an SLO names a latency figure and a positive bound")
{
  CHECK(sim::study::parse_slo("tpot_s.mean=50ms", "x").max_s == Approx(0.05));
  CHECK(sim::study::parse_slo("step_latency_s.p99=2ms", "x").metric == "step_latency_s.p99");
  REQUIRE_THROWS_WITH(sim::study::parse_slo("tpot_s.p42=50ms", "command line"),
                      Catch::Matchers::Contains("unknown figure 'tpot_s.p42'") &&
                          Catch::Matchers::Contains("tpot_s.mean"));
  REQUIRE_THROWS_WITH(sim::study::parse_slo("tpot_s.mean", "command line"),
                      Catch::Matchers::Contains("expected FIGURE=BOUND"));
  REQUIRE_THROWS_WITH(sim::study::parse_slo("tpot_s.mean=50", "command line"), Catch::Matchers::Contains("--slo"));
  REQUIRE_THROWS_WITH(sim::study::parse_slo("tpot_s.mean=0s", "command line"), Catch::Matchers::Contains("positive"));
}
