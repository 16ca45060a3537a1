// Requesters that stripe their exchanges over their node's NICs (engine.requester_nics: node):
// the holder's rail reached over NVLink, in both directions, against the requester's one NIC.
#include "sim/engine/test_util.hpp"

#include <fstream>
#include <sstream>

using namespace xattn;
using namespace xattn::sim::engine::test;

namespace
{

// One requester (node0.gpu0) attending `holders` chunks of 2048 tokens, one on each of
// node2.gpu0..holders-1: holder i sits on rail i.
std::string scenario(const std::string& holders, const std::string& policy, const std::string& nics, bool fast)
{
  std::ostringstream s;
  s << "name: rails\n"
    << "model: {name: m, layers: 1, heads: 128, kv_lora_rank: 512, rope_dim: 64}\n"
    << two_leaf_topology(1) // a non-blocking spine
    << "instances: {requesters: [node0.gpu0], holders: [" << holders << "]}\n"
    << "corpus: {chunk_tokens: 2048, placement: round-robin}\n"
    << "workload: {trace: trace.jsonl}\n"
    << "policies: [" << policy << "]\n"
    << "engine: {route_protocol: absorbed, fast_path: " << (fast ? "true" : "false") << ", requester_nics: " << nics
    << "}\n";
  return s.str();
}

double step(int holders, const std::string& policy, const std::string& nics, bool fast = true)
{
  // 2048 tokens in 64-token blocks: 32 blocks per chunk, one chunk per holder. One decode step: a
  // fetch's later steps would attend the cached chunks.
  const std::string list = "node2.gpu0-" + std::to_string(holders - 1);
  return step_mean(run(scenario(list, policy, nics, fast), request(0, 0.0, 0, 0, 32 * holders, 1)), policy);
}

} // namespace

TEST_CASE("engine: a striping requester's routed step stays flat over holders on 8 rails")
{
  const double one = step(1, "route", "node");
  CHECK(one == Approx(step(1, "route", "own")).epsilon(1e-9)); // holder 0 is on the requester's own rail
  const double striped = step(8, "route", "node");
  const double own = step(8, "route", "own");
  // Through one NIC, 8 queries of 147,456 B and 8 answers share 25 GB/s: more than 3x one holder.
  CHECK(own > 3 * one);
  // Relayed, each exchange has a NIC of its own; a holder attends 256 tokens instead of 2048, and
  // the relays add an NVLink and PCIe crossing, so the step is within 10% of one holder's.
  CHECK(striped < 1.1 * one);
  CHECK(striped > 0.8 * one);
  // Holders 1-7 are on other rails than the requester's NIC 0: their queries and answers are
  // relayed, holder 0's are not. Two legs (query, answer) per holder.
  const int holders = 8;
  const nlohmann::json relayed = run(scenario("node2.gpu0-" + std::to_string(holders - 1), "route", "node", true),
                                     request(0, 0.0, 0, 0, 32 * holders, 1));
  CHECK(relayed["policies"]["route"]["engine"]["relayed"] == 2 * (holders - 1));
  CHECK(relayed["policies"]["route"]["engine"]["transfers"] == 2 * holders);
  // The fused fast path and all-SimGrid sharing agree on the relayed routes.
  CHECK(striped == Approx(step(8, "route", "node", false)).epsilon(1e-5));
  CHECK(own == Approx(step(8, "route", "own", false)).epsilon(1e-5));
}

TEST_CASE("engine: striping spreads fetched chunks over the requester node's NICs")
{
  // 8 chunks of 2048 x 1152 B = 2,359,296 B each: through one 25 GB/s NIC the gather takes 8 x
  // 94.4 us of wire time; spread over 8 NICs, the NVLink relays (450 GB/s) carry 8 x 25 GB/s.
  const double own = step(8, "fetch", "own"), striped = step(8, "fetch", "node");
  const double wire = 2048.0 * 1152.0 / 25e9;
  CHECK(own - striped == Approx(7 * wire).epsilon(0.02));
  CHECK(striped == Approx(step(8, "fetch", "node", false)).epsilon(1e-5));
}

TEST_CASE("engine: a requester that also holds chunks keeps its own NIC")
{
  // node0.gpu0 holds chunk 0 itself and requests all 8: the relay would have to sit on both ends
  // of its exchanges, so it does not stripe, and node mode gives exactly own mode's step.
  const std::string holders = "node0.gpu0, node2.gpu1-7";
  auto at = [&](const std::string& nics) {
    return step_mean(run(scenario(holders, "route", nics, true), request(0, 0.0, 0, 0, 32 * 8, 1)), "route");
  };
  CHECK(at("node") == at("own"));
}

TEST_CASE("engine: striping where it cannot act is an error naming the key")
{
  auto dir = fresh_dir("rails");
  std::ofstream(dir / "s.yaml") << "name: x\nmodel: deepseek-v3.2\ntopology: pcie-server\n"
                                   "instances: {requesters: [node0.gpu0], holders: [node0.gpu1]}\n"
                                   "workload: {generator: {requests: 2, block_tokens: 64, corpus: {tokens: 4096}}}\n"
                                   "engine: {requester_nics: node}\n";
  CHECK_THROWS_WITH(sim::engine::load_scenario((dir / "s.yaml").string()),
                    Catch::Contains("s.yaml:6:26: error: engine.requester_nics: 'node' stripes over a node's NICs "
                                    "through NVLink, but topology 'pcie-server' has no NVLink"));
}
