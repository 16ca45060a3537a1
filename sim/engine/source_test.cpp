// The shaped request stream (source.hpp): copies overlaid with their ids apart, in arrival order.
#include "sim/engine/source.hpp"

#include "sim/engine/test_util.hpp"

#include "sim/core/memory.hpp"
#include "workloads/request_id.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <set>
#include <tuple>

using namespace xattn;
using namespace xattn::sim::engine;

namespace
{
// A trace of `sessions` one-request sessions, one every 10 ms (`per_tick` at a time), in a fresh
// folder; its scenario. Agents are numbered as the coding-agent importer once did, session << 32.
Scenario scenario_with_trace(int sessions, const std::vector<std::string>& sets, int per_tick = 1)
{
  const auto dir = test::fresh_dir("source");
  std::ofstream trace(dir / "trace.jsonl");
  trace << "{\"xattn_trace\": 1, \"source\": \"source test\"}\n";
  for (int s = 0; s < sessions; ++s)
    trace << "{\"id\":" << s << ",\"t\":" << 0.01 * (s / per_tick) << ",\"session\":" << s
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

namespace
{
using Key = std::tuple<double, std::uint64_t, std::uint64_t>; // arrival, session, agent

// Every copy's stream merged by hand, as the overlay is defined: copy k is the workload shifted by
// k x copy_offset, ties to the lower copy, then time-scaled, with its ids in copy k's range.
std::vector<Key> merged_by_hand(const Scenario& sc)
{
  Scenario one = sc;
  one.workload.copies = 1;
  one.workload.time_scale = 1;
  auto src = open_workload(one);
  std::vector<workloads::Request> base;
  for (workloads::Request r; src->next(r);)
    base.push_back(r);
  std::vector<std::tuple<double, int, std::size_t>> order;
  for (int k = 0; k < sc.workload.copies; ++k)
    for (std::size_t i = 0; i < base.size(); ++i)
      order.emplace_back(base[i].arrival.value() + k * sc.workload.copy_offset.value(), k, i);
  std::stable_sort(order.begin(), order.end());
  std::vector<Key> out;
  for (const auto& [t, k, i] : order)
    out.emplace_back(t / sc.workload.time_scale,
                     workloads::ids::copy_session(base[i].session, static_cast<std::uint64_t>(k)),
                     workloads::ids::copy_agent(base[i].agent, static_cast<std::uint64_t>(k)));
  return out;
}

std::vector<Key> streamed(const Scenario& sc, double max_buffered = kMaxBufferedBytes)
{
  auto src = open_workload(sc, Copies::kAll, max_buffered);
  std::vector<Key> out;
  std::uint64_t n = 0;
  for (workloads::Request r; src->next(r); ++n) {
    CHECK(r.id == n);
    out.emplace_back(r.arrival.value(), r.session, r.agent);
  }
  return out;
}
} // namespace

TEST_CASE("source: copies are merged as if every copy's stream were open, ties to the lower copy")
{
  // Arrivals two at a time (ties inside a copy), copies 25 ms apart (their windows overlap) or at
  // once (ties across copies), time-compressed.
  for (const char* offset : {"0s", "25ms", "2s"}) {
    const Scenario sc = scenario_with_trace(
        40, {"workload.copies=7", std::string("workload.copy_offset=") + offset, "workload.time_scale=2"}, 2);
    const std::vector<Key> want = merged_by_hand(sc);
    REQUIRE(want.size() == 280);
    CHECK(streamed(sc) == want);
    // Copies that start late read their own streams once the shared window is full (here at once).
    CHECK(streamed(sc, 1.0) == want);
  }
}

TEST_CASE("source: 65,536 copies cost no more memory than one (one stream, one group of arrivals buffered)")
{
  const Scenario sc = scenario_with_trace(300, {"workload.copies=65536"});
  const double before = core::resident_bytes().value();
  auto src = open_workload(sc);
  workloads::Request r;
  std::uint64_t n = 0;
  double t = 0;
  for (; n < 3 * 65536 && src->next(r); ++n) {
    REQUIRE(r.arrival.value() >= t);
    t = r.arrival.value();
  }
  CHECK(n == 3 * 65536);
  CHECK(t == Approx(0.02)); // the first three arrivals of every copy: all copies start together
  // An open trace reader per copy took gigabytes (measured: killed past 4 GiB of address space).
  CHECK(core::resident_bytes().value() - before < 64e6);
}
