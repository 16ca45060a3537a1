// The serving step (engine.step: full) through the engine, against answers worked by hand: a small
// dense model's decode step on one GPU, with MLA and with GQA; expert-parallel traffic sharing a
// link with a routed query under max-min; what tensor parallelism moves.
#include "sim/engine/test_util.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

using namespace xattn;
using namespace xattn::sim::engine::test;
using namespace xattn::sim::engine;

namespace
{
// A GPU of round peaks: 2 TB/s HBM, 500 / 1000 TFLOPS BF16 / FP8, every efficiency 0.5, 2 us per
// launch, 100 SMs.
const char* kHandProfile = "name: hand\nextends: h100-ndr200-ibgda\ngpu:\n  sm_count: 100\n  hbm_bandwidth: 2TBps\n"
                           "  bf16: 500Tflops\n  fp8: 1000Tflops\n  memory_efficiency: 0.5\n"
                           "  attention_efficiency: 0.5\n  gemm_efficiency: 0.5\n  launch: 2us\n"
                           "  hbm_capacity: 80GB\n";

// 2 layers, hidden 1024, 8 heads of 64 + 32 RoPE dims over a 256-rank latent, a 4096-wide MLP,
// 32,000 tokens of vocabulary, BF16 weights.
const std::string kSmallModel =
    "model: {name: small, layers: 2, heads: 8, kv_lora_rank: 256, rope_dim: 32, qk_nope_head_dim: 64, v_head_dim: 64, "
    "hidden: 1024, dense_layers: 2, dense_intermediate: 4096, vocab: 32000, weight_dtype: bf16}\n";

// The same shape with grouped-query attention: 8 query heads over 2 KV heads of 64 dims.
const std::string kSmallGqa =
    "model: {name: small-gqa, attention: gqa, layers: 2, heads: 8, kv_heads: 2, head_dim: 64, "
    "hidden: 1024, dense_intermediate: 4096, vocab: 32000, weight_dtype: bf16}\n";

std::filesystem::path with_profile()
{
  auto dir = fresh_dir("serving");
  std::ofstream(dir / "hand.yaml") << kHandProfile;
  return dir;
}

// The mean step of request `id` in a run's requests.csv (policy route).
double request_step(const std::filesystem::path& out, int id)
{
  const auto steps = requests_column(out, "route", "mean_step_s");
  REQUIRE(steps.contains(static_cast<std::uint64_t>(id)));
  return steps.at(static_cast<std::uint64_t>(id));
}

// Two GPUs of one EP group on one leaf (node0.gpu1, node1.gpu1), data-parallel attention, under the
// hand profile in `dir`: a model of hidden 16,384 and two experts, one a token, `layers` layers of
// which the first `dense` are dense (4,096 wide), in `micro_batches` micro-batches, every layer's
// exchange its own (layer granularity).
std::string ep_pair(const std::filesystem::path& dir, int layers, int dense, int micro_batches)
{
  return "name: ep-pair\nmodel: {name: moe, layers: " + std::to_string(layers) +
         ", dense_layers: " + std::to_string(dense) +
         ", dense_intermediate: 4096, heads: 1, kv_lora_rank: 64, rope_dim: 16, qk_nope_head_dim: 16, "
         "v_head_dim: 16, hidden: 16384, experts: 2, experts_per_token: 1, expert_intermediate: 128, vocab: 1000}\n"
         "profile: " +
         (dir / "hand.yaml").string() +
         "\ntopology: testbed-ndr200\ninstances: {requesters: [node0.gpu1, node1.gpu1], holders: [node0.gpu1, "
         "node1.gpu1], dp_attention: 2, ep: 2, micro_batches: " +
         std::to_string(micro_batches) +
         "}\ncorpus: {chunk_tokens: 64, seed: 0}\nworkload: {trace: trace.jsonl}\npolicies: [route]\n"
         "engine: {step: full, granularity: layer, max_batch: 256, route_protocol: absorbed}\n";
}

// `tokens` one-token requests on each GPU of ep_pair, each context on its own GPU (chunk 0 on GPU
// 0, chunk 1 on GPU 1).
std::string ep_pair_trace(int tokens)
{
  std::string t;
  for (int i = 0; i < tokens; ++i)
    t += request(2 * i, 0, 0, 0, 1, 1) + request(2 * i + 1, 0, 1, 1, 1, 1);
  return t;
}

// A run's latency figure `key` (its mean), and its step split's part `key`, s.
double mean_of(const nlohmann::json& p, const char* key)
{
  return p[key]["mean"].get<double>();
}
double split_of(const nlohmann::json& p, const char* key)
{
  return p["step_split_s"][key].get<double>();
}
} // namespace

TEST_CASE("serving step: a small dense model's decode step on one GPU is its GEMMs and attention by the roofline",
          "[serving]")
{
  const auto dir = with_profile();
  // The small model (kSmallModel); one request attending 2,048 tokens held on its own GPU.
  const std::string scenario =
      "name: one\n" + kSmallModel + "profile: " + (dir / "hand.yaml").string() +
      "\ntopology: testbed-ndr200\ninstances: {requesters: [node0.gpu0], holders: [node0.gpu0]}\n"
      "corpus: {chunk_tokens: 2048}\nworkload: {trace: trace.jsonl}\npolicies: [route]\nengine: {step: full, "
      "route_protocol: absorbed}\n";
  const nlohmann::json s = run(scenario, request(0, 0, 0, 0, 32, 3));
  // Memory at 2e12 x 0.5 B/s, BF16 at 500e12 x 0.5 FLOP/s.
  const double bw = 1e12, peak = 250e12, launch = 2e-6;
  auto gemm = [&](double rows, double k, double n, double mats) {
    return std::max((mats * k * n * 2 + rows * (k + n) * 2) / bw, 2 * rows * k * n / peak) + launch;
  };
  // Per layer, one token: query 1024 -> 8 x 96, KV down 1024 -> 288, the absorbed 8 x (64 -> 256)
  // and 8 x (256 -> 64), output 512 -> 1024, MLP 1024 -> 8192 and 4096 -> 1024; the head once.
  // Element-wise, bytes read and written: two residual norms (4 x 1024 x 2 each), the latent's
  // norm (2 x 256 x 2), RoPE on 8 query heads and the key (2 x 9 x 32 x 2), the activation
  // (4096 x 3 x 2).
  auto elementwise = [&](double bytes) { return bytes / bw + launch; };
  const double layer = gemm(1, 1024, 768, 1) + gemm(1, 1024, 288, 1) + gemm(8, 64, 256, 8) + gemm(8, 256, 64, 8) +
                       gemm(1, 512, 1024, 1) + gemm(1, 1024, 8192, 1) + gemm(1, 4096, 1024, 1) + 2 * elementwise(8192) +
                       elementwise(1024) + elementwise(1152) + elementwise(24576);
  const double head = gemm(1, 1024, 32000, 1);
  // Absorbed MLA decode per layer: 2,048 latents of 288 bf16 values, 8 query rows (576 B) and
  // partial rows (512 + 4 B); 2 x (2 x 256 + 32) FLOPs per token and row; its 8 rows fill one
  // 64-row tile over 32 tiles of 64 tokens: 32 of the 100 SMs, so it runs at 32 / 100 of the GPU.
  const double attention =
      launch + std::max((576.0 * 2048 + (576 + 516) * 8) / bw, 2.0 * (2 * 256 + 32) * 2048 * 8 / peak) / 0.32;
  const double step = 2 * layer + head + 2 * attention;
  CHECK(step_mean(s, "route") == Approx(step).epsilon(0.01));
  CHECK(s["policies"]["route"]["tpot_s"]["mean"].get<double>() == Approx(step).epsilon(0.01));
  CHECK(s["invariants"]["ok"].get<bool>());
}

TEST_CASE("serving step: an expert-parallel combine and a routed query share a spine trunk by max-min", "[serving]")
{
  const auto dir = with_profile();
  // Group 0 = node2.gpu1 (leaf 1) and node0.gpu1 (leaf 0); group 1 = node0.gpu0 and node0.gpu2
  // (its experts over NVLink). Every context is on node2.gpu0. Node2.gpu1 decodes 256 tokens
  // (they arrive together: one step); their attention stays inside node 2, their dispatch goes
  // to node0.gpu1, and node0.gpu1's experts send their outputs back from about 69.2 ms: 256 x 1/2
  // pairs x 16384 x 2 B x 61 layers, 256 MB at 25 GB/s, across leaf 0 -> leaf 1 until the step
  // ends at about 79.4 ms, as 128 streams (one a token-expert pair). Node0.gpu0's request arrives
  // at 71.5 ms and routes to node2.gpu0: its query crosses the same trunk. With oversubscription 16
  // the trunk carries 2 nodes x 8 NICs x 25 GB/s / 16 = 25 GB/s, one NIC's worth: the query, one
  // flow among 129, gets 25/129 GB/s and ends before the combine; with 1, 400 GB/s, and the query
  // moves at its NIC's 25 GB/s.
  auto scenario = [&](int oversubscription) {
    return "name: share\nmodel: {name: moe, layers: 61, heads: 8, kv_lora_rank: 512, rope_dim: 64, "
           "qk_nope_head_dim: 64, v_head_dim: 64, hidden: 16384, experts: 2, experts_per_token: 1, "
           "expert_intermediate: 128, vocab: 1000}\n"
           "profile: " +
           (dir / "hand.yaml").string() + "\n" + two_leaf_topology(oversubscription) +
           "instances: {requesters: [node2.gpu1, node0.gpu1, node0.gpu0, node0.gpu2], holders: [node2.gpu0], "
           "dp_attention: 2, ep: 2}\n"
           "corpus: {chunk_tokens: 2048}\nworkload: {trace: trace.jsonl}\npolicies: [route]\n"
           "engine: {step: full, max_batch: 256, route_protocol: absorbed}\n";
  };
  std::string trace;
  for (int i = 0; i < 256; ++i)
    trace += request(i, 0, 0, 0, 32, 1);      // session 0 -> node2.gpu1
  trace += request(256, 1e-6, 1, 0, 32, 1);   // session 1 -> node0.gpu1, after the first step
  trace += request(257, 0.0715, 2, 0, 32, 1); // session 2 -> node0.gpu0
  std::filesystem::path shared, alone;
  run(scenario(16), trace, {}, &shared);
  run(scenario(1), trace, {}, &alone);
  // The query: 8 rows x (512 + 64) bf16 values x 61 layers; at 25/129 GB/s instead of 25 it takes
  // 128 x query / 25e9 longer. Nothing else of that step crosses the trunk.
  const double query = 8.0 * (512 + 64) * 2 * 61;
  CHECK(request_step(shared, 257) - request_step(alone, 257) == Approx(128 * query / 25e9).epsilon(0.01));
}

TEST_CASE("serving step: under tensor parallelism a fetched chunk crosses InfiniBand once per node, then NVLink",
          "[serving]")
{
  const auto dir = with_profile();
  // One instance of tp 8 on node0 decodes the small dense model (8 heads: one a rank); its one
  // request attends a 2,048-token chunk held by the holder instance on node2, and fetches it.
  // Each rank fetches an eighth of the latent from its holder rank over its own NIC and forwards
  // it to the 7 others over NVLink: MLA's one latent head is needed whole on every rank.
  const std::string scenario =
      "name: tp\n" + kSmallModel + "profile: " + (dir / "hand.yaml").string() +
      "\ntopology: testbed-ndr200\ninstances: {requesters: node0, holders: node2, tp: 8}\n"
      "corpus: {chunk_tokens: 2048}\nworkload: {trace: trace.jsonl}\npolicies: [fetch]\nengine: {step: full}\n";
  const nlohmann::json s = run(scenario, request(0, 0, 0, 0, 32, 3));
  // The chunk's latent: 2,048 tokens x (256 + 32) BF16 values x 2 layers.
  const double chunk = 2048.0 * 288 * 2 * 2;
  const nlohmann::json& by = s["policies"]["fetch"]["wire_bytes_by_fabric"];
  CHECK(by["ib-spine"].get<double>() + by["ib-same-leaf"].get<double>() == Approx(chunk));
  CHECK(by["nvlink"].get<double>() == Approx(7 * chunk));
  CHECK(s["policies"]["fetch"]["decisions"]["fetch"].get<double>() == 1);
  CHECK(s["invariants"]["ok"].get<bool>());
}

TEST_CASE("serving step: a batch whose own KV would pass the HBM left waits, and the wait is counted", "[serving]")
{
  const auto dir = with_profile();
  // The small dense model keeps (256 + 32) BF16 values a token and layer, 2 layers: 1,152 B a
  // token. Four requests of 3 output tokens arrive at once: 3,456 B each. The hand GPU's 80 GB
  // less a cache budget of 80 GB - 7,000 B leaves 7,000 B for the batch's own KV: two requests.
  auto scenario = [&](const std::string& cache) {
    return "name: hbm\n" + kSmallModel + "profile: " + (dir / "hand.yaml").string() +
           "\ntopology: testbed-ndr200\ninstances: {requesters: [node0.gpu0], holders: [node0.gpu0]}\n"
           "corpus: {chunk_tokens: 2048}\nworkload: {trace: trace.jsonl}\npolicies: [route]\nengine: {cache_budget: " +
           cache + ", route_protocol: absorbed}\n";
  };
  std::string trace;
  for (int i = 0; i < 4; ++i)
    trace += request(i, 0, i, 0, 32, 3);
  const nlohmann::json bound = run(scenario("79999993000B"), trace)["policies"]["route"];
  // The first step starts on the first arrival, alone: {0}. Then {0, 1} twice with 2 and 3
  // waiting; 0 is done, {1, 2} with 3 waiting; 1 is done, {2, 3} twice; {3}. Seven steps, three
  // bound by HBM, five request-steps waiting in them.
  CHECK(bound["iterations"].get<int>() == 7);
  CHECK(bound["steps"].get<int>() == 12);
  CHECK(bound["memory"]["hbm_bound_steps"].get<int>() == 3);
  CHECK(bound["memory"]["hbm_waiting"].get<int>() == 5);
  // With room for all four: {0}, {0, 1, 2, 3} twice, {1, 2, 3}; nothing waits.
  const nlohmann::json free = run(scenario("8GB"), trace)["policies"]["route"];
  CHECK(free["iterations"].get<int>() == 4);
  CHECK(free["memory"]["hbm_bound_steps"].get<int>() == 0);
  CHECK(free["memory"]["hbm_waiting"].get<int>() == 0);
}

TEST_CASE("serving step: experts drawn per token give the expected shares' step when every token picks every expert",
          "[serving]")
{
  const auto dir = with_profile();
  // Two experts, both picked by every token, over ep 2: whatever the draws, each GPU sends its
  // peer one pair per token and layer and its experts run one expert's weights, which is what the
  // expected shares say; a zipf popularity cannot change that either. Four tokens on one GPU and
  // one on the other.
  auto scenario = [&](const std::string& routing, int per_token = 2) {
    return "name: drawn\nmodel: {name: moe, layers: 4, heads: 32, kv_lora_rank: 512, rope_dim: 64, "
           "qk_nope_head_dim: 64, v_head_dim: 64, hidden: 4096, experts: 2, experts_per_token: " +
           std::to_string(per_token) +
           ", expert_intermediate: 512, vocab: 1000}\n"
           "profile: " +
           (dir / "hand.yaml").string() +
           "\ntopology: testbed-ndr200\ninstances: {requesters: [node0.gpu1, node1.gpu1], holders: [node2.gpu0], "
           "dp_attention: 2, ep: 2, expert_routing: " +
           routing +
           "}\ncorpus: {chunk_tokens: 2048}\nworkload: {trace: trace.jsonl}\npolicies: [route]\n"
           "engine: {step: full, route_protocol: absorbed}\n";
  };
  std::string trace;
  for (int i = 0; i < 4; ++i)
    trace += request(i, 0, 0, 0, 32, 2);
  trace += request(4, 0, 1, 0, 32, 2);
  const nlohmann::json expected = run(scenario("expected"), trace)["policies"]["route"];
  for (const char* routing : {"uniform", "zipf"}) {
    INFO(routing);
    const nlohmann::json drawn = run(scenario(routing), trace)["policies"]["route"];
    CHECK(drawn["step_latency_s"]["mean"].get<double>() ==
          Approx(expected["step_latency_s"]["mean"].get<double>()).epsilon(1e-9));
    CHECK(drawn["ep_dispatch_s"]["mean"].get<double>() ==
          Approx(expected["ep_dispatch_s"]["mean"].get<double>()).epsilon(1e-9));
    CHECK(drawn["ep_combine_s"]["mean"].get<double>() ==
          Approx(expected["ep_combine_s"]["mean"].get<double>()).epsilon(1e-9));
  }
  // With one expert of the two a token, the draws send whole tokens where the expected shares
  // send halves: the drawn path is the one that ran above.
  const nlohmann::json half = run(scenario("expected", 1), trace)["policies"]["route"];
  const nlohmann::json whole = run(scenario("uniform", 1), trace)["policies"]["route"];
  CHECK(whole["ep_combine_s"]["mean"].get<double>() !=
        Approx(half["ep_combine_s"]["mean"].get<double>()).epsilon(1e-6));
}

TEST_CASE("serving step: a small GQA model's decode step on one GPU is its GEMMs and attention by the roofline",
          "[serving]")
{
  const auto dir = with_profile();
  const std::string scenario =
      "name: one\n" + kSmallGqa + "profile: " + (dir / "hand.yaml").string() +
      "\ntopology: testbed-ndr200\ninstances: {requesters: [node0.gpu0], holders: [node0.gpu0]}\n"
      "corpus: {chunk_tokens: 2048}\nworkload: {trace: trace.jsonl}\npolicies: [route]\nengine: {step: full}\n";
  const nlohmann::json s = run(scenario, request(0, 0, 0, 0, 32, 3));
  const double bw = 1e12, peak = 250e12, launch = 2e-6;
  auto gemm = [&](double rows, double k, double n) {
    return std::max((k * n * 2 + rows * (k + n) * 2) / bw, 2 * rows * k * n / peak) + launch;
  };
  // Per layer, one token: query, key and value 1024 -> (8 + 2 x 2) x 64, output 512 -> 1024, MLP
  // 1024 -> 8192 and 4096 -> 1024; the head once. Element-wise, bytes read and written: two
  // residual norms (4 x 1024 x 2 each), RoPE on 8 query and 2 KV heads (2 x 10 x 64 x 2), the
  // activation (4096 x 3 x 2).
  auto elementwise = [&](double bytes) { return bytes / bw + launch; };
  const double layer = gemm(1, 1024, 768) + gemm(1, 512, 1024) + gemm(1, 1024, 8192) + gemm(1, 4096, 1024) +
                       2 * elementwise(8192) + elementwise(2560) + elementwise(24576);
  const double head = gemm(1, 1024, 32000);
  // GQA decode per layer: 2,048 tokens' keys and values of 2 heads x 64 bf16 values (512 B), 8
  // query rows of 64 bf16 values (128 B) and their outputs (128 + 4 B); 4 x 64 FLOPs per token and
  // row; one thread block per KV head and 64 tokens, 2 x 32 of the 100 SMs.
  const double attention = launch + std::max((512.0 * 2048 + (128 + 132) * 8) / bw, 4.0 * 64 * 2048 * 8 / peak) / 0.64;
  CHECK(step_mean(s, "route") == Approx(2 * layer + head + 2 * attention).epsilon(0.01));
  CHECK(s["invariants"]["ok"].get<bool>());
}

TEST_CASE("serving step: a routed GQA query carries each head's query and output, whatever the profile routes MLA's in",
          "[serving]")
{
  const auto dir = with_profile(); // extends a profile whose MLA queries go compressed
  const std::string scenario =
      "name: route\n" + kSmallGqa + "profile: " + (dir / "hand.yaml").string() +
      "\ntopology: testbed-ndr200\ninstances: {requesters: [node0.gpu0], holders: [node2.gpu0]}\n"
      "corpus: {chunk_tokens: 2048}\nworkload: {trace: trace.jsonl}\npolicies: [route]\nengine: {step: full}\n";
  const nlohmann::json s = run(scenario, request(0, 0, 0, 0, 32, 3));
  // 3 decoded tokens x 2 layers x 8 rows x (128 B out + 132 B back).
  double wire = 0;
  for (const auto& [fabric, bytes] : s["policies"]["route"]["wire_bytes_by_fabric"].items())
    wire += bytes.get<double>();
  CHECK(wire == Approx(3.0 * 2 * 8 * (128 + 132)));
  CHECK(s["invariants"]["ok"].get<bool>());
}

TEST_CASE("serving step: under tensor parallelism each rank fetches its own GQA heads' share, nothing over NVLink",
          "[serving]")
{
  const auto dir = with_profile();
  // Instances of tp 4 decode the small GQA model: its 2 KV heads split two ways, each copied on
  // two ranks. Each rank fetches its KV head's share of every token from its holder rank: a half
  // of the chunk per rank, twice the chunk over InfiniBand, none forwarded.
  auto scenario = [&](const std::string& model) {
    return "name: tp\n" + model + "profile: " + (dir / "hand.yaml").string() +
           "\ntopology: testbed-ndr200\ninstances: {requesters: [node0.gpu0, node0.gpu1, node0.gpu2, node0.gpu3], "
           "holders: [node2.gpu0, node2.gpu1, node2.gpu2, node2.gpu3], tp: 4}\n"
           "corpus: {chunk_tokens: 2048}\nworkload: {trace: trace.jsonl}\npolicies: [fetch]\nengine: {step: full}\n";
  };
  const nlohmann::json s = run(scenario(kSmallGqa), request(0, 0, 0, 0, 32, 3));
  // The chunk's keys and values: 2,048 tokens x 2 heads x 2 x 64 BF16 values x 2 layers.
  const double chunk = 2048.0 * 2 * 2 * 64 * 2 * 2;
  const nlohmann::json& by = s["policies"]["fetch"]["wire_bytes_by_fabric"];
  CHECK(by["ib-spine"].get<double>() + by["ib-same-leaf"].get<double>() == Approx(2 * chunk));
  CHECK(by.value("nvlink", 0.0) == 0);
  CHECK(s["policies"]["fetch"]["decisions"]["fetch"].get<double>() == 1);
  CHECK(s["invariants"]["ok"].get<bool>());
}

TEST_CASE("serving step: a requester GPU that serves calls shares its compute with them under engine.interference",
          "[serving]")
{
  const auto dir = with_profile();
  // Two one-GPU instances on node0 decode one step each, both attending the chunk that node0.gpu0
  // holds: node0.gpu0 (session 0) attends it on its own GPU, node0.gpu1 (session 1) routes its
  // query there. The routed kernel (8 rows over 2,048 tokens: 32 tiles of the 100 SMs, a share
  // of 0.32) lands a few microseconds in, while node0.gpu0 runs its own step's tail (its GEMMs,
  // about 0.1 ms), which fills the GPU. Sharing, the two run at 1 / 1.32 of their speed until the
  // routed kernel's work w is done: it takes 1.32 w, and node0.gpu0's own tail ends 0.32 w late.
  const std::string scenario =
      "name: interference\n" + kSmallModel + "profile: " + (dir / "hand.yaml").string() +
      "\ntopology: testbed-ndr200\ninstances: {requesters: [node0.gpu0, node0.gpu1], holders: [node0.gpu0]}\n"
      "corpus: {chunk_tokens: 2048}\nworkload: {trace: trace.jsonl}\npolicies: [route]\nengine: {step: full, "
      "route_protocol: absorbed}\n";
  const std::string trace = request(0, 0, 0, 0, 32, 1) + request(1, 0, 1, 0, 32, 1);
  std::filesystem::path apart_dir, shared_dir;
  const nlohmann::json apart = run(scenario, trace, {"engine.interference=false"}, &apart_dir);
  const nlohmann::json shared = run(scenario, trace, {"engine.interference=true"}, &shared_dir);
  // Apart, node0.gpu0's kernels are the routed one alone: its work is w.
  auto holder = [](const std::filesystem::path& out) {
    std::map<std::string, double> figures;
    for (const char* column : {"kernels", "work_s", "own_work_s", "own_delay_s"})
      figures[column] = csv_column(out / "holders.csv", "gpu", column).at("node0.gpu0");
    return figures;
  };
  const auto a = holder(apart_dir), s = holder(shared_dir);
  const double w = a.at("work_s");
  CHECK(a.at("kernels") == 1);
  CHECK(a.at("own_delay_s") == 0);
  CHECK(s.at("own_delay_s") == Approx(0.32 * w).epsilon(1e-6));
  CHECK(s.at("own_work_s") == Approx(a.at("own_work_s")));
  CHECK(s.at("work_s") == Approx(w + a.at("own_work_s"))); // its own kernels run on the same compute
  // The routed call, and so node0.gpu1's step, is 0.32 w longer; node0.gpu0's own step too.
  CHECK(request_step(shared_dir, 1) - request_step(apart_dir, 1) == Approx(0.32 * w).epsilon(1e-6));
  CHECK(request_step(shared_dir, 0) - request_step(apart_dir, 0) == Approx(0.32 * w).epsilon(1e-6));
  // Its steps over the same less the calls' hold on them.
  const double step0 = request_step(shared_dir, 0);
  CHECK(shared["policies"]["route"]["holder_tpot_inflation"].get<double>() ==
        Approx(step0 / (step0 - 0.32 * w)).epsilon(1e-9));
  CHECK(!apart["policies"]["route"].contains("holder_tpot_inflation"));
  CHECK(shared["invariants"]["ok"].get<bool>());
}

TEST_CASE("serving step: two micro-batches pipeline each layer, the weights read twice", "[serving]")
{
  const auto dir = with_profile();
  // The EP pair (ep_pair) with four MoE layers, each GPU decoding `tokens` one-token requests: each
  // GPU sends its peer half of its tokens each layer, few enough that every message is its IB probe
  // and little else.
  const int layers = 4;
  const nlohmann::json two = run(ep_pair(dir, layers, 0, 2), ep_pair_trace(16))["policies"]["route"];
  const nlohmann::json half = run(ep_pair(dir, layers, 0, 1), ep_pair_trace(8))["policies"]["route"];
  for (const nlohmann::json* p : {&two, &half})
    CHECK((*p)["decisions"]["route"].get<int>() == 0); // every context on its own GPU
  // Each micro-batch runs the GEMMs over its 8 rows: twice an 8-token batch's.
  CHECK(split_of(two, "gemm") == Approx(2 * split_of(half, "gemm")));
  // One micro-batch of 8 tokens, per layer: its compute a (attention and GEMMs), then its
  // dispatch d, the experts e and the combine c, one after the other (both GPUs alike).
  const double a = (split_of(half, "attention") + split_of(half, "gemm")) / layers;
  const double d = mean_of(half, "ep_dispatch_s") / layers, c = mean_of(half, "ep_combine_s") / layers;
  const double e = split_of(half, "moe") / layers - d - c;
  CHECK(mean_of(half, "step_latency_s") == Approx(layers * (a + d + e + c)));
  // With two such micro-batches A and B, each GPU runs per layer A's compute, B's, A's experts,
  // B's. A's dispatch lands while B computes (d < a), so A's experts follow B's compute at once;
  // the next layer's A waits for A's combine and for B's experts: every layer but the last takes
  // 2a + e + max(e, d, c). B's combine is back before the next layer's B may start (c < a). The
  // last layer ends when B's combine is back: 2a + max(e, d) + e + c.
  REQUIRE(d < a);
  REQUIRE(c < a);
  REQUIRE(c > std::max(e, d)); // the combine is longer than the experts it could hide behind
  const double pipelined = (layers - 1) * (2 * a + e + std::max({e, d, c})) + 2 * a + std::max(e, d) + e + c;
  CHECK(mean_of(two, "step_latency_s") == Approx(pipelined).epsilon(1e-6));
  // Against a full overlap of the all-to-all with the compute (2a + 2e a layer), each layer but the
  // last exposes its combine past the experts.
  CHECK(mean_of(two, "step_latency_s") > layers * (2 * a + 2 * e) + (layers - 1) * (c - e) * 0.999);
}

TEST_CASE("serving step: two micro-batches run a dense layer's halves, then a MoE layer's pipeline", "[serving]")
{
  const auto dir = with_profile();
  // The group above with a dense layer before one MoE layer (which, the last, runs the output
  // head): each halves of its compute (a0, a1) run one after the other, then the MoE layer's
  // experts (e each), dispatch (d) and combine (c). a1, d, e and c come from a run of that MoE
  // layer alone, one micro-batch of 8 tokens; a0 + a1 from the two layers' run.
  const nlohmann::json moe = run(ep_pair(dir, 1, 0, 1), ep_pair_trace(8))["policies"]["route"];
  const nlohmann::json both = run(ep_pair(dir, 2, 1, 1), ep_pair_trace(8))["policies"]["route"];
  const nlohmann::json two = run(ep_pair(dir, 2, 1, 2), ep_pair_trace(16))["policies"]["route"];
  const double a1 = split_of(moe, "attention") + split_of(moe, "gemm");
  const double d = mean_of(moe, "ep_dispatch_s"), c = mean_of(moe, "ep_combine_s");
  const double e = split_of(moe, "moe") - d - c;
  const double A = split_of(both, "attention") + split_of(both, "gemm");
  REQUIRE(A > 1.5 * a1); // the dense layer's compute weighs, unlike the MoE layer's
  // The dense layer's halves, 2 a0; the MoE layer's, 2 a1: the first micro-batch's dispatch lands
  // while the second computes (d < a1), its experts follow, then the second's (after its dispatch
  // too), whose combine ends the step.
  REQUIRE(d < a1);
  CHECK(mean_of(two, "step_latency_s") == Approx(2 * A + std::max(e, d) + e + c).epsilon(1e-6));
}
