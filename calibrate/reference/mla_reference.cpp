#include "calibrate/reference/mla_reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace xattn::calibrate::ref
{

void partial_attention_selected(const float* q, int rows, const float* kv, const std::vector<int>& selected, Dims d,
                                float scale, float* out, float* lse)
{
  std::vector<double> score(selected.size());
  for (int r = 0; r < rows; ++r) {
    const float* qr = q + static_cast<std::size_t>(r) * d.dqk;
    float* o = out + static_cast<std::size_t>(r) * d.dv;
    std::fill(o, o + d.dv, 0.0f);
    if (selected.empty()) {
      lse[r] = -std::numeric_limits<float>::infinity();
      continue;
    }
    double m = -std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < selected.size(); ++j) {
      const float* k = kv + static_cast<std::size_t>(selected[j]) * d.dqk;
      double s = 0;
      for (int c = 0; c < d.dqk; ++c)
        s += static_cast<double>(qr[c]) * k[c];
      score[j] = s * scale;
      m = std::max(m, score[j]);
    }
    double sum = 0;
    std::vector<double> acc(static_cast<std::size_t>(d.dv), 0.0);
    for (std::size_t j = 0; j < selected.size(); ++j) {
      double p = std::exp(score[j] - m);
      sum += p;
      const float* v = kv + static_cast<std::size_t>(selected[j]) * d.dqk; // the latent is the value
      for (int c = 0; c < d.dv; ++c)
        acc[static_cast<std::size_t>(c)] += p * v[c];
    }
    for (int c = 0; c < d.dv; ++c)
      o[c] = static_cast<float>(acc[static_cast<std::size_t>(c)] / sum);
    lse[r] = static_cast<float>(m + std::log(sum));
  }
}

void partial_attention(const float* q, int rows, const float* kv, int tokens, Dims d, float scale, float* out,
                       float* lse)
{
  std::vector<int> all(static_cast<std::size_t>(tokens));
  for (int i = 0; i < tokens; ++i)
    all[static_cast<std::size_t>(i)] = i;
  partial_attention_selected(q, rows, kv, all, d, scale, out, lse);
}

void merge_into(float* o1, float* s1, const float* o2, const float* s2, int rows, int dv)
{
  for (int r = 0; r < rows; ++r) {
    if (std::isinf(s2[r]) && s2[r] < 0) continue; // an empty partial changes nothing
    float* a = o1 + static_cast<std::size_t>(r) * dv;
    const float* b = o2 + static_cast<std::size_t>(r) * dv;
    if (std::isinf(s1[r]) && s1[r] < 0) {
      std::memcpy(a, b, sizeof(float) * static_cast<std::size_t>(dv));
      s1[r] = s2[r];
      continue;
    }
    double m = std::max<double>(s1[r], s2[r]);
    double w1 = std::exp(s1[r] - m), w2 = std::exp(s2[r] - m);
    for (int c = 0; c < dv; ++c)
      a[c] = static_cast<float>((w1 * a[c] + w2 * b[c]) / (w1 + w2));
    s1[r] = static_cast<float>(m + std::log(w1 + w2));
  }
}

void merge_partials(const float* outs, const float* lses, int partials, int rows, int dv, float* out, float* lse)
{
  std::fill(out, out + static_cast<std::size_t>(rows) * dv, 0.0f);
  std::fill(lse, lse + rows, -std::numeric_limits<float>::infinity());
  for (int p = 0; p < partials; ++p)
    merge_into(out, lse, outs + static_cast<std::size_t>(p) * rows * dv, lses + static_cast<std::size_t>(p) * rows,
               rows, dv);
}

void rope_rotate(float* rope, double positions, double base)
{
  for (int i = 0; i < kRope / 2; ++i) {
    double theta = positions * std::pow(base, -2.0 * i / kRope);
    double c = std::cos(theta), s = std::sin(theta);
    double x = rope[2 * i], y = rope[2 * i + 1];
    rope[2 * i] = static_cast<float>(x * c - y * s);
    rope[2 * i + 1] = static_cast<float>(x * s + y * c);
  }
}

void rope_splice(float* kv, int tokens, Dims d, std::int64_t delta, double base)
{
  // Rotations compose: R(old + delta) = R(delta) R(old), so every token turns by the same delta.
  for (int t = 0; t < tokens; ++t)
    rope_rotate(kv + static_cast<std::size_t>(t) * d.dqk + (d.dqk - kRope), static_cast<double>(delta), base);
}

float round_bf16(float x)
{
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  if ((u & 0x7f800000u) == 0x7f800000u) return x; // inf, nan
  u += 0x7fffu + ((u >> 16) & 1u);
  u &= 0xffff0000u;
  float r;
  std::memcpy(&r, &u, sizeof r);
  return r;
}

} // namespace xattn::calibrate::ref
