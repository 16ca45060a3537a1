#include "sim/model/serving.hpp"
#include "workloads/compressed_file.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

using namespace xattn;
using namespace xattn::sim;

namespace
{
// A GPU written out in the test: round peaks, so that every expected time below is worked by hand.
calibrate::Profile hand_gpu()
{
  calibrate::Profile p;
  p.gpu = {.sm_count = 100,
           .hbm = core::BytesPerSec(2e12),
           .bf16 = core::FlopsPerSec(500e12),
           .fp8 = core::FlopsPerSec(1000e12),
           .memory_efficiency = 0.5,
           .attention_efficiency = 0.5,
           .gemm_efficiency = 0.5,
           .launch = core::Seconds(2e-6)};
  return p;
}

// A small dense model: 2 layers, hidden 1024, 8 heads, MLA latent 256 + 32 RoPE, no query
// down-projection, a 4096-wide MLP, 32,000 tokens of vocabulary, BF16 weights.
ModelSpec small_dense()
{
  ModelSpec m;
  m.name = "small";
  m.layers = 2;
  m.heads = 8;
  m.kv_lora_rank = 256;
  m.rope_dim = 32;
  m.qk_nope_head_dim = 64;
  m.v_head_dim = 64;
  m.hidden = 1024;
  m.dense_layers = 2;
  m.dense_intermediate = 4096;
  m.vocab = 32000;
  m.weight_bytes = 2;
  return m;
}
} // namespace

TEST_CASE("serving: DeepSeek-V3 and Kimi K2 hold their published parameter counts", "[serving]")
{
  // Published: DeepSeek-V3 671B total, 37B activated per token (arXiv 2412.19437); Kimi K2 1T
  // total, 32B activated (its model card). The counts come from the presets' dimensions only.
  const Parameters v3 = parameters(load_model("deepseek-v3"));
  CHECK(v3.total == Approx(671e9).epsilon(0.01));
  CHECK(v3.active == Approx(37e9).epsilon(0.02));
  // DeepSeek-V3.2 adds its indexer's projections per layer: 1536 -> 64 x 128, 7168 -> 128, 7168 -> 64.
  CHECK(parameters(load_model("deepseek-v3.2")).total - v3.total ==
        Approx(61.0 * (1536.0 * 64 * 128 + 7168.0 * 128 + 7168.0 * 64)));
  const Parameters k2 = parameters(load_model("kimi-k2"));
  CHECK(k2.total == Approx(1.0e12).epsilon(0.04));
  CHECK(k2.active == Approx(32e9).epsilon(0.02));
  // One DeepSeek-V3 layer's attention, by hand: 7168 x 1536 + 1536 x 128 x 192 + 7168 x 576 +
  // 512 x 128 x 256 + 128 x 128 x 7168.
  CHECK(v3.attention ==
        Approx(7168.0 * 1536 + 1536.0 * 128 * 192 + 7168.0 * 576 + 512.0 * 128 * 256 + 128.0 * 128 * 7168));
}

TEST_CASE("serving: a GPU holds the shared weights whole and its share of the routed experts", "[serving]")
{
  const ModelSpec m = load_model("deepseek-v3");
  // 58 MoE layers x 256 experts x 3 x 7168 x 2048 routed parameters, 1 B each in FP8; the
  // embedding and the head (129,280 x 7168 each) and 58 gates (7168 x 256) at 2 B in BF16.
  const double routed = 58.0 * 256 * 3 * 7168 * 2048;
  const double bf16 = 2.0 * 129280 * 7168 + 58.0 * 7168 * 256;
  const double rest = parameters(m).total - routed - bf16;
  CHECK(weights_per_gpu(m, {.dp_attention = 32, .ep = 32}).value() == Approx(rest + 2 * bf16 + routed / 32));
  CHECK(weights_per_gpu(m, {.dp_attention = 32, .ep = 32}).value() < 80e9);
  CHECK(weights_per_gpu(m, {.dp_attention = 8, .ep = 8}).value() > 80e9); // EP 8 does not fit an H100
}

TEST_CASE("serving: a small dense model's decode step on one GPU, worked by hand", "[serving]")
{
  const ModelSpec m = small_dense();
  const calibrate::Profile p = hand_gpu();
  // Memory at 2e12 x 0.5 = 1e12 B/s, BF16 at 500e12 x 0.5 = 250e12 FLOP/s, 2 us per launch.
  const double bw = 1e12, peak = 250e12, launch = 2e-6;
  auto gemm = [&](double rows, double k, double n, double mats) {
    const double bytes = mats * k * n * 2 + rows * (k + n) * 2, flops = 2 * rows * k * n;
    return std::max(bytes / bw, flops / peak) + launch;
  };
  auto elementwise = [&](double bytes) { return bytes / bw + launch; };
  for (double tokens : {1.0, 64.0, 4096.0}) {
    // Per layer: query 1024 -> 8 x 96, KV down 1024 -> 288, absorbed query 8 heads x (64 -> 256),
    // values 8 heads x (256 -> 64), output 512 -> 1024, MLP 1024 -> 8192 and 4096 -> 1024 (BF16
    // weights: no quantisation). Element-wise: two residual norms (hidden state and residual read
    // and written, 4 x 1024 x 2 B a token each), the KV latent's norm (2 x 256 x 2 B), RoPE on 8
    // query heads and the key (2 x 9 x 32 x 2 B), the activation (4096 x 3 x 2 B).
    const double layer = gemm(tokens, 1024, 768, 1) + gemm(tokens, 1024, 288, 1) + gemm(8 * tokens, 64, 256, 8) +
                         gemm(8 * tokens, 256, 64, 8) + gemm(tokens, 512, 1024, 1) + gemm(tokens, 1024, 8192, 1) +
                         gemm(tokens, 4096, 1024, 1) + 2 * elementwise(tokens * 8192) + elementwise(tokens * 1024) +
                         elementwise(tokens * 1152) + elementwise(tokens * 24576);
    const double head = gemm(tokens, 1024, 32000, 1);
    CHECK(dense_time(m, p, tokens, 0, 2).value() == Approx(2 * layer + head).epsilon(0.01));
    CHECK(dense_time(m, p, tokens, 0, 1).value() == Approx(layer).epsilon(0.01));
    // A prefill chunk's rows need the head only for the prompt's last token.
    CHECK(dense_time(m, p, tokens, 0, 2, 1, 1).value() == Approx(2 * layer + gemm(1, 1024, 32000, 1)).epsilon(0.01));
  }
  // One token reads the weights at HBM speed: the output head's 32,000 x 1024 x 2 B = 65.5 MB in
  // 65.5 us. 4096 tokens are bound by the tensor cores: 2 x 4096 x 1024 x 32000 / 250e12 = 1.07 ms.
  CHECK((dense_time(m, p, 1, 0, 2) - dense_time(m, p, 1, 0, 1) * 2).value() == Approx(65.6e-6 + launch).epsilon(0.01));
  CHECK((dense_time(m, p, 4096, 0, 2) - dense_time(m, p, 4096, 0, 1) * 2).value() ==
        Approx(2.0 * 4096 * 1024 * 32000 / peak + launch).epsilon(0.01));
}

TEST_CASE("serving: the small dense model's step split over two tensor-parallel ranks, worked by hand", "[serving]")
{
  const ModelSpec m = small_dense();
  calibrate::Profile p = hand_gpu();
  const double bw = 1e12, peak = 250e12, launch = 2e-6;
  auto gemm = [&](double rows, double k, double n, double mats) {
    const double bytes = mats * k * n * 2 + rows * (k + n) * 2, flops = 2 * rows * k * n;
    return std::max(bytes / bw, flops / peak) + launch;
  };
  auto elementwise = [&](double bytes) { return bytes / bw + launch; };
  for (double tokens : {1.0, 64.0}) {
    // Each rank: 4 of the 8 heads (query 1024 -> 4 x 96, absorbed and values over 4 heads, output
    // 4 x 64 -> 1024), the whole KV down (1024 -> 288, MLA's one latent), half the MLP (1024 ->
    // 4096, 2048 -> 1024) and half the vocabulary. Element-wise: the norms whole, RoPE on 4 query
    // heads and the key (2 x 5 x 32 x 2 B a token), half the activation (2048 x 3 x 2 B).
    const double layer = gemm(tokens, 1024, 384, 1) + gemm(tokens, 1024, 288, 1) + gemm(4 * tokens, 64, 256, 4) +
                         gemm(4 * tokens, 256, 64, 4) + gemm(tokens, 256, 1024, 1) + gemm(tokens, 1024, 4096, 1) +
                         gemm(tokens, 2048, 1024, 1) + 2 * elementwise(tokens * 8192) + elementwise(tokens * 1024) +
                         elementwise(tokens * 640) + elementwise(tokens * 12288);
    CHECK(dense_time(m, p, tokens, 0, 2, 2).value() == Approx(2 * layer + gemm(tokens, 1024, 16000, 1)).epsilon(1e-9));
  }
  // All-reduces: 10 us fixed, 100 GB/s of bus bandwidth. 64 tokens x 1024 x 2 B = 131,072 B over
  // 2 ranks moves 2 x 1/2 of it: 10 us + 1.31 us; two a layer, two layers.
  p.tp_all_reduce_latency = core::Seconds(10e-6);
  p.tp_all_reduce_bus = core::BytesPerSec(100e9);
  CHECK(all_reduce_time(p, core::Bytes(131072), 2).value() == Approx(10e-6 + 131072 / 100e9));
  CHECK(all_reduce_time(p, core::Bytes(1e6), 8).value() == Approx(10e-6 + 2 * 7.0 / 8 * 1e6 / 100e9));
  CHECK(all_reduce_time(p, core::Bytes(1e6), 1).value() == 0);
  CHECK(tensor_parallel_time(m, p, 64, 0, 2, 2).value() == Approx(4 * (10e-6 + 131072 / 100e9)));
  CHECK(tensor_parallel_time(m, p, 64, 0, 2, 1).value() == 0);
  // A GPU of tp 8 holds an eighth of DeepSeek-V3's 673 GB (671 B parameters in FP8, 1.9 B of
  // them in BF16): 84 GB, too much for an H100's 80, not for an H200.
  const ModelSpec v3 = load_model("deepseek-v3");
  CHECK(weights_per_gpu(v3, {.tp = 8}).value() == Approx(weights_per_gpu(v3, {}).value() / 8));
  CHECK(weights_per_gpu(v3, {.tp = 8}).value() == Approx(673e9 / 8).epsilon(0.01));
}

TEST_CASE("serving: the all-reduce line against NCCL's measured all-reduce among 2, 4 and 8 H100 ranks", "[serving]")
{
  // vidur's NCCL all-reduce table on an H100 DGX (calibrate/data/vidur-h100-dgx/, milliseconds);
  // the profile's line was fitted to the 8-rank rows, the 2- and 4-rank rows are held out.
  const calibrate::Profile p = calibrate::load_profile("h100-ndr200-ibgda");
  std::istringstream in(
      workloads::read_whole_file(XATTN_SOURCE_DIR "/calibrate/data/vidur-h100-dgx/all_reduce.csv.zst"));
  std::string line;
  std::getline(in, line);
  REQUIRE(line.find("time_stats.all_reduce.median") != std::string::npos);
  std::map<int, std::vector<double>> errors, decode; // by ranks: |model - measured| / measured
  // The 8-rank rows' least-squares fit of t = a + c x, x = 2 (n - 1) / n x S, on relative errors
  // (weights 1 / t^2): its sums.
  double sw = 0, swx = 0, swxx = 0, swt = 0, swxt = 0;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream cells(line);
    for (std::string c; std::getline(cells, c, ',');)
      f.push_back(c);
    REQUIRE(f.size() == 12);
    const double median = std::stod(f[4]) * 1e-3, bytes = std::stod(f[8]);
    const int ranks = std::stoi(f[7]);
    REQUIRE(f[10] == f[7]); // every rank in one node
    const double e = std::abs(all_reduce_time(p, core::Bytes(bytes), ranks).value() - median) / median;
    errors[ranks].push_back(e);
    if (bytes >= 64e3 && bytes <= 4e6) decode[ranks].push_back(e); // a decode batch's hidden states
    if (ranks == 8) {
      const double x = 2.0 * 7 / 8 * bytes, w = 1 / (median * median);
      sw += w, swx += w * x, swxx += w * x * x, swt += w * median, swxt += w * x * median;
    }
  }
  // The profile's two values are that fit, rounded to three figures.
  const double det = sw * swxx - swx * swx;
  const double fixed = (swxx * swt - swx * swxt) / det, per_byte = (sw * swxt - swx * swt) / det;
  CHECK(p.tp_all_reduce_latency.value() == Approx(fixed).epsilon(0.005));
  CHECK(p.tp_all_reduce_bus.value() == Approx(1 / per_byte).epsilon(0.005));
  auto median_of = [](std::vector<double> v) {
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  };
  REQUIRE(errors.size() == 3);
  for (int ranks : {2, 4, 8}) {
    CAPTURE(ranks, median_of(errors[ranks]), median_of(decode[ranks]));
    CHECK(errors[ranks].size() == 994);
    CHECK(median_of(errors[ranks]) < (ranks == 8 ? 0.06 : 0.10));
    // At decode sizes the 2-rank rows sit at about 41 us, the line at 29-30 us: 26% low there.
    CHECK(median_of(decode[ranks]) < 0.30);
  }
}

TEST_CASE("serving: routed experts by the roofline, from the tokens the group sends", "[serving]")
{
  ModelSpec m = load_model("deepseek-v3");
  const calibrate::Profile p = hand_gpu();
  // EP 32: 8 experts per GPU. 128 tokens per GPU over 32 GPUs (4096 tokens) each to 8 of 256
  // experts: every expert is hit, (1 - 8/256)^4096 is nil; 4096 x 8 / 32 = 1024 pairs here.
  CHECK(active_local_experts(m, 32, 4096) == Approx(8.0));
  // One token: 8 / 256 of each GPU's 8 experts, in expectation.
  CHECK(active_local_experts(m, 32, 1) == Approx(8.0 * 8 / 256));
  // FP8 at 1000e12 x 0.5 FLOP/s; 1024 pairs through 8 experts' 7168 x 4096 and 2048 x 7168.
  const double fp8 = 500e12, bw = 1e12, launch = 2e-6;
  const double up = std::max((8.0 * 7168 * 4096 + 1024.0 * (7168 + 4096) * 2) / bw, 2.0 * 1024 * 7168 * 4096 / fp8);
  const double down = std::max((8.0 * 2048 * 7168 + 1024.0 * (2048 + 7168) * 2) / bw, 2.0 * 1024 * 2048 * 7168 / fp8);
  // Between them the activation, which writes the down GEMM's input in FP8 with a scale a 128
  // values: 1024 x 2048 x (2 x 2 + 1 + 4 / 128) B. The dispatch delivered the up GEMM's in FP8.
  const double activation = 1024.0 * 2048 * (4 + 1 + 4.0 / 128) / bw;
  CHECK(expert_time(m, p, 32, 4096).value() == Approx(up + down + activation + 3 * launch).epsilon(0.01));
  // DeepEP's bytes per token-expert pair: 7168 FP8 values and 56 fp32 scales out, 7168 BF16 back.
  CHECK(dispatch_bytes(m).value() == 7168 + 56 * 4);
  CHECK(combine_bytes(m).value() == 2 * 7168);
}

TEST_CASE("serving: an FP8 GEMM quantises its input first, and DeepSeek-V3's element-wise kernels, by hand",
          "[serving]")
{
  const ModelSpec m = load_model("deepseek-v3");
  const calibrate::Profile p = hand_gpu();
  const double bw = 1e12, launch = 2e-6, fp8 = 500e12;
  // 64 rows through the output projection, 16384 -> 7168 in FP8: the quantisation reads 64 x
  // 16384 BF16 values and writes them in FP8 with a scale a 128 (3.03 B a value), then the GEMM.
  const double gemm = std::max((16384.0 * 7168 + 64.0 * (16384 + 7168) * 2) / bw, 2.0 * 64 * 16384 * 7168 / fp8);
  const double quantise = 64.0 * 16384 * (3 + 4.0 / 128) / bw;
  CHECK(gemm_time(m, p, 64, 16384, 7168).value() == Approx(gemm + quantise + 2 * launch).epsilon(1e-9));
  CHECK(gemm_time(m, p, 64, 16384, 7168, 1, 0, true).value() == Approx(gemm + launch).epsilon(1e-9));
  // BF16 weights (the router's, the head's) take BF16 input: no quantisation.
  CHECK(gemm_time(m, p, 64, 7168, 256, 1, 2).value() ==
        Approx(std::max((7168.0 * 256 * 2 + 64.0 * (7168 + 256) * 2) / bw, 2.0 * 64 * 7168 * 256 / 250e12) + launch)
            .epsilon(1e-9));
  // One layer at 64 tokens: two residual norms (4 x 7168 x 2 B a token each), the query and KV
  // latents' norms (2 x 1536 x 2 B, 2 x 512 x 2 B), RoPE on 128 query heads and the key
  // (2 x 129 x 64 x 2 B).
  auto kernel = [&](double bytes_per_token) { return 64 * bytes_per_token / bw + launch; };
  const double layer = 2 * kernel(4 * 7168 * 2) + kernel(2 * 1536 * 2) + kernel(2 * 512 * 2) + kernel(2 * 129 * 64 * 2);
  CHECK(elementwise_time(m, p, 64).value() == Approx(layer).epsilon(1e-9));
  // Over 8 tensor-parallel ranks, RoPE covers 16 query heads and the key.
  CHECK((elementwise_time(m, p, 64) - elementwise_time(m, p, 64, 8)).value() ==
        Approx(64 * (129 - 17) * 64 * 2 * 2 / bw).epsilon(1e-9));
  CHECK(elementwise_time(m, p, 0).value() == 0);
  // An MoE layer's MLP: the router (its BF16 gate, then the top-k over 256 fp32 scores) and the
  // shared expert: gate and up 7168 -> 4096 and down 2048 -> 7168 in FP8, each input quantised,
  // the activation between them (2 x 2048 BF16 values read, 2048 written a token).
  auto fp8_gemm = [&](double k, double n) {
    return std::max((k * n + 64 * (k + n) * 2) / bw, 2 * 64 * k * n / fp8) + launch + kernel(k * (3 + 4.0 / 128));
  };
  const double router = std::max((7168.0 * 256 * 2 + 64.0 * (7168 + 256) * 2) / bw, 2.0 * 64 * 7168 * 256 / 250e12) +
                        launch + kernel(256 * 4);
  const double shared = fp8_gemm(7168, 4096) + kernel(2048 * 6) + fp8_gemm(2048, 7168);
  CHECK(mlp_time(m, p, 64, true).value() == Approx(router + shared).epsilon(1e-9));
}

TEST_CASE("serving: a model without the serving dimensions is named with the keys it lacks", "[serving]")
{
  ModelSpec m = small_dense();
  CHECK(missing_for_serving(m).empty());
  m.hidden = 0;
  m.vocab = 0;
  CHECK(missing_for_serving(m) ==
        "model 'small' lacks hidden, vocab, which the serving step (engine.step: full) needs");
}
