// A prefill chunk's compute by the roofline, layer by layer (docs/cost-path.md, "Prefill"): the
// new tokens' projections and MLPs at their token count, attention over every token so far (the
// quadratic term), a sparse model's indexer over every token so far, the routed experts over the
// group's tokens, each layer's element-wise kernels (serving.hpp's elementwise_time), and the
// output head for a prompt that ends in the chunk. The MoE layers' dispatch and combine of these
// tokens are bytes on the network (serving.hpp's dispatch_bytes and combine_bytes), priced where
// they move.
//
// MLA prefills in one of its two forms, as DeepSeek's kernels do:
// - dense attention (DeepSeek-V3) in the unabsorbed, multi-head form: each token's latent is
//   expanded to per-head keys and values (kv_up), then causal attention over qk_nope + rope
//   dimensions for the scores and v dimensions for the output;
// - sparse attention (DeepSeek-V3.2's DSA) in the absorbed, multi-query form, as in decode: each
//   new token's query is absorbed into the latent and its output expanded back per head, and it
//   attends at most index.topk of the tokens so far over rank + rope dimensions (the scores) and
//   rank dimensions (the output); DeepSeek-V3.2's report instantiates DSA on MLA's MQA mode for
//   prefill and decode alike.
// GQA prefills as FlashAttention does: each query head against the keys and values of its group's
// KV head, over head_dim dimensions for the scores and for the output.
#pragma once

#include "sim/model/serving.hpp"

namespace xattn::sim
{

/// One chunk of one request's prompt on one GPU.
struct PrefillChunk {
  double tokens = 0;       ///< new tokens prefilled
  double before = 0;       ///< tokens of the same request already in its KV (earlier chunks, a cached prefix)
  double group_tokens = 0; ///< tokens the expert-parallel group routes to its experts with these (0: `tokens`)
  bool ends_prompt = true; ///< the prompt's last token is in this chunk: the head makes the first token
};

/// One GPU's compute for a chunk, by part, over every layer.
struct PrefillPrice {
  Seconds projections; ///< query down and up, KV down, output projection; a sparse model's indexer
                       ///< projections and its absorbed query and expanded output (MQA form)
  Seconds kv_up;       ///< dense MLA: every token so far expanded to per-head keys and values (MHA form)
  Seconds attention;   ///< the new tokens against the tokens so far, causal
  Seconds indexer;     ///< a sparse model's index scores of the new tokens against every token so far
  Seconds mlp;         ///< dense MLPs; MoE layers' gates and shared experts
  Seconds experts;     ///< routed experts over the group's tokens (expert_time)
  Seconds head;        ///< the output head, for the prompt's last token
  Seconds all_reduce;  ///< tensor parallelism's two all-reduces a layer
  Seconds elementwise; ///< every layer's norms and RoPE (elementwise_time)
  Seconds total() const
  {
    return projections + kv_up + attention + indexer + mlp + experts + head + all_reduce + elementwise;
  }
};

/// Query-key pairs of causal attention for `tokens` new tokens after `before`, each new token
/// attending at most `limit` tokens (itself included; 0: no limit).
double causal_pairs(double tokens, double before, double limit = 0);

/// The compute one GPU of layout `l` runs to prefill chunk `c` (tokens split over tp ranks by heads
/// and intermediate sizes, as the decode step splits them).
PrefillPrice prefill_price(const ModelSpec& m, const Profile& p, const Layout& l, const PrefillChunk& c);
/// Its attention alone (kv_up, attention and indexer set; the rest 0): what a chunk adds to a
/// decode step whose GEMMs it rides (the engine's co-located prefill).
PrefillPrice prefill_attention(const ModelSpec& m, const Profile& p, const Layout& l, const PrefillChunk& c);

} // namespace xattn::sim
