// The route protocols (calibrate::RouteProtocol) priced for DeepSeek-V3.2 on the production H100
// profile, worked by hand from the model's config.json dimensions and the profile's datasheet
// figures (calibrate/profiles/h100-ndr200-ibgda.yaml), not read back from the pricing code.
#include "sim/model/pricing.hpp"

#include <catch2/catch.hpp>

using namespace xattn;
using namespace xattn::sim;

TEST_CASE("route protocols: the compressed query sends 3 kB out and 33 kB back per token and layer, 7.7x fewer")
{
  const ModelSpec m = load_model("deepseek-v3.2");
  calibrate::Profile p = calibrate::load_profile("h100-ndr200-ibgda");
  REQUIRE(p.route_protocol == calibrate::RouteProtocol::kCompressed);
  const double rows = 128; // one decoded token: one query row per head
  // c_Q: q_lora_rank 1536 BF16 values = 3,072 B, and a 4 B position.
  CHECK(routed_query(m, p, rows).value() == 3076);
  // 128 heads x (v_head_dim 128 BF16 values = 256 B, and a 4 B fp32 log-sum-exp) = 33,280 B.
  CHECK(routed_answer(m, p, rows).value() == 33280);

  calibrate::Profile absorbed = p;
  absorbed.route_protocol = calibrate::RouteProtocol::kAbsorbed;
  // 128 rows x (512 + 64) BF16 = 147,456 B out; 128 x (512 BF16 + 4 B) = 131,584 B back.
  CHECK(routed_query(m, absorbed, rows).value() == 147456);
  CHECK(routed_answer(m, absorbed, rows).value() == 131584);
  // (147,456 + 131,584) / (3,076 + 33,280) = 7.675.
  CHECK((routed_query(m, absorbed, rows) + routed_answer(m, absorbed, rows)).value() /
            (routed_query(m, p, rows) + routed_answer(m, p, rows)).value() ==
        Approx(7.675).epsilon(1e-3));
  // The absorbed protocol runs nothing more on the holder.
  CHECK(expansion_kernel(m, absorbed, rows).work.value() == 0);
}

TEST_CASE("route protocols: the holder's expansion of one token adds its rows to three FP8 GEMMs, by the roofline")
{
  const ModelSpec m = load_model("deepseek-v3.2");
  const calibrate::Profile p = calibrate::load_profile("h100-ndr200-ibgda");
  // The rows' BF16 activations, rows x (k + n) x 2 B each GEMM (the weights are read for the
  // holder's own batch anyway): q_b_proj, 1 token x (1,536 + 24,576) = 52,224 B; W_UK, 128 heads
  // x (128 + 512) x 2 = 163,840 B; W_UV, the same: 379,904 B at 3.35 TB/s x 0.895 = 0.12671 us.
  const double bytes = 1 * (1536 + 24576) * 2.0 + 128 * (128 + 512) * 2.0 + 128 * (512 + 128) * 2.0;
  CHECK(bytes == 379904);
  const double memory = bytes / (3.35e12 * 0.895);
  // FLOPs: 2 x (1,536 x 24,576 + 128 x 128 x 512 + 128 x 512 x 128) = 109,051,904 at 1979 TFLOP/s
  // x 0.768 = 0.07175 us: memory-bound.
  const double compute = 2.0 * (1536.0 * 24576 + 128.0 * 128 * 512 + 128.0 * 512 * 128) / (1979e12 * 0.768);
  CHECK(compute < memory);
  const Kernel k = expansion_kernel(m, p, 128);
  CHECK(k.work.value() == Approx(0.12671e-6).epsilon(1e-3));
  CHECK(k.work.value() == Approx(memory).epsilon(1e-9));
  CHECK(k.share == 1.0);

  // On the holder it follows the attention kernel: alone, the sum of both times.
  const Kernel a = attention_kernel(m, p, 1, 128, 2048, 2048 * 128.0);
  const Kernel both = then(a, k);
  CHECK(both.time().value() == Approx(a.time().value() + k.time().value()).epsilon(1e-12));
  CHECK(both.share >= a.share);
  CHECK(both.share <= 1.0);
}

TEST_CASE("route protocols: the compressed query needs the model's query rank and head dimensions")
{
  ModelSpec m = load_model("deepseek-v3.2");
  const calibrate::Profile p = calibrate::load_profile("h100-ndr200-ibgda");
  CHECK(missing_for_protocol(m, p).empty());
  m.q_lora_rank = 0;
  m.v_head_dim = 0;
  CHECK_THAT(missing_for_protocol(m, p), Catch::Matchers::Contains("the model's q_lora_rank, v_head_dim") &&
                                             Catch::Matchers::Contains("engine.route_protocol: absorbed"));
  CHECK(missing_for_protocol(m, calibrate::load_profile("paper-prototype")).empty());
}
