// The session-forecast policy: the predicate with the later turns of the request's session in its
// reuse, on needs priced by hand; and through the engine, on the quickstart's agentic sessions.
#include "sim/engine/test_util.hpp"
#include "sim/policy/policy.hpp"
#include "sim/policy/test_need.hpp"

#include <catch2/catch.hpp>

using namespace xattn;
using namespace xattn::sim;

namespace
{

// A route of 0.5 s a call; a fetch of 2 s once, then 0.1 s a call to read the chunk again
// (CallCost::reuse); a re-prefill far dearer. With n later calls the route costs 0.5 (1 + n) and
// the fetch 2 + 0.1 n: the fetch is cheaper past n = 1.5 / 0.4 = 3.75.
policy::test::PricedNeed session_need(double session_reuse)
{
  CallCost c;
  c.route.transfer = core::Seconds(0.1);
  c.route.compute = core::Seconds(0.4);
  c.fetch.transfer = core::Seconds(1.5);
  c.fetch.splice = core::Seconds(0.5);
  c.reuse = core::Seconds(0.1);
  c.local.prefill = core::Seconds(100);
  return {0, 0, c, {}, session_reuse};
}

Primitive decide(const char* policy, const policy::Need& n)
{
  return policy::make(*policy::find(policy))->decide(n);
}

} // namespace

TEST_CASE("session-forecast: the later turns of the session count as reuse, where the predicate sees none")
{
  // No later turn expected: both route (0.5 s against 2 s).
  CHECK(decide("predicate", session_need(0)) == Primitive::kRoute);
  CHECK(decide("session-forecast", session_need(0)) == Primitive::kRoute);
  // 3.5 later calls: route 2.25 s, fetch 2.35 s: both still route.
  CHECK(decide("session-forecast", session_need(3.5)) == Primitive::kRoute);
  // 4 later calls: route 2.5 s, fetch 2.4 s: the forecast fetches, the predicate (which counts
  // only the requests live now, none here) routes.
  CHECK(decide("session-forecast", session_need(4)) == Primitive::kFetch);
  CHECK(decide("predicate", session_need(4)) == Primitive::kRoute);
}

TEST_CASE("session-forecast: through the engine, sessions of many turns over one context fetch it where the "
          "predicate routes")
{
  // One requester, one holder across the spine. Sessions 0-3, then 4-7 from 30 s: 20 turns each,
  // a turn a second, every turn reading its session's own 2,048-token chunk and decoding 2 tokens.
  // The predicate sees only the live request's few steps; from 30 s the forecast sees sessions
  // that went on for 20 turns, each reading all of the one before.
  const std::string scenario =
      "name: sessions\nmodel: deepseek-v3\n" + engine::test::two_leaf_topology(1) +
      "instances: {requesters: [node0.gpu0], holders: [node2.gpu0]}\n"
      "corpus: {chunk_tokens: 2048}\nworkload: {trace: trace.jsonl}\npolicies: [predicate, session-forecast]\n";
  std::string t;
  int id = 0;
  for (int phase = 0; phase < 2; ++phase)
    for (int turn = 0; turn < 20; ++turn)
      for (int s = 4 * phase; s < 4 * phase + 4; ++s)
        t += engine::test::request(id++, 30.0 * phase + turn + 0.01 * (s % 4), s, 32 * s, 32, 2);
  const nlohmann::json sum = engine::test::run(scenario, t);
  const auto& pred = sum["policies"]["predicate"];
  const auto& fore = sum["policies"]["session-forecast"];
  for (const auto* p : {&pred, &fore}) {
    CHECK((*p)["requests"].get<int>() == 160);
    CHECK((*p)["decisions"]["local"].get<int>() == 0);
  }
  CHECK(sum["invariants"]["ok"].get<bool>());
  INFO("predicate: " << pred["decisions"].dump() << "; session-forecast: " << fore["decisions"].dump());
  // The predicate routes nearly every call (it sees the live requests' few steps); the forecast
  // fetches each of the later four sessions' chunks once more than it does, then finds them
  // cached in their later turns: fewer routed calls, more cached ones.
  CHECK(fore["decisions"]["fetch"].get<int>() >= pred["decisions"]["fetch"].get<int>() + 4);
  CHECK(fore["decisions"]["route"].get<int>() < pred["decisions"]["route"].get<int>());
  CHECK(fore["decisions"]["cached"].get<int>() > pred["decisions"]["cached"].get<int>());
  // The figures docs/cost-path.md quotes ("What the session forecast changes").
  CHECK(pred["decisions"]["route"].get<int>() == 280);
  CHECK(pred["decisions"]["cached"].get<int>() == 39);
  CHECK(fore["decisions"]["route"].get<int>() == 120);
  CHECK(fore["decisions"]["cached"].get<int>() == 195);
}
