#include "sim/model/prefill.hpp"

#include <algorithm>

namespace xattn::sim
{
namespace
{
// A kernel by the roofline (serving.hpp), plus its launch.
Seconds kernel(const calibrate::GpuSpec& g, double bytes, double flops, core::FlopsPerSec peak, double efficiency)
{
  return roofline(g, core::Bytes(bytes), flops, peak, efficiency) + g.launch;
}
} // namespace

double causal_pairs(double tokens, double before, double limit)
{
  if (tokens <= 0) return 0;
  // New token i (1..tokens) sees before + i tokens; with a limit, min(limit, before + i).
  const auto sum_to = [](double n) { return n * (n + 1) / 2; }; // 1 + 2 + ... + n
  if (limit <= 0 || before + tokens <= limit) return tokens * before + sum_to(tokens);
  if (before >= limit) return tokens * limit;
  const double under = limit - before; // new tokens that see fewer than `limit`
  return under * before + sum_to(under) + (tokens - under) * limit;
}

PrefillPrice prefill_attention(const ModelSpec& m, const Profile& p, const Layout& l, const PrefillChunk& c)
{
  PrefillPrice out;
  if (c.tokens <= 0) return out;
  const calibrate::GpuSpec& g = p.gpu;
  const int tp = std::max(1, l.tp);
  const double heads = static_cast<double>(m.heads) / tp, rank = m.kv_lora_rank, rope = m.rope_dim;
  const double nope = m.qk_nope_head_dim, v = m.v_head_dim, context = c.before + c.tokens;
  const bool sparse = m.index.sparse();
  const double pairs = causal_pairs(c.tokens, c.before, sparse ? m.index.topk : 0);
  const double L = m.layers;
  if (!m.mla()) {
    // GQA (FlashAttention's prefill): this rank's query heads of every new token against the keys
    // and values of every token so far, read once per KV head; scores and output over head_dim
    // each. The new tokens' queries in and outputs out.
    const double d = m.head_dim;
    const double flops = 2.0 * heads * pairs * 2.0 * d;
    const double bytes = m.kv_per_token_on_rank(tp).value() * context + c.tokens * heads * 2.0 * d * kBf16;
    out.attention = kernel(g, bytes, flops, g.bf16, g.attention_efficiency) * L;
    return out;
  }
  if (sparse) {
    // Multi-query form: every head reads the shared latent (rank + rope values) of the keys it
    // attends; scores over rank + rope dimensions, output over rank, per head and pair.
    const double flops = 2.0 * heads * pairs * (2 * rank + rope);
    const double bytes = m.kv_per_token().value() * context + c.tokens * heads * ((rank + rope) + rank) * kBf16;
    out.attention = kernel(g, bytes, flops, g.bf16, g.attention_efficiency) * L;
    // The lightning indexer scores every new token against every token so far (FP8, DeepGEMM's
    // MQA logits): index.heads x head_dim multiply-adds per pair, each token's key read once.
    const double index_pairs = causal_pairs(c.tokens, c.before);
    const double index_flops = 2.0 * m.index.heads * m.index.head_dim * index_pairs;
    const double index_bytes = m.index_key_per_token().value() * context + m.index_query_per_token().value() * c.tokens;
    out.indexer = kernel(g, index_bytes, index_flops, g.fp8, g.gemm_efficiency) * L;
  } else {
    // Multi-head form: the latent of every token so far expanded to this rank's heads' keys
    // (qk_nope) and values, then attention over qk_nope + rope (scores) and v (output) dimensions.
    out.kv_up = gemm_time(m, p, context, rank, heads * (nope + v)) * L;
    const double flops = 2.0 * heads * pairs * (nope + rope + v);
    // Keys (qk_nope per head, the RoPE part shared by the heads) and values of every token so
    // far, the new tokens' queries and outputs.
    const double bytes = (context * (heads * (nope + v) + rope) + c.tokens * heads * (nope + rope + v)) * kBf16;
    out.attention = kernel(g, bytes, flops, g.bf16, g.attention_efficiency) * L;
  }
  return out;
}

PrefillPrice prefill_price(const ModelSpec& m, const Profile& p, const Layout& l, const PrefillChunk& c)
{
  PrefillPrice out = prefill_attention(m, p, l, c);
  if (c.tokens <= 0) return out;
  const int tp = std::max(1, l.tp);
  const double L = m.layers;
  out.projections = projection_time(m, p, c.tokens, tp, m.index.sparse()) * L;
  // Every dense layer alike, every MoE layer alike.
  const double group = c.group_tokens > 0 ? c.group_tokens : c.tokens, moe = m.moe_layers(), dense = L - moe;
  out.mlp = mlp_time(m, p, c.tokens, false, tp) * dense;
  if (moe > 0) out.mlp += mlp_time(m, p, c.tokens, true, tp) * moe;
  if (moe > 0) out.experts = expert_time(m, p, l.ep, group, tp) * moe;
  out.elementwise = elementwise_time(m, p, c.tokens, tp) * L;
  if (c.ends_prompt) out.head = head_time(m, p, 1, tp);
  out.all_reduce = tensor_parallel_time(m, p, c.tokens, 0, m.layers, tp);
  return out;
}

} // namespace xattn::sim
