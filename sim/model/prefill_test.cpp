// Prefill's compute (prefill.hpp) against answers worked in the test: the causal pair counts, and
// the attention and indexer of DeepSeek-V3.2, DeepSeek-V3's and Qwen3-8B's attention, on a GPU of
// round figures, where each term is one side of its roofline.
#include "sim/model/prefill.hpp"

#include <catch2/catch.hpp>

using namespace xattn;
using namespace xattn::sim;

namespace
{
// HBM 1 TB/s and BF16 100 TFLOP/s, FP8 200 TFLOP/s, every efficiency 1, a 1 us launch.
calibrate::Profile round_gpu()
{
  calibrate::Profile p;
  p.gpu = {.sm_count = 100,
           .hbm = core::BytesPerSec(1e12),
           .bf16 = core::FlopsPerSec(100e12),
           .fp8 = core::FlopsPerSec(200e12),
           .memory_efficiency = 1,
           .attention_efficiency = 1,
           .gemm_efficiency = 1,
           .launch = core::Seconds(1e-6)};
  return p;
}
} // namespace

TEST_CASE("prefill: causal pairs, with and without a limit on what each token attends")
{
  CHECK(causal_pairs(4, 0) == 1 + 2 + 3 + 4);
  CHECK(causal_pairs(3, 10) == 11 + 12 + 13);
  // Two chunks of a prompt count the pairs of the whole prompt.
  CHECK(causal_pairs(2048, 0) + causal_pairs(2048, 2048) == causal_pairs(4096, 0));
  // At most 3 keys each: 1, 2, 3, 3, 3.
  CHECK(causal_pairs(5, 0, 3) == 1 + 2 + 3 + 3 + 3);
  CHECK(causal_pairs(2, 1, 3) == 2 + 3);
  CHECK(causal_pairs(4, 100, 3) == 4 * 3);
  CHECK(causal_pairs(0, 5) == 0);
}

TEST_CASE("prefill: DeepSeek-V3.2 attends its top-k in the absorbed form, its indexer every token so far")
{
  const ModelSpec m = load_model("deepseek-v3.2");
  REQUIRE(m.index.topk == 2048);
  const calibrate::Profile p = round_gpu();
  const double L = 61, before = 8192, tokens = 1024;
  const PrefillPrice price = prefill_price(m, p, Layout{}, {.tokens = tokens, .before = before});
  // Every new token sees 2048 keys: 128 heads x 1024 x 2048 pairs, 2 x (512 + 64 + 512) flop each,
  // compute-bound (5.8 ms a layer against 0.3 ms of reads).
  const double attention_flops = 2.0 * 128 * tokens * 2048 * (512 + 64 + 512);
  CHECK(price.attention.value() == Approx(L * (attention_flops / 100e12 + 1e-6)).epsilon(1e-9));
  // The indexer scores each new token against every token so far (8193 to 9216 of them): 64 heads x
  // 128 dims, FP8; its keys (128 B and an fp32 scale each) read once.
  const double index_pairs = tokens * before + tokens * (tokens + 1) / 2;
  const double index_flops = 2.0 * 64 * 128 * index_pairs;
  CHECK(price.indexer.value() == Approx(L * (index_flops / 200e12 + 1e-6)).epsilon(1e-9));
  CHECK(price.kv_up.value() == 0); // no expansion in the absorbed form
  CHECK(price.head.value() > 0);   // the chunk ends the prompt by default
  const PrefillPrice mid = prefill_price(m, p, Layout{}, {.tokens = tokens, .before = before, .ends_prompt = false});
  CHECK(mid.head.value() == 0);
  CHECK(price.total().value() - mid.total().value() == Approx(price.head.value()).epsilon(1e-9));
}

TEST_CASE("prefill: DeepSeek-V3 expands its latent per head and attends every token so far; tp splits the heads")
{
  const ModelSpec m = load_model("deepseek-v3");
  const calibrate::Profile p = round_gpu();
  const double L = 61, tokens = 4096;
  const PrefillPrice one = prefill_price(m, p, Layout{}, {.tokens = tokens});
  // 128 heads x 4096 x 4097 / 2 pairs, 2 x (128 + 64 + 128) flop each: compute-bound.
  const double flops = 2.0 * 128 * (tokens * (tokens + 1) / 2) * 320;
  CHECK(one.attention.value() == Approx(L * (flops / 100e12 + 1e-6)).epsilon(1e-9));
  CHECK(one.indexer.value() == 0);
  CHECK(one.kv_up.value() > 0);
  // Eight ranks: an eighth of the heads each.
  const PrefillPrice eight = prefill_price(m, p, Layout{.tp = 8}, {.tokens = tokens});
  CHECK(eight.attention.value() == Approx(L * (flops / 8 / 100e12 + 1e-6)).epsilon(1e-9));
  CHECK(eight.all_reduce.value() > 0);
  CHECK(one.all_reduce.value() == 0);
}

TEST_CASE("prefill: Qwen3-8B attends every token so far per query head over its group's KV head")
{
  const ModelSpec m = load_model("qwen3-8b");
  const calibrate::Profile p = round_gpu();
  const double L = 36, before = 2048, tokens = 2048;
  const PrefillPrice one = prefill_price(m, p, Layout{}, {.tokens = tokens, .before = before});
  // 32 heads x (2048 x 2048 + 2048 x 2049 / 2) pairs, 2 x (128 + 128) flop each: compute-bound
  // (1.3 ms a layer against 10 us of reads).
  const double pairs = tokens * before + tokens * (tokens + 1) / 2;
  const double flops = 2.0 * 32 * pairs * 256;
  CHECK(one.attention.value() == Approx(L * (flops / 100e12 + 1e-6)).epsilon(1e-9));
  CHECK(one.kv_up.value() == 0);
  CHECK(one.indexer.value() == 0);
  CHECK(one.experts.value() == 0);
  // A short chunk after a long context is bound by reading it: 65,536 tokens' keys and values (8
  // heads x 2 x 128 bf16 values, 4 KiB) and 16 tokens' queries and outputs (32 x 2 x 128 bf16).
  const PrefillPrice tail = prefill_price(m, p, Layout{}, {.tokens = 16, .before = 65536 - 16});
  const double bytes = 65536.0 * 4096 + 16.0 * 32 * 2 * 128 * 2;
  CHECK(tail.attention.value() == Approx(L * (bytes / 1e12 + 1e-6)).epsilon(1e-9));
  // Four ranks: a quarter of the query heads each, and a quarter of the KV heads to read.
  const PrefillPrice four = prefill_price(m, p, Layout{.tp = 4}, {.tokens = 16, .before = 65536 - 16});
  CHECK(four.attention.value() == Approx(L * (bytes / 4 / 1e12 + 1e-6)).epsilon(1e-9));
}
