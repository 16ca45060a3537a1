// On an idle cluster the simulation must reproduce the closed form (DESIGN.md §7): one request,
// one chunk on one holder, every primitive, every fabric class, through real SimGrid comms.
#include "sim/engine/test_util.hpp"
#include "sim/model/predict.hpp"
#include "topologies/topology.hpp"

#include "sim/core/resources.hpp"

using namespace xattn;
using namespace xattn::sim::engine::test;

namespace {

struct Pair {
  const char* topology;
  const char* requester;
  const char* holder;
  core::FabricClass fabric;
};

const Pair kPairs[] = {
    {"testbed-ndr200", "node0.gpu0", "node0.gpu1", core::FabricClass::kNvlink},
    {"pcie-server", "node0.gpu0", "node0.gpu7", core::FabricClass::kPcie},
    {"testbed-ndr200", "node0.gpu0", "node1.gpu0", core::FabricClass::kIbSameLeaf},
    {"testbed-ndr200", "node0.gpu0", "node2.gpu3", core::FabricClass::kIbSpine},
};

std::string scenario(const Pair& p, const std::string& granularity)
{
  return std::string("name: idle\n"
                     "model: {name: dsv3, layers: 61, heads: 128, kv_lora_rank: 512, rope_dim: 64}\n"
                     "topology: ") +
         p.topology + "\ninstances: {requesters: [" + p.requester + "], holders: [" + p.holder +
         "]}\n"
         "corpus: {chunk_tokens: 2048}\n"
         "workload: {trace: trace.jsonl}\n"
         "policies: [route, fetch, local]\n"
         "engine: {granularity: " +
         granularity + ", fast_path: false}\n";
}

// The closed form for the same shape on the same GPU pair, a whole step (61 layers).
sim::Prediction closed_form(const Pair& p)
{
  auto topo = topo::load_topology(*core::resolve_preset(p.topology, "topologies"));
  auto a    = *topo.find_gpu(p.requester);
  auto b    = *topo.find_gpu(p.holder);
  topo::Path path = topo.path(a, b);
  REQUIRE(path.fabric == p.fabric);
  sim::PredictRequest r;
  r.mq     = 128; // one DeepSeek-V3 decode token
  r.ct     = 2048;
  r.layers = 61;
  r.fabric = p.fabric;
  return sim::predict(sim::load_model("deepseek-v3"), calibrate::load_profile("h100-ndr200-ibgda"), r,
                      sim::PathCost{path.fabric, path.bottleneck, path.latency});
}

} // namespace

TEST_CASE("engine: an idle step equals the closed form for every primitive and fabric class")
{
  for (const Pair& p : kPairs) {
    INFO(core::to_string(p.fabric));
    const std::string trace = request(0, 0.0, 0, 0, 32, 1); // 32 blocks x 64 tokens = one 2048-token chunk
    nlohmann::json s        = run(scenario(p, "step"), trace);
    sim::Prediction cf      = closed_form(p);
    CHECK(step_mean(s, "route") == Approx(cf.route.total().value()).epsilon(0.01));
    CHECK(step_mean(s, "fetch") == Approx(cf.fetch.total().value()).epsilon(0.01));
    CHECK(step_mean(s, "local") == Approx(cf.local.total().value()).epsilon(0.01));
    // Route moves the query and the answer, fetch the chunk: the closed form's wire bytes.
    CHECK(s["policies"]["route"]["wire_bytes"].get<double>() == Approx(cf.per_call.route_wire.value() * 61));
    CHECK(s["policies"]["fetch"]["wire_bytes"].get<double>() == Approx(cf.per_call.fetch_wire.value() * 61));
    CHECK(s["policies"]["route"]["wire_bytes_by_fabric"][std::string(core::to_string(p.fabric))].get<double>() > 0);
    CHECK(s["invariants"]["ok"].get<bool>());
  }
}

TEST_CASE("engine: layer and step granularity agree on an idle cluster")
{
  const Pair& p           = kPairs[3];
  const std::string trace = request(0, 0.0, 0, 0, 32, 3);
  nlohmann::json step     = run(scenario(p, "step"), trace);
  nlohmann::json layer    = run(scenario(p, "layer"), trace);
  for (const char* policy : {"route", "fetch", "local"}) {
    INFO(policy);
    CHECK(step_mean(layer, policy) == Approx(step_mean(step, policy)).epsilon(0.02));
  }
}

TEST_CASE("engine: a fetched chunk is cached and later steps attend it locally")
{
  const Pair& p       = kPairs[3];
  nlohmann::json s    = run(scenario(p, "step"), request(0, 0.0, 0, 0, 32, 4));
  sim::Prediction cf  = closed_form(p);
  const auto& fetch   = s["policies"]["fetch"];
  CHECK(fetch["decisions"]["fetch"] == 1);
  CHECK(fetch["decisions"]["cached"] == 3);
  // Step 1 pays the fetch; steps 2-4 attend locally (61 kernels over the cached chunk each).
  const double later = 61 * cf.per_call.reuse.value();
  CHECK(fetch["step_latency_s"]["max"].get<double>() == Approx(cf.fetch.total().value()).epsilon(0.01));
  CHECK(fetch["step_latency_s"]["p50"].get<double>() == Approx(later).epsilon(0.01));
}

TEST_CASE("engine: a dense fetch from several holders pays one splice per chunk, one after another")
{
  // Four 2048-token chunks on four holders across the spine: the closed form with --holders 4.
  auto topo = topo::load_topology(*core::resolve_preset("testbed-ndr200", "topologies"));
  const std::string scen = "name: gather\n"
                           "model: {name: dsv3, layers: 61, heads: 128, kv_lora_rank: 512, rope_dim: 64}\n"
                           "topology: testbed-ndr200\n"
                           "instances: {requesters: [node0.gpu0], holders: [node2.gpu0-3]}\n"
                           "corpus: {chunk_tokens: 2048, placement: round-robin}\n"
                           "workload: {trace: trace.jsonl}\n"
                           "policies: [fetch]\n";
  nlohmann::json s = run(scen, request(0, 0.0, 0, 0, 128, 1));
  // Four splices of 3 ms (plus 0.17 ns per token) per layer, in sequence, dominate the step.
  const double splices = 61 * 4 * (3e-3 + 2048 * 0.17e-9);
  CHECK(step_mean(s, "fetch") > splices);
  CHECK(step_mean(s, "fetch") < splices * 1.05);
  sim::PredictRequest r;
  r.mq = 128, r.ct = 2048, r.layers = 61, r.holders = 4, r.fabric = core::FabricClass::kIbSpine;
  topo::Path path = topo.path(*topo.find_gpu("node0.gpu0"), *topo.find_gpu("node2.gpu0"));
  auto cf = sim::predict(sim::load_model("deepseek-v3"), calibrate::load_profile("h100-ndr200-ibgda"), r,
                         sim::PathCost{path.fabric, path.bottleneck, path.latency});
  CHECK(step_mean(s, "fetch") == Approx(cf.fetch.total().value()).epsilon(0.01));
}
