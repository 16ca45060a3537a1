#include "calibrate/reference/mla_reference.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

using namespace xattn::calibrate::ref;

namespace
{
std::vector<float> random_vec(std::size_t n, unsigned seed, float scale = 1.0f)
{
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v)
    x = d(rng);
  return v;
}
} // namespace

TEST_CASE("calibrate: partial attention matches a hand computation")
{
  // dqk = 2, dv = 1: q = (1, 0); keys (1, 0) with value 1 and (0, 0) with value... the value is the
  // key's first dv entries, so token 0 has v = 1, token 1 has v = 0, token 2 = (2, 5) has v = 2.
  Dims d{2, 1};
  float q[2] = {1, 0};
  float kv[6] = {1, 0, 0, 0, 2, 5};
  float out[1], lse[1];
  partial_attention(q, 1, kv, 3, d, 1.0f, out, lse);
  // scores 1, 0, 2: weights e, 1, e² over (e + 1 + e²); output (e·1 + 2e²) / (1 + e + e²).
  double e = std::exp(1.0);
  CHECK(out[0] == Approx((e + 2 * e * e) / (1 + e + e * e)));
  CHECK(lse[0] == Approx(std::log(1 + e + e * e)));
}

TEST_CASE("calibrate: routed partials merged by online softmax equal single-instance attention")
{
  const int rows = 8, tokens = 300;
  Dims d; // 576 / 512, the absorbed MLA shape
  std::vector<float> q = random_vec(static_cast<std::size_t>(rows) * d.dqk, 1, 0.05f);
  std::vector<float> kv = random_vec(static_cast<std::size_t>(tokens) * d.dqk, 2);
  const float scale = 1.0f / std::sqrt(192.0f);
  std::vector<float> full(static_cast<std::size_t>(rows) * d.dv), full_lse(rows);
  partial_attention(q.data(), rows, kv.data(), tokens, d, scale, full.data(), full_lse.data());

  // Three holders own uneven chunks; each attends its own tokens; the requester merges.
  const int cuts[4] = {0, 37, 190, tokens};
  std::vector<float> outs(3 * full.size()), lses(3 * rows);
  for (int h = 0; h < 3; ++h)
    partial_attention(q.data(), rows, kv.data() + static_cast<std::size_t>(cuts[h]) * d.dqk, cuts[h + 1] - cuts[h], d,
                      scale, outs.data() + h * full.size(), lses.data() + h * rows);
  std::vector<float> merged(full.size()), merged_lse(rows);
  merge_partials(outs.data(), lses.data(), 3, rows, d.dv, merged.data(), merged_lse.data());
  for (std::size_t i = 0; i < full.size(); ++i)
    REQUIRE(merged[i] == Approx(full[i]).margin(1e-5));
  for (int r = 0; r < rows; ++r)
    CHECK(merged_lse[r] == Approx(full_lse[r]).epsilon(1e-5));
}

TEST_CASE("calibrate: sparse selection over scattered blocks merges correctly")
{
  // 4 holders of 256 tokens each; the indexer picks 5 blocks of 16 tokens scattered over three of
  // them. Each holder attends only its selected tokens; merging must equal attention over the
  // gathered selection, and must differ from dense attention (the selection matters).
  const int rows = 4, per_holder = 256, block = 16;
  Dims d;
  std::vector<float> q = random_vec(static_cast<std::size_t>(rows) * d.dqk, 3, 0.05f);
  std::vector<float> kv = random_vec(static_cast<std::size_t>(4 * per_holder) * d.dqk, 4);
  const float scale = 0.07f;
  const int blocks[5] = {3, 14, 20, 21, 55}; // block ids: holder = id * 16 / 256
  std::vector<int> selected;
  std::vector<std::vector<int>> by_holder(4);
  for (int b : blocks)
    for (int t = b * block; t < (b + 1) * block; ++t) {
      selected.push_back(t);
      by_holder[static_cast<std::size_t>(t / per_holder)].push_back(t % per_holder);
    }
  std::vector<float> want(static_cast<std::size_t>(rows) * d.dv), want_lse(rows);
  partial_attention_selected(q.data(), rows, kv.data(), selected, d, scale, want.data(), want_lse.data());

  std::vector<float> outs(4 * want.size()), lses(4 * rows);
  for (int h = 0; h < 4; ++h) // holder 2 holds nothing selected: an empty partial
    partial_attention_selected(q.data(), rows, kv.data() + static_cast<std::size_t>(h) * per_holder * d.dqk,
                               by_holder[static_cast<std::size_t>(h)], d, scale, outs.data() + h * want.size(),
                               lses.data() + h * rows);
  CHECK(std::isinf(lses[2 * rows]));
  std::vector<float> got(want.size()), got_lse(rows);
  merge_partials(outs.data(), lses.data(), 4, rows, d.dv, got.data(), got_lse.data());
  for (std::size_t i = 0; i < want.size(); ++i)
    REQUIRE(got[i] == Approx(want[i]).margin(1e-5));

  std::vector<float> dense(want.size()), dense_lse(rows);
  partial_attention(q.data(), rows, kv.data(), 4 * per_holder, d, scale, dense.data(), dense_lse.data());
  double diff = 0;
  for (std::size_t i = 0; i < want.size(); ++i)
    diff = std::max(diff, static_cast<double>(std::abs(dense[i] - want[i])));
  CHECK(diff > 1e-3);
}

TEST_CASE("calibrate: merging is order-independent and an empty partial is its identity")
{
  const int rows = 2, dv = 3;
  float o1[6] = {1, 2, 3, 4, 5, 6}, s1[2] = {0.5f, -1.0f};
  float o2[6] = {-1, 0, 1, 2, 2, 2}, s2[2] = {1.5f, -3.0f};
  float a[6], sa[2], b[6], sb[2];
  std::copy(o1, o1 + 6, a);
  std::copy(s1, s1 + 2, sa);
  merge_into(a, sa, o2, s2, rows, dv);
  std::copy(o2, o2 + 6, b);
  std::copy(s2, s2 + 2, sb);
  merge_into(b, sb, o1, s1, rows, dv);
  for (int i = 0; i < 6; ++i)
    CHECK(a[i] == Approx(b[i]));
  // Row 0 by hand: w1 = e^(0.5-1.5), w2 = 1: o = (w1·1 + (-1)) / (w1 + 1).
  double w1 = std::exp(-1.0);
  CHECK(a[0] == Approx((w1 * 1 - 1) / (w1 + 1)));
  CHECK(sa[0] == Approx(1.5 + std::log(1 + w1)));
  float empty_o[6] = {9, 9, 9, 9, 9, 9};
  float empty_s[2] = {-std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()};
  merge_into(a, sa, empty_o, empty_s, rows, dv);
  CHECK(a[0] == Approx((w1 * 1 - 1) / (w1 + 1)));
}

TEST_CASE("calibrate: the splice re-rotates keys to their new positions")
{
  Dims d;
  std::vector<float> k = random_vec(static_cast<std::size_t>(d.dqk), 5);
  std::vector<float> q = random_vec(static_cast<std::size_t>(d.dqk), 6);
  // A key encoded at position 100, spliced to 4196, equals the key encoded at 4196.
  std::vector<float> at100 = k, at4196 = k;
  rope_rotate(at100.data() + kLatent, 100);
  rope_rotate(at4196.data() + kLatent, 4196);
  rope_splice(at100.data(), 1, d, 4096);
  for (int c = 0; c < d.dqk; ++c)
    REQUIRE(at100[static_cast<std::size_t>(c)] == Approx(at4196[static_cast<std::size_t>(c)]).margin(1e-4));
  // RoPE scores depend only on relative position: shifting query and key alike keeps q·k.
  std::vector<float> q1 = q, k1 = k, q2 = q, k2 = k;
  rope_rotate(q1.data() + kLatent, 7);
  rope_rotate(k1.data() + kLatent, 3);
  rope_rotate(q2.data() + kLatent, 7 + 1000);
  rope_rotate(k2.data() + kLatent, 3 + 1000);
  double s1 = 0, s2 = 0;
  for (int c = kLatent; c < d.dqk; ++c) {
    s1 += q1[static_cast<std::size_t>(c)] * k1[static_cast<std::size_t>(c)];
    s2 += q2[static_cast<std::size_t>(c)] * k2[static_cast<std::size_t>(c)];
  }
  CHECK(s1 == Approx(s2).margin(1e-3));
  // The latent part is untouched.
  CHECK(at100[0] == k[0]);
}

TEST_CASE("calibrate: bf16 rounding keeps 8 significant bits, ties to even")
{
  CHECK(round_bf16(1.0f) == 1.0f);
  CHECK(round_bf16(1.0f + 1.0f / 256) == 1.0f);              // a tie: rounds to even (down)
  CHECK(round_bf16(1.0f + 3.0f / 256) == 1.0f + 4.0f / 256); // a tie: rounds to even (up)
  CHECK(round_bf16(1.0f + 1.0f / 128) == 1.0f + 1.0f / 128); // representable
}
