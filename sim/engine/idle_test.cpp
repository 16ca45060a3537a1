// On an idle cluster the simulation must reproduce the closed form (docs/conventions.md, "Tests"): one request,
// one chunk on one holder, every primitive, every fabric class, through real SimGrid comms.
#include "sim/engine/test_util.hpp"
#include "sim/model/predict.hpp"
#include "topologies/topology.hpp"

#include "sim/core/resources.hpp"

#include <cmath>

using namespace xattn;
using namespace xattn::sim::engine::test;
using namespace xattn::sim::engine;

namespace
{

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

std::string scenario(const Pair& p, const std::string& granularity, const std::string& model = "dsv3",
                     bool fast_path = false, const std::string& profile = "paper-prototype")
{
  const std::string m = model == "dsv3" ? "{name: dsv3, layers: 61, heads: 128, kv_lora_rank: 512, rope_dim: 64}"
                                        : "{name: dsv32, layers: 61, heads: 128, kv_lora_rank: 512, rope_dim: 64, "
                                          "kv_dtype: fp8-flashmla, index: {topk: 2048, heads: 64, head_dim: 128}}";
  return "name: idle\nmodel: " + m + "\ntopology: " + p.topology + "\ninstances: {requesters: [" + p.requester +
         "], holders: [" + p.holder +
         "]}\n"
         "corpus: {chunk_tokens: 2048}\n"
         "workload: {trace: trace.jsonl}\n"
         "policies: [route, fetch, local]\n"
         "profile: " +
         profile + "\nengine: {route_protocol: absorbed, granularity: " + granularity +
         ", fast_path: " + (fast_path ? "true" : "false") + "}\n";
}

// The paper prototype's constants, written out by hand (calibrate/profiles/paper-prototype.yaml and
// the fabric of h100-ndr200-ibgda.yaml it extends),
// and the model of docs/cost-path.md worked through for one DeepSeek-V3 decode token (M_q = 128)
// attending one 2048-token chunk on one holder, all 61 layers in one step. Nothing here calls the
// pricing code: the path's latency and bottleneck come from the topology.
struct HandFabric {
  double probe, wire_latency, block_rate, effective, nominal;
};
HandFabric hand(core::FabricClass f)
{
  switch (f) {
  case core::FabricClass::kNvlink:
    return {8e-6, 1e-6, 25e9, 376e9, 450e9};
  case core::FabricClass::kPcie:
    return {10e-6, 3.5e-6, 20e9, 55e9, 64e9};
  case core::FabricClass::kIbSameLeaf:
    return {15.5e-6, 3.53e-6, 25e9, 25e9, 25e9};
  default:
    return {16e-6, 3.99e-6, 25e9, 25e9, 25e9};
  }
}

struct HandStep {
  double route, fetch, sparse_route, sparse_fetch, local;
};
HandStep hand_step(const Pair& p)
{
  auto topo = topo::load_topology(*core::resolve_preset(p.topology, "topologies"));
  topo::Path path = topo.path(*topo.find_gpu(p.requester), *topo.find_gpu(p.holder));
  REQUIRE(path.fabric == p.fabric);
  const HandFabric f = hand(p.fabric);
  const double B = path.bottleneck.value(), e = f.effective / f.nominal;
  // A bulk message (32 blocks outrun the link) moves at e x B; a single block at min(25 GB/s, e x B).
  auto rate = [&](int blocks) { return blocks * f.block_rate >= e * B ? e * B : blocks * f.block_rate; };
  const double lat = std::max(0.0, path.latency.value() - f.wire_latency);
  const double L = 61, rows = 128, tokens = 2048;
  const double kernel = 2e-6 + 0.384e-9 * tokens + 5.44e-12 * tokens * rows;
  const double query = rows * 1152, answer = rows * (1024 + 4), chunk = tokens * 1152;
  HandStep h;
  h.route = L * (query / rate(1) + f.probe + lat + kernel + answer / rate(1) + lat + 1e-6 + 0.5e-9 * rows);
  const double splice_one_run = 3e-3 + 0.17e-9 * tokens;
  h.fetch = L * (chunk / rate(32) + f.probe + lat + splice_one_run + kernel);
  // DSA (DeepSeek-V3.2's indexer: 64 heads x 128 fp8 values per decoded token). First the
  // selection: the indexer query out, the holder's scan of the 2048 tokens' index keys (128 fp8
  // values and an fp32 scale each; memory-bound at the H100's 3.35 TB/s x 0.895, on 32 tiles of
  // its 132 SMs, plus a 3 us launch: the prototype measured no scan), 2048 candidates of 8 B back.
  // Then route sends the query rows with the 2048 selected ids (4 B each); fetch moves the 32
  // selected 64-token blocks, spliced one run each, as DeepSeek-V3.2 stores them: FP8 latent, an
  // fp32 scale per 128 values and BF16 RoPE, 512 + 16 + 128 = 656 B a token.
  const double fp8_chunk = tokens * 656;
  const double index_query = 64 * 128, candidates = 8 * tokens, ids = 4 * tokens;
  const double scan = 3e-6 + (tokens * 132 + index_query) / (3.35e12 * 0.895) * 132 / 32;
  const double select = f.probe + index_query / rate(1) + lat + scan + candidates / rate(1) + lat;
  h.sparse_route =
      L * (select + (query + ids) / rate(1) + f.probe + lat + kernel + answer / rate(1) + lat + 1e-6 + 0.5e-9 * rows);
  h.sparse_fetch = L * (select + fp8_chunk / rate(32) + f.probe + lat + 32 * 3e-3 + 0.17e-9 * tokens + kernel);
  h.local = tokens / 5000 + L * kernel;
  return h;
}

// The closed form for the same shape on the same GPU pair, a whole step (61 layers).
sim::Prediction closed_form(const Pair& p, const std::string& profile = "paper-prototype")
{
  auto topo = topo::load_topology(*core::resolve_preset(p.topology, "topologies"));
  topo::Path path = topo.path(*topo.find_gpu(p.requester), *topo.find_gpu(p.holder));
  sim::PredictRequest r;
  r.mq = 128; // one DeepSeek-V3 decode token
  r.ct = 2048;
  r.layers = 61;
  r.fabric = p.fabric;
  return sim::predict(sim::load_model("deepseek-v3"), calibrate::load_profile(profile), r,
                      sim::PathCost{path.fabric, path.bottleneck, path.latency});
}

} // namespace

TEST_CASE("engine: an idle step equals the hand-computed model for every primitive and fabric class")
{
  for (const Pair& p : kPairs)
    for (bool fast : {false, true}) {
      INFO(core::to_string(p.fabric) << (fast ? ", fused path" : ", all SimGrid"));
      const std::string trace = request(0, 0.0, 0, 0, 32, 1); // 32 blocks x 64 tokens = one 2048-token chunk
      nlohmann::json s = run(scenario(p, "step", "dsv3", fast), trace);
      const HandStep h = hand_step(p);
      CHECK(step_mean(s, "route") == Approx(h.route).epsilon(1e-6));
      CHECK(step_mean(s, "fetch") == Approx(h.fetch).epsilon(1e-6));
      CHECK(step_mean(s, "local") == Approx(h.local).epsilon(1e-6));
      // Route moves the query and the answer, fetch the chunk.
      CHECK(s["policies"]["route"]["wire_bytes"].get<double>() == Approx(61.0 * 128 * (1152 + 1028)));
      CHECK(s["policies"]["fetch"]["wire_bytes"].get<double>() == Approx(61.0 * 2048 * 1152));
      CHECK(s["invariants"]["ok"].get<bool>());
      nlohmann::json sparse = run(scenario(p, "step", "dsv32", fast), trace);
      CHECK(step_mean(sparse, "route") == Approx(h.sparse_route).epsilon(1e-6));
      CHECK(step_mean(sparse, "fetch") == Approx(h.sparse_fetch).epsilon(1e-6));
      // The selection's bytes are on the wire too: 8 KiB of indexer query, 16 KiB of candidates;
      // and the routed query carries 8 KiB of ids.
      const double select_bytes = 8192 + 16384;
      CHECK(sparse["policies"]["route"]["wire_bytes"].get<double>() ==
            Approx(61.0 * (128 * (1152 + 1028) + 8192 + select_bytes)));
      CHECK(sparse["policies"]["fetch"]["wire_bytes"].get<double>() == Approx(61.0 * (2048 * 656 + select_bytes)));
      CHECK(sparse["invariants"]["ok"].get<bool>());
    }
}

TEST_CASE("engine: the closed form (predict) equals the engine on an idle cluster")
{
  for (const Pair& p : kPairs) {
    INFO(core::to_string(p.fabric));
    nlohmann::json s = run(scenario(p, "step"), request(0, 0.0, 0, 0, 32, 1));
    sim::Prediction cf = closed_form(p);
    CHECK(step_mean(s, "route") == Approx(cf.route.total().value()).epsilon(1e-6));
    CHECK(step_mean(s, "fetch") == Approx(cf.fetch.total().value()).epsilon(1e-6));
    CHECK(step_mean(s, "local") == Approx(cf.local.total().value()).epsilon(1e-6));
    CHECK(s["policies"]["route"]["wire_bytes"].get<double>() == Approx(cf.per_call.route_wire.value() * 61));
    CHECK(s["policies"]["fetch"]["wire_bytes"].get<double>() == Approx(cf.per_call.fetch_wire.value() * 61));
    // Under selection: DeepSeek-V3.2's top-2048 of the 2048-token chunk, in 32 runs.
    nlohmann::json sparse = run(scenario(p, "step", "dsv32"), request(0, 0.0, 0, 0, 32, 1));
    auto topo = topo::load_topology(*core::resolve_preset(p.topology, "topologies"));
    topo::Path path = topo.path(*topo.find_gpu(p.requester), *topo.find_gpu(p.holder));
    sim::PredictRequest r;
    r.mq = 128, r.ct = 2048, r.layers = 61, r.fabric = p.fabric, r.blocks = 32;
    sim::Prediction scf = sim::predict(sim::load_model("deepseek-v3.2"), calibrate::load_profile("paper-prototype"), r,
                                       sim::PathCost{path.fabric, path.bottleneck, path.latency});
    CHECK(step_mean(sparse, "route") == Approx(scf.route.total().value()).epsilon(1e-6));
    CHECK(step_mean(sparse, "fetch") == Approx(scf.fetch.total().value()).epsilon(1e-6));
    CHECK(sparse["policies"]["route"]["wire_bytes"].get<double>() == Approx(scf.per_call.route_wire.value() * 61));
    // The index keys copied to the requester: it scans them itself, and only the call's query
    // rows, their 2048 ids and the answers cross the wire.
    nlohmann::json copied =
        run(scenario(p, "step", "dsv32") + "selection: {index_keys: requester}\n", request(0, 0.0, 0, 0, 32, 1));
    r.index_on_requester = true;
    sim::Prediction ccf = sim::predict(sim::load_model("deepseek-v3.2"), calibrate::load_profile("paper-prototype"), r,
                                       sim::PathCost{path.fabric, path.bottleneck, path.latency});
    CHECK(step_mean(copied, "route") == Approx(ccf.route.total().value()).epsilon(1e-6));
    CHECK(step_mean(copied, "fetch") == Approx(ccf.fetch.total().value()).epsilon(1e-6));
    CHECK(copied["policies"]["route"]["wire_bytes"].get<double>() == Approx(61.0 * (128 * (1152 + 1028) + 8192)));
    CHECK(copied["invariants"]["ok"].get<bool>());
  }
}

TEST_CASE("engine: layer and step granularity agree on an idle cluster")
{
  const Pair& p = kPairs[3];
  const std::string trace = request(0, 0.0, 0, 0, 32, 3);
  nlohmann::json step = run(scenario(p, "step"), trace);
  nlohmann::json layer = run(scenario(p, "layer"), trace);
  for (const char* policy : {"route", "fetch", "local"}) {
    INFO(policy);
    CHECK(step_mean(layer, policy) == Approx(step_mean(step, policy)).epsilon(0.02));
  }
}

TEST_CASE("engine: a fetched chunk is cached and later steps attend it locally")
{
  const Pair& p = kPairs[3];
  nlohmann::json s = run(scenario(p, "step"), request(0, 0.0, 0, 0, 32, 4));
  sim::Prediction cf = closed_form(p);
  const auto& fetch = s["policies"]["fetch"];
  CHECK(fetch["decisions"]["fetch"] == 1);
  CHECK(fetch["decisions"]["cached"] == 3);
  // Step 1 pays the fetch; steps 2-4 attend locally (61 kernels over the cached chunk each).
  const double later = 61 * cf.per_call.reuse.value();
  CHECK(fetch["step_latency_s"]["max"].get<double>() == Approx(cf.fetch.total().value()).epsilon(0.01));
  CHECK(fetch["step_latency_s"]["p50"].get<double>() == Approx(later).epsilon(0.01));
}

TEST_CASE("engine: a background fetch routes its calls until the chunk lands, then attends it locally")
{
  // engine.fetch: background. The prototype's fetch (183 ms of splices) is slower than a routed
  // call, so the step that decides to fetch routes its call and goes on; so do the steps while the
  // chunk is in flight. Then the chunk is cached and the rest attend it locally.
  const Pair& p = kPairs[3];
  const HandStep h = hand_step(p);
  const int n = 400;
  std::string scen = scenario(p, "step");
  const std::string blocking = "fast_path: false}";
  scen.replace(scen.find(blocking), blocking.size(), "fast_path: false, fetch: background}");
  nlohmann::json s = run(scen, request(0, 0.0, 0, 0, 32, n));
  const auto& d = s["policies"]["fetch"]["decisions"];
  const int routed = d["route"].get<int>();
  INFO("routed while in flight: " << routed << "; hand: route step " << h.route << " s, fetch " << h.fetch << " s");
  CHECK(d["fetch"] == 1);
  CHECK(routed >= 1);
  CHECK(d["cached"].get<int>() == n - 1 - routed);
  // No call is routed after the chunk could have landed: at most the fetch's time in route steps.
  CHECK(routed <= static_cast<int>(std::ceil(h.fetch / h.route)) + 1);
  // The splice overlaps the steps (its GPU work queues with theirs): busy time stays within wall.
  CHECK(s["invariants"]["ok"] == true);
  // Blocking (the default): the fetching step waits; nothing is routed.
  nlohmann::json b = run(scenario(p, "step"), request(0, 0.0, 0, 0, 32, n));
  CHECK(b["policies"]["fetch"]["decisions"]["route"] == 0);
  CHECK(b["policies"]["fetch"]["decisions"]["cached"] == n - 1);
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
                           "policies: [fetch]\n"
                           "profile: paper-prototype\n";
  nlohmann::json s = run(scen, request(0, 0.0, 0, 0, 128, 1));
  // Four splices of 3 ms (plus 0.17 ns per token) per layer, in sequence, dominate the step.
  const double splices = 61 * 4 * (3e-3 + 2048 * 0.17e-9);
  CHECK(step_mean(s, "fetch") > splices);
  CHECK(step_mean(s, "fetch") < splices * 1.05);
  sim::PredictRequest r;
  r.mq = 128, r.ct = 2048, r.layers = 61, r.holders = 4, r.fabric = core::FabricClass::kIbSpine;
  topo::Path path = topo.path(*topo.find_gpu("node0.gpu0"), *topo.find_gpu("node2.gpu0"));
  auto cf = sim::predict(sim::load_model("deepseek-v3"), calibrate::load_profile("paper-prototype"), r,
                         sim::PathCost{path.fabric, path.bottleneck, path.latency});
  CHECK(step_mean(s, "fetch") == Approx(cf.fetch.total().value()).epsilon(0.01));
}

TEST_CASE("engine: a fitted transfer curve prices each message on its own segment, fused and in SimGrid")
{
  // Two NVLink protocols: up to 64 KiB 8 us + s / 5 GB/s; above, 14 us + s / 300 GB/s (so a
  // message there pays 6 us more than the probe), on a link of 450 GB/s nominal.
  const auto dir = fresh_dir("curve");
  std::ofstream(dir / "curve.yaml") << "name: curve\nextends: paper-prototype\nfabrics:\n  nvlink:\n"
                                       "    bandwidth: 300GBps\n    nominal_bandwidth: 450GBps\n    transfer:\n"
                                       "      - {from: 0B, latency: 8us, bandwidth: 5GBps}\n"
                                       "      - {from: 64KiB, latency: 14us, bandwidth: 300GBps}\n";
  const Pair& p = kPairs[0];
  auto topo = topo::load_topology(*core::resolve_preset(p.topology, "topologies"));
  topo::Path path = topo.path(*topo.find_gpu(p.requester), *topo.find_gpu(p.holder));
  const double lat = path.latency.value() - 1e-6; // beyond the probe's own 1 us
  const double kernel = 2e-6 + 0.384e-9 * 2048 + 5.44e-12 * 2048 * 128;
  // Route: 147,456 B of query and 131,584 B of answer, both in the second segment, one thread
  // block (25 GB/s, below the segment's 300 GB/s); the answer pays no probe (collapsed response).
  const double route = 61 * (147456 / 25e9 + 14e-6 + lat + kernel + 131584 / 25e9 + lat + 1e-6 + 0.5e-9 * 128);
  // Fetch: 2,359,296 B at the segment's 300 GB/s (its share 300/450 of the 450 GB/s link).
  const double fetch = 61 * (2359296 / 300e9 + 14e-6 + lat + 3e-3 + 0.17e-9 * 2048 + kernel);
  for (bool fast : {false, true}) {
    INFO((fast ? "fused path" : "all SimGrid"));
    std::string sc = scenario(p, "step", "dsv3", fast, (dir / "curve.yaml").string());
    nlohmann::json s = run(sc, request(0, 0.0, 0, 0, 32, 1));
    CHECK(step_mean(s, "route") == Approx(route).epsilon(1e-6));
    CHECK(step_mean(s, "fetch") == Approx(fetch).epsilon(1e-6));
  }
}

TEST_CASE("engine: an ensemble gives each headline figure its spread over profiles drawn from the profile")
{
  const Pair& p = kPairs[3];
  const auto dir = fresh_dir("ensemble");
  std::ofstream(dir / "trace.jsonl") << "{\"xattn_trace\": 1, \"source\": \"engine test\"}\n"
                                     << request(0, 0.0, 0, 0, 32, 2);
  std::ofstream(dir / "s.yaml") << scenario(p, "step");
  Scenario sc = load_scenario((dir / "s.yaml").string(), {});
  RunOptions opt;
  opt.out_dir = (dir / "out").string();
  opt.progress = false;
  opt.ensemble = 6;
  RunOutcome r = run_scenario(sc, opt);
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.result.ensemble);
  CHECK(r.result.ensemble->members == 6);
  CHECK(r.result.ensemble->profile_drawn);
  for (const auto& [policy, figs] : r.result.ensemble->policies) {
    INFO(policy);
    for (const auto& [fig, s] : figs) {
      INFO(fig);
      CHECK(s.p5 <= s.p50);
      CHECK(s.p50 <= s.p95);
    }
  }
  // The route step over the default profile's spread: probes, block rate and kernel all vary, so
  // its members differ; the spread holds the point run's figure.
  const auto& route = r.result.ensemble->policies.front();
  REQUIRE(route.first == "route");
  const Spread step = route.second.front().second; // step_latency_s.mean
  CHECK(step.p5 < step.p95);
  CHECK(step.p5 < step_mean(r.summary, "route") * 1.2);
  CHECK(step.p95 > step_mean(r.summary, "route") * 0.8);
  // summary.json carries it, and reads back the same.
  const RunResult back = run_result(r.summary);
  REQUIRE(back.ensemble);
  for (const auto& [policy, figs] : back.ensemble->policies)
    if (policy == "route") CHECK(figs.front().second.p95 == step.p95);
}

TEST_CASE("engine: under the production profile an idle step equals the roofline worked by hand")
{
  // h100-ndr200-ibgda's gpu section written out (calibrate/profiles/h100-ndr200-ibgda.yaml): HBM
  // 3.35 TB/s at 0.895, BF16 989 TFLOP/s at 0.586, FP8 1979 TFLOP/s at 0.768, 132 SMs, a 3 us
  // launch, a 20 us block-table insertion per run. DeepSeek-V3, one decode token (128 rows), one
  // 2048-token chunk on one holder across the spine, all 61 layers in one step.
  const Pair& p = kPairs[3];
  const double hbm = 3.35e12 * 0.895, bf16 = 989e12 * 0.586, fp8 = 1979e12 * 0.768, launch = 3e-6;
  const double L = 61, rows = 128, tokens = 2048;
  // The attention kernel: latent read plus query and answer rows, or 2 x (512 + 64 + 512) flop
  // per token x row, whichever binds; 2048 x 128 is 64 tiles of 64 x 64 on 132 SMs.
  const double whole = std::max((tokens * 1152 + rows * (1152 + 1028)) / hbm, 2 * 1088 * tokens * rows / bf16);
  const double kernel = launch + whole * 132 / 64;
  const double merge = launch + 2 * rows * 1028 / hbm; // one partial read and the merged row written
  const double splice = launch + tokens * 2 * 2 * 64 / hbm + 20e-6 / L;
  // The re-prefill of the chunk (DeepSeek-V3's dimensions, sim/models/deepseek-v3.yaml), layer by
  // layer: each GEMM reads its FP8 weights (BF16 for the MoE gate) and its BF16 activations at
  // HBM speed or multiplies at that dtype's tensor peak x 0.768, whichever binds, plus a launch.
  // An FP8 GEMM's input is quantised first (read in BF16, written in FP8 with an fp32 scale a 128
  // values), but the routed experts': their tokens come in FP8. Every element-wise kernel moves
  // its bytes at HBM speed, plus a launch.
  const double bf16_gemm = 989e12 * 0.768;
  const auto elementwise = [&](double bytes) { return bytes / hbm + launch; };
  const auto gemm = [&](double m, double k, double n, double matrices = 1, double wb = 1, bool quantise = true) {
    return std::max((matrices * k * n * wb + m * (k + n) * 2) / hbm, 2 * m * k * n / (wb == 1 ? fp8 : bf16_gemm)) +
           launch + (wb == 1 && quantise ? elementwise(m * k * (3 + 4.0 / 128)) : 0.0);
  };
  const double t = tokens;
  const double projections =
      gemm(t, 7168, 1536) + gemm(t, 1536, 128 * 192) + gemm(t, 7168, 576) + gemm(t, 128 * 128, 7168);
  const double kv_up = gemm(t, 512, 128 * 256); // the latent to 128 heads' keys (128) and values (128)
  const double pairs = t * (t + 1) / 2;         // causal
  const double attend =
      std::max((t * (128 * 256 + 64) + t * 128 * 320) * 2 / hbm, 2 * 128 * pairs * 320 / bf16) + launch;
  // The MLPs' activations read the gate and up halves in BF16 and write the product: in BF16
  // (the down GEMM quantises it), or for the routed experts in FP8 with its scales.
  const double dense_mlp = gemm(t, 7168, 2 * 18432) + elementwise(t * 18432 * 6) + gemm(t, 18432, 7168);
  // The router: its BF16 gate, then the top-k over 256 fp32 scores.
  const double moe_mlp = gemm(t, 7168, 256, 1, 2) + elementwise(t * 256 * 4) + gemm(t, 7168, 2 * 2048) +
                         elementwise(t * 2048 * 6) + gemm(t, 2048, 7168);
  const double active = 256 * (1 - std::pow(1 - 8.0 / 256, t)); // every expert, near enough
  const double experts = gemm(8 * t, 7168, 2 * 2048, active, 1, false) + elementwise(8 * t * 2048 * (5 + 4.0 / 128)) +
                         gemm(8 * t, 2048, 7168, active, 1, false);
  // Each layer's norms (two residual ones, reading and writing the hidden state and the residual;
  // the query and KV latents') and RoPE on 128 query heads and the key.
  const double norms = 2 * elementwise(t * 7168 * 8) + elementwise(t * 1536 * 4) + elementwise(t * 512 * 4) +
                       elementwise(t * 129 * 64 * 4);
  const double prefill = L * (projections + kv_up + attend + norms) + 3 * dense_mlp + 58 * (moe_mlp + experts);

  auto topo = topo::load_topology(*core::resolve_preset(p.topology, "topologies"));
  topo::Path path = topo.path(*topo.find_gpu(p.requester), *topo.find_gpu(p.holder));
  const HandFabric f = hand(p.fabric);
  const double lat = std::max(0.0, path.latency.value() - f.wire_latency), rate = 25e9; // IB: every rate 25 GB/s
  const double route = L * (rows * 1152 / rate + f.probe + lat + kernel + rows * 1028 / rate + lat + merge);
  const double fetch = L * (tokens * 1152 / rate + f.probe + lat + splice + kernel);
  const double local = prefill + L * kernel;
  CHECK(splice * L < 300e-6); // microseconds, not the prototype's 61 x 3 ms

  std::string sc = scenario(p, "step", "dsv3", false, "h100-ndr200-ibgda");
  sc.replace(sc.find("{name: dsv3"), sc.find('}', sc.find("{name: dsv3")) - sc.find("{name: dsv3") + 1, "deepseek-v3");
  nlohmann::json s = run(sc, request(0, 0.0, 0, 0, 32, 1));
  CHECK(step_mean(s, "route") == Approx(route).epsilon(1e-6));
  CHECK(step_mean(s, "fetch") == Approx(fetch).epsilon(1e-6));
  CHECK(step_mean(s, "local") == Approx(local).epsilon(1e-6));
  for (const char* policy : {"route", "fetch", "local"})
    CHECK(s["invariants"][policy]["gpus_within_wall"].get<bool>());
}

TEST_CASE("engine: re-prefills run one after another on the requester's GPU")
{
  // Eight 2048-token chunks re-prefilled in one step take eight times one (the local attention
  // over them is a fraction of a percent of the step), under the prototype's measured rate and
  // under the roofline.
  const Pair& p = kPairs[3];
  for (const char* profile : {"paper-prototype", "h100-ndr200-ibgda"}) {
    INFO(profile);
    std::string sc = scenario(p, "step", "dsv3", false, profile);
    sc.replace(sc.find("{name: dsv3"), sc.find('}', sc.find("{name: dsv3")) - sc.find("{name: dsv3") + 1,
               "deepseek-v3");
    const double one = step_mean(run(sc, request(0, 0.0, 0, 0, 32, 1)), "local");
    nlohmann::json eight = run(sc, request(0, 0.0, 0, 0, 8 * 32, 1));
    CHECK(step_mean(eight, "local") == Approx(8 * one).epsilon(0.01));
    CHECK(eight["invariants"]["local"]["gpus_within_wall"].get<bool>());
  }
  // The prototype's rate, by hand: 5,000 tokens/s.
  std::string sc = scenario(p, "step", "dsv3", false, "paper-prototype");
  CHECK(step_mean(run(sc, request(0, 0.0, 0, 0, 8 * 32, 1)), "local") > 8 * 2048 / 5000.0);
}
