#include "sim/model/serving.hpp"

#include <algorithm>
#include <cmath>

namespace xattn::sim
{

Parameters parameters(const ModelSpec& m)
{
  Parameters p;
  const double h = m.hidden, heads = m.heads, nope = m.qk_nope_head_dim, rope = m.rope_dim, v = m.v_head_dim;
  if (m.mla()) {
    const double query =
        m.q_lora_rank > 0 ? h * m.q_lora_rank + m.q_lora_rank * heads * (nope + rope) : h * heads * (nope + rope);
    p.attention = query + h * (m.kv_lora_rank + rope) + m.kv_lora_rank * heads * (nope + v) + heads * v * h;
  } else { // query, key and value, output
    const double d = m.head_dim;
    p.attention = h * heads * d + 2.0 * h * m.kv_heads * d + heads * d * h;
  }
  p.dense_mlp = 3.0 * h * m.dense_intermediate;
  p.expert = 3.0 * h * m.expert_intermediate;
  p.router = m.moe() ? h * m.experts : 0.0;
  if (m.index.sparse()) {
    const double iq = 1.0 * m.index.heads * m.index.head_dim;
    p.indexer = (m.q_lora_rank > 0 ? m.q_lora_rank * iq : h * iq) + h * m.index.head_dim + h * m.index.heads;
  }
  p.embedding = p.head = 1.0 * m.vocab * h;
  const double dense = m.moe() ? m.dense_layers : m.layers, moe = m.moe_layers();
  const double common =
      m.layers * (p.attention + p.indexer) + dense * p.dense_mlp + moe * (p.router + m.shared_experts * p.expert);
  p.total = common + moe * m.experts * p.expert + p.embedding + p.head;
  p.active = common + moe * m.experts_per_token * p.expert + p.head;
  return p;
}

std::string missing_serving_keys(const ModelSpec& m)
{
  return missing_keys({{m.hidden > 0, "hidden"},
                       {!m.mla() || m.qk_nope_head_dim > 0, "qk_nope_head_dim"},
                       {!m.mla() || m.v_head_dim > 0, "v_head_dim"},
                       {m.vocab > 0, "vocab"},
                       {m.dense_intermediate > 0 || (m.moe() && m.dense_layers == 0), "dense_intermediate"}});
}

std::string missing_for_serving(const ModelSpec& m)
{
  const std::string keys = missing_serving_keys(m);
  if (keys.empty()) return "";
  return "model '" + m.name + "' lacks " + keys + ", which the serving step (engine.step: full) needs";
}

core::Bytes weights_per_gpu(const ModelSpec& m, const Layout& l)
{
  const Parameters p = parameters(m);
  const double routed = m.moe_layers() * static_cast<double>(m.experts) * p.expert;
  const double copies = m.moe_layers() * static_cast<double>(l.redundant_experts) * p.expert;
  const double bf16 = p.embedding + p.head + m.moe_layers() * p.router;
  return core::Bytes(((p.total - routed - bf16) * m.weight_bytes + bf16 * kBf16) / l.tp +
                     (routed + copies) / (std::max(1, l.ep) * l.tp) * m.weight_bytes);
}

Seconds roofline(const calibrate::GpuSpec& g, core::Bytes bytes, double flops, core::FlopsPerSec peak,
                 double efficiency)
{
  return std::max(bytes / (g.hbm * g.memory_efficiency), Seconds(flops / (peak.value() * efficiency)));
}

Seconds elementwise_kernel(const Profile& p, core::Bytes bytes)
{
  return bytes / (p.gpu.hbm * p.gpu.memory_efficiency) + p.gpu.launch;
}

Seconds gemm_time(const ModelSpec& m, const Profile& p, double rows, double k, double n, double matrices,
                  double weight_bytes, bool fp8_input)
{
  if (rows <= 0) return Seconds(0);
  const calibrate::GpuSpec& g = p.gpu;
  const double w = weight_bytes > 0 ? weight_bytes : m.weight_bytes;
  const bool fp8 = fp8_dtype(w);
  const core::Bytes bytes(matrices * k * n * w + rows * (k + n) * 2.0);
  const Seconds gemm = roofline(g, bytes, 2.0 * rows * k * n, fp8 ? g.fp8 : g.bf16, g.gemm_efficiency) + g.launch;
  // An FP8 GEMM's BF16 input is quantised first (per 128-value group, DeepGEMM's layout): read in
  // BF16, written in FP8 with one fp32 scale a group.
  if (!fp8 || fp8_input) return gemm;
  return gemm + elementwise_kernel(p, core::Bytes(rows * k * (kBf16 + kFp8Scaled)));
}

Seconds activation_time(const Profile& p, double rows, double inter, double out_bytes)
{
  // SiLU of the gate times the up projection: reads both halves in BF16, writes the product.
  return rows <= 0 ? Seconds(0) : elementwise_kernel(p, core::Bytes(rows * inter * (2.0 * kBf16 + out_bytes)));
}

Seconds elementwise_time(const ModelSpec& m, const Profile& p, double tokens, int tp)
{
  if (tokens <= 0) return Seconds(0);
  const double r = std::max(1, tp), h = m.hidden;
  // The residual RMSNorms before attention and before the MLP, each fused with the residual add:
  // reads the hidden state and the residual, writes both (BF16).
  Seconds t = elementwise_kernel(p, core::Bytes(tokens * h * 4.0 * kBf16)) * 2.0;
  if (m.mla()) {
    // The query and KV latents' RMSNorms (read and written), then RoPE on the rotary dimensions
    // of this rank's query heads and of the key they share.
    if (m.q_lora_rank > 0) t += elementwise_kernel(p, core::Bytes(tokens * m.q_lora_rank * 2.0 * kBf16));
    t += elementwise_kernel(p, core::Bytes(tokens * m.kv_lora_rank * 2.0 * kBf16));
    t += elementwise_kernel(p, core::Bytes(tokens * (m.heads / r + 1.0) * m.rope_dim * 2.0 * kBf16));
  } else { // RoPE on this rank's query heads and its KV heads
    const double kv = static_cast<double>(m.kv_heads) / m.kv_split(tp);
    t += elementwise_kernel(p, core::Bytes(tokens * (m.heads / r + kv) * m.head_dim * 2.0 * kBf16));
  }
  if (m.index.sparse()) // the indexer's key norm
    t += elementwise_kernel(p, core::Bytes(tokens * m.index.head_dim * 2.0 * kBf16));
  return t;
}

Seconds projection_time(const ModelSpec& m, const Profile& p, double tokens, int tp, bool absorbed)
{
  if (tokens <= 0) return Seconds(0);
  const double r = std::max(1, tp); // the ranks a split dimension divides over
  if (!m.mla()) {                   // query, key and value (one fused GEMM), output; KV heads split as far as they go
    const double d = m.head_dim, heads = m.heads / r, kv = static_cast<double>(m.kv_heads) / m.kv_split(tp);
    return gemm_time(m, p, tokens, m.hidden, (heads + 2.0 * kv) * d) + gemm_time(m, p, tokens, heads * d, m.hidden);
  }
  const double h = m.hidden, heads = m.heads / r, nope = m.qk_nope_head_dim, rope = m.rope_dim, v = m.v_head_dim;
  const double rank = m.kv_lora_rank;
  Seconds t = m.q_lora_rank > 0 ? gemm_time(m, p, tokens, h, m.q_lora_rank) +
                                      gemm_time(m, p, tokens, m.q_lora_rank, heads * (nope + rope))
                                : gemm_time(m, p, tokens, h, heads * (nope + rope));
  t += gemm_time(m, p, tokens, h, rank + rope); // KV down (the cached latent)
  if (absorbed) {
    t += gemm_time(m, p, tokens * heads, nope, rank, heads); // query absorbed into the latent
    t += gemm_time(m, p, tokens * heads, rank, v, heads);    // the latent output up to values
  }
  t += gemm_time(m, p, tokens, heads * v, h); // output projection
  if (m.index.sparse()) { // the indexer's query up (from the query's latent), its key, its head weights
    const double iq = 1.0 * m.index.heads * m.index.head_dim;
    t += gemm_time(m, p, tokens, m.q_lora_rank > 0 ? m.q_lora_rank : h, iq) +
         gemm_time(m, p, tokens, h, m.index.head_dim) + gemm_time(m, p, tokens, h, m.index.heads);
  }
  return t;
}

Seconds mlp_time(const ModelSpec& m, const Profile& p, double tokens, bool moe_layer, int tp)
{
  if (tokens <= 0) return Seconds(0);
  const double r = std::max(1, tp), h = m.hidden;
  // Gate and up (one GEMM), the activation (BF16 out: the down GEMM quantises its own input), down.
  auto mlp = [&](double inter) {
    return gemm_time(m, p, tokens, h, 2.0 * inter) + activation_time(p, tokens, inter, kBf16) +
           gemm_time(m, p, tokens, inter, h);
  };
  if (!moe_layer) return mlp(m.dense_intermediate / r);
  const double shared = 1.0 * m.shared_experts * m.expert_intermediate / r;
  // The router: its gate (BF16), then the top-k over the experts' fp32 scores.
  const Seconds router =
      gemm_time(m, p, tokens, h, m.experts, 1, kBf16) + elementwise_kernel(p, core::Bytes(tokens * m.experts * 4.0));
  return router + (shared > 0 ? mlp(shared) : Seconds(0));
}

Seconds dense_time(const ModelSpec& m, const Profile& p, double tokens, int first, int last, int tp, double head_rows)
{
  Seconds t(0);
  if (tokens <= 0) return t;
  const Seconds attention = projection_time(m, p, tokens, tp, true);
  const Seconds dense = mlp_time(m, p, tokens, false, tp), moe = mlp_time(m, p, tokens, true, tp);
  const Seconds elementwise = elementwise_time(m, p, tokens, tp);
  for (int l = std::max(0, first); l < std::min(last, m.layers); ++l)
    t += attention + ((m.moe_layer(l) ? moe : dense) + elementwise);
  if (last >= m.layers) t += head_time(m, p, head_rows < 0 ? tokens : head_rows, tp);
  return t;
}

Seconds head_time(const ModelSpec& m, const Profile& p, double tokens, int tp)
{
  return tokens <= 0 ? Seconds(0) : gemm_time(m, p, tokens, m.hidden, m.vocab / std::max(1, tp), 1, kBf16);
}

Seconds all_reduce_time(const Profile& p, core::Bytes bytes, int ranks)
{
  if (ranks <= 1 || bytes.value() <= 0) return Seconds(0);
  const double n = ranks;
  return p.tp_all_reduce_latency + bytes * (2.0 * (n - 1) / n) / p.tp_all_reduce_bus;
}

Seconds tensor_parallel_time(const ModelSpec& m, const Profile& p, double tokens, int first, int last, int tp)
{
  const int layers = std::max(0, std::min(last, m.layers) - std::max(0, first));
  if (tp <= 1 || tokens <= 0 || layers == 0) return Seconds(0);
  return all_reduce_time(p, core::Bytes(tokens * m.hidden * kBf16), tp) * (2.0 * layers);
}

double active_local_experts(const ModelSpec& m, int ep, double group_tokens)
{
  if (!m.moe() || group_tokens <= 0) return 0;
  const double untouched = std::pow(1.0 - static_cast<double>(m.experts_per_token) / m.experts, group_tokens);
  return static_cast<double>(m.experts) / std::max(1, ep) * (1.0 - untouched);
}

Seconds expert_time(const ModelSpec& m, const Profile& p, int ep, double group_tokens, int tp)
{
  return expert_gemm_time(m, p, group_tokens * m.experts_per_token / std::max(1, ep),
                          active_local_experts(m, ep, group_tokens), tp);
}

Seconds expert_gemm_time(const ModelSpec& m, const Profile& p, double pairs, double experts, int tp)
{
  if (pairs <= 0) return Seconds(0);
  const double h = m.hidden, inter = m.expert_intermediate / std::max(1, tp);
  // The tokens come in FP8, as the dispatch sends them (dispatch_bytes; without expert parallelism
  // their one quantisation a layer is left out), and the activation writes the down GEMM's input
  // in the weights' dtype, quantising as it writes.
  const bool fp8 = fp8_dtype(m.weight_bytes);
  return gemm_time(m, p, pairs, h, 2.0 * inter, experts, 0, fp8) +
         activation_time(p, pairs, inter, fp8 ? kFp8Scaled : kBf16) + gemm_time(m, p, pairs, inter, h, experts, 0, fp8);
}

core::Bytes dispatch_bytes(const ModelSpec& m)
{
  return core::Bytes(m.hidden * 1.0 + std::ceil(m.hidden / kFp8GroupValues) * kFp8ScaleBytes);
}

core::Bytes combine_bytes(const ModelSpec& m)
{
  return core::Bytes(m.hidden * 2.0);
}

} // namespace xattn::sim
