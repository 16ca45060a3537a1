// The shaped request stream (source.hpp): copies overlaid with their ids apart, in arrival order.
#include "sim/engine/source.hpp"

#include "sim/engine/test_util.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <set>

using namespace xattn;
using namespace xattn::sim::engine;

namespace
{
// A trace of `sessions` one-request sessions, one every 10 ms, in a fresh folder; its scenario.
// Agents are numbered as the coding-agent importer once did, session << 32.
Scenario scenario_with_trace(int sessions, const std::vector<std::string>& sets)
{
  const auto dir = test::fresh_dir("source");
  std::ofstream trace(dir / "trace.jsonl");
  trace << "{\"xattn_trace\": 1, \"source\": \"source test\"}\n";
  for (int s = 0; s < sessions; ++s)
    trace << "{\"id\":" << s << ",\"t\":" << 0.01 * s << ",\"session\":" << s
          << ",\"agent\":" << (static_cast<std::uint64_t>(s) << 32)
          << ",\"parent\":null,\"block_tokens\":64,\"blocks\":[" << s << "],\"in\":64,\"out\":1}\n";
  trace.close();
  std::ofstream(dir / "s.yaml") << "name: t\nmodel: deepseek-v3.2\ntopology: testbed-ndr200\n"
                                   "instances: {requesters: [node0], holders: [node1-3]}\n"
                                   "workload: {trace: trace.jsonl}\n";
  return load_scenario((dir / "s.yaml").string(), sets);
}
} // namespace

TEST_CASE("source: copies keep sessions and agents apart past session 256")
{
  // 300 sessions x 3 copies: with agent = session << 32 and copy k adding k << 40, session 256 of
  // copy 0 was agent 2^40, the same as session 0 of copy 1.
  const Scenario sc = scenario_with_trace(300, {"workload.copies=3"});
  auto src = open_workload(sc);
  workloads::Request r;
  std::set<std::uint64_t> agents, sessions;
  std::uint64_t n = 0;
  double last = 0;
  while (src->next(r)) {
    CHECK(r.id == n);
    CHECK(r.arrival.value() >= last);
    last = r.arrival.value();
    agents.insert(r.agent);
    sessions.insert(r.session);
    ++n;
  }
  CHECK(n == 900);
  CHECK(agents.size() == 900);
  CHECK(sessions.size() == 900);
}

TEST_CASE("source: copies past the request-id layout are refused up front, naming the key")
{
  CHECK_THROWS_WITH(scenario_with_trace(1, {"workload.copies=65537"}),
                    Catch::Contains("workload.copies: must be at most 65536, got '65537' (copy ids take 16 bits of a "
                                    "request id (workloads/request_id.hpp))"));
  CHECK_NOTHROW(scenario_with_trace(1, {"workload.copies=65536"}));
}
