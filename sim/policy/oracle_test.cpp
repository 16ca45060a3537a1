// The oracle's look-ahead: the reads of requests yet to arrive, per requester, counted by hand on
// a small trace; and the oracle against the online predicate on the quickstart.
#include "sim/engine/future.hpp"
#include "sim/engine/test_util.hpp"

#include "sim/core/resources.hpp"

#include <catch2/catch.hpp>

#include <fstream>

using namespace xattn;
using namespace xattn::sim::engine;
using namespace xattn::sim::engine::test;

TEST_CASE("oracle: knows the reads of the requests yet to arrive on each requester")
{
  // Two requesters; sessions 0 and 2 land on requester 0 and session 1 on requester 1 (round-robin
  // in order of first arrival). 2048-token chunks of 32 blocks: blocks 0-31 are chunk 0 and
  // blocks 32-63 chunk 1 (numbered as first seen). Dense: every step reads every chunk of its
  // context once.
  auto dir = fresh_dir("future");
  std::ofstream(dir / "trace.jsonl") << "{\"xattn_trace\": 1, \"source\": \"oracle test\"}\n"
                                     << request(0, 0.0, 0, 0, 32, 10)  // requester 0, chunk 0
                                     << request(1, 1.0, 1, 0, 32, 20)  // requester 1, chunk 0
                                     << request(2, 2.0, 0, 0, 64, 30)  // requester 0, chunks 0 and 1
                                     << request(3, 3.0, 2, 32, 32, 5); // requester 0, chunk 1
  std::ofstream(dir / "s.yaml") << "name: future\n"
                                   "model: deepseek-v3\n"
                                   "topology: testbed-ndr200\n"
                                   "instances: {requesters: [node0.gpu0, node0.gpu1], holders: [node2.gpu3]}\n"
                                   "corpus: {chunk_tokens: 2048}\n"
                                   "workload: {trace: trace.jsonl}\n"
                                   "policies: [oracle]\n";
  const Scenario sc = load_scenario((dir / "s.yaml").string());
  const PlacedCorpus placed = place_corpus(sc);
  const FutureReads f(sc, placed);
  CHECK(f.entries() == 5);
  // Before anything arrived: requests 0 and 2 read chunk 0 on requester 0.
  CHECK(f.after(0, 0, 0) == 10.0 + 30.0);
  CHECK(f.after(0, 0, 1) == 30.0); // request 0 has arrived: it is live, not future
  CHECK(f.after(0, 0, 3) == 0.0);
  CHECK(f.after(0, 1, 0) == 30.0 + 5.0);
  CHECK(f.after(0, 1, 3) == 5.0);
  CHECK(f.after(0, 1, 4) == 0.0);
  CHECK(f.after(1, 0, 0) == 20.0);
  CHECK(f.after(1, 0, 2) == 0.0);
  CHECK(f.after(1, 1, 0) == 0.0);
}

TEST_CASE("oracle: a request's later session counts; never worse than the predicate where forecasts go wrong")
{
  // One requester, one holder across the spine, 2048-token chunks of DeepSeek-V3 under the
  // production profile: fetching a chunk pays for itself after about 2.8 reuses (xattn predict).
  // Requests are seconds apart (an idle fabric), and fetches block the step, so that the step
  // times are the decisions' prices and nothing else.
  //   0: session 0, chunk A, 2 steps; 1: session 0 again, chunk A, 6 steps (its later request);
  //   2: session 1, chunk B, 2 steps; 3: session 2, chunk C, 60 steps.
  // The oracle fetches A at request 0 (1 later step of its own + 6 of request 1), routes B (1
  // reuse, nobody after) and fetches C. The predicate fetches all three: the prior of 256 steps
  // for A, then the finished requests' mean of 4 steps for B, whose fetch is wasted.
  const std::string scen = "name: hindsight\n"
                           "model: deepseek-v3\n"
                           "topology: testbed-ndr200\n"
                           "instances: {requesters: [node0.gpu0], holders: [node2.gpu3]}\n"
                           "corpus: {chunk_tokens: 2048}\n"
                           "workload: {trace: trace.jsonl}\n"
                           "engine: {fetch: blocking}\n"
                           "policies: [predicate, oracle]\n";
  const std::string trace = request(0, 0.0, 0, 0, 32, 2) + request(1, 1.0, 0, 0, 32, 6) +
                            request(2, 2.0, 1, 32, 32, 2) + request(3, 3.0, 2, 64, 32, 60);
  nlohmann::json s = run(scen, trace);
  const nlohmann::json& o = s["policies"]["oracle"]["decisions"];
  const nlohmann::json& p = s["policies"]["predicate"]["decisions"];
  CHECK(o["fetch"] == 2);
  CHECK(o["route"] == 2);
  CHECK(p["fetch"] == 3);
  CHECK(p["route"] == 0);
  INFO("predicate " << step_mean(s, "predicate") << " s, oracle " << step_mean(s, "oracle") << " s");
  CHECK(step_mean(s, "oracle") < step_mean(s, "predicate"));
}
