// The load-aware predicate: its decisions on needs priced by hand, with the load a live scheduler
// would see, against the plain predicate's; and through the engine.
#include "sim/engine/test_util.hpp"
#include "sim/policy/policy.hpp"
#include "sim/policy/test_need.hpp"

#include <catch2/catch.hpp>

using namespace xattn;
using namespace xattn::sim;
using namespace xattn::sim::engine::test;

namespace
{

// A need priced by hand: a route of `transfer` + `compute`, a fetch of `moved` + `splice`, a
// re-prefill far dearer; no reuse; the load given.
policy::test::PricedNeed loaded_need(double transfer, double compute, double moved, double splice,
                                     const policy::Load& load)
{
  CallCost c;
  c.route.transfer = core::Seconds(transfer);
  c.route.compute = core::Seconds(compute);
  c.fetch.transfer = core::Seconds(moved);
  c.fetch.splice = core::Seconds(splice);
  c.local.prefill = core::Seconds(100);
  return {0, 0, c, load};
}

Primitive decide(const char* policy, const policy::Need& n)
{
  return policy::make(*policy::find(policy))->decide(n);
}

} // namespace

TEST_CASE("load-aware: the predicate's prices with the holder's kernels and the path's busiest link as they are")
{
  // Idle: it decides as the predicate. A route of 0.1 + 0.5 = 0.6 s against a fetch of
  // 0.3 + 0.2 = 0.5 s: both fetch.
  const auto idle = loaded_need(0.1, 0.5, 0.3, 0.2, {});
  CHECK(decide("predicate", idle) == Primitive::kFetch);
  CHECK(decide("load-aware", idle) == Primitive::kFetch);
  // A fetch of 0.6 + 0.2 = 0.8 s against the same route (0.6 s): both route; with the holder's
  // GPU overfilled 1.5 times the routed kernel takes 0.75 s, the route 0.85 s: the load-aware one
  // fetches, the predicate does not see it.
  const policy::Load busy_holder{.route_slowdown = 1.5};
  const auto queued = loaded_need(0.1, 0.5, 0.6, 0.2, busy_holder);
  CHECK(decide("predicate", queued) == Primitive::kRoute);
  CHECK(decide("load-aware", queued) == Primitive::kFetch);
  // Half the path's busiest link in use by one flow: a newcomer gets max(1 - 0.5, 1/2) of it, so
  // both transfers take twice as long: route 0.2 + 0.5 = 0.7 s, fetch 0.6 + 0.2 = 0.8 s. The
  // fetch that won idle (0.5 s against 0.6 s) now loses: the route moves less over the busy link.
  const auto half = loaded_need(0.1, 0.5, 0.3, 0.2, {.path_busy = 0.5, .path_flows = 1});
  CHECK(decide("predicate", half) == Primitive::kFetch);
  CHECK(decide("load-aware", half) == Primitive::kRoute);
  // A full link of three flows: a newcomer gets a quarter (an equal share), four times as long:
  // route 0.4 + 0.5 = 0.9 s, fetch 1.2 + 0.2 = 1.4 s.
  const auto full = loaded_need(0.1, 0.5, 0.3, 0.2, {.path_busy = 1, .path_flows = 3});
  CHECK(decide("load-aware", full) == Primitive::kRoute);
  // A lightly used link leaves its free capacity: 90% free, route 0.1 / 0.9 + 0.5 = 0.611 s,
  // fetch 0.3 / 0.9 + 0.2 = 0.533 s: it still fetches.
  const auto light = loaded_need(0.1, 0.5, 0.3, 0.2, {.path_busy = 0.1, .path_flows = 9});
  CHECK(decide("load-aware", light) == Primitive::kFetch);
  // The holder's copy streams all taken, one copy's time ahead of it per stream: the fetch waits
  // one transfer's time before its own, 0.3 + 0.3 + 0.2 = 0.8 s against the route's 0.6 s.
  const auto copies = loaded_need(0.1, 0.5, 0.3, 0.2, {.fetch_queue = 1});
  CHECK(decide("predicate", copies) == Primitive::kFetch);
  CHECK(decide("load-aware", copies) == Primitive::kRoute);
}

TEST_CASE("load-aware: through the engine, beside the predicate, every request served and every figure consistent")
{
  // Six requesters out of phase on two holders, each decoding 16 requests of 8 contexts.
  const std::string scenario =
      "name: loaded\nmodel: deepseek-v3\n" + two_leaf_topology(1) +
      "instances: {requesters: [node0.gpu0-5], holders: [node0.gpu7, node2.gpu0]}\n"
      "corpus: {chunk_tokens: 2048}\nworkload: {trace: trace.jsonl}\npolicies: [predicate, load-aware]\n"
      "engine: {route_protocol: absorbed}\n";
  std::string t;
  for (int k = 0; k < 6; ++k)
    for (int j = 0; j < 16; ++j)
      t += request(16 * k + j, 5e-3 * k, k, 32 * 8 * (j % 8), 32 * 8, 4);
  const nlohmann::json s = run(scenario, t);
  for (const char* p : {"predicate", "load-aware"}) {
    INFO(p);
    CHECK(s["policies"][p]["requests"].get<int>() == 96);
    CHECK(s["invariants"][p]["ok"].get<bool>());
  }
}
