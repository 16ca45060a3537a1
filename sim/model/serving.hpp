// The serving step's compute outside attention (docs/cost-path.md, "The serving step"): the
// model's parameters from its dimensions, what one GPU of a layout holds, and each GEMM of a
// decode step by the roofline, batch-dependent (a small batch reads its weights at HBM speed, a
// large one is bound by the tensor cores). Expert parallelism's bytes per token are here too; the
// engine moves them on the network (sim/engine/moe.cpp).
#pragma once

#include "calibrate/profile.hpp"
#include "sim/model/model.hpp"

#include <string>
#include <vector>

namespace xattn::sim
{

using calibrate::Profile;
using core::Seconds;

/// Parameters of the model's parts, from its dimensions (MLA or GQA attention, SwiGLU MLPs and experts).
struct Parameters {
  double attention = 0; ///< one layer: MLA's query down and up, KV down, KV up, output; GQA's query, key, value, output
  double dense_mlp = 0; ///< one dense layer's MLP (gate, up, down)
  double expert = 0;    ///< one routed or shared expert (gate, up, down)
  double router = 0;    ///< one MoE layer's gate over the routed experts
  double indexer = 0;   ///< one layer's DSA indexer projections (query up, key, head weights); 0: dense
  double embedding = 0; ///< the input embedding (a lookup, not multiplied)
  double head = 0;      ///< the output head
  double total = 0;     ///< every parameter the model holds
  double active = 0;    ///< the ones one token is multiplied by (its routed experts only)
};
Parameters parameters(const ModelSpec& m);

/// The keys `m` lacks for the serving step's roofline ("a, b"; "" when none), and that as a
/// sentence for the caller to report ("" when nothing is missing).
std::string missing_serving_keys(const ModelSpec& m);
std::string missing_for_serving(const ModelSpec& m);

/// How a serving instance spreads the model. Attention is data-parallel over `dp_attention` GPUs
/// (each decodes its own batch) with the routed experts split over `ep` of them; or, with `tp` > 1,
/// one batch is decoded by `tp` ranks of a node in tensor parallelism (dp_attention and ep 1):
/// heads, MLPs and every expert split over the ranks, two all-reduces a layer.
struct Layout {
  int tp = 1;
  int dp_attention = 1;
  int ep = 1;
  int redundant_experts = 0; ///< extra copies of routed experts over the ep GPUs (EPLB)
  int gpus() const { return tp * dp_attention; }
};
/// Bytes per weight of the parts kept in BF16 whatever the model's dtype: the embedding, the
/// output head and the MoE gates (DeepSeek-V3 keeps them so, arXiv 2412.19437 §3.3.1).
inline constexpr double kBf16 = 2;
/// FP8 activations carry one fp32 scale a group of 128 values (DeepGEMM's input layout, DeepEP's
/// dispatch layout).
inline constexpr double kFp8GroupValues = 128, kFp8ScaleBytes = 4;
/// Bytes per value of such an activation, its scales spread over it.
inline constexpr double kFp8Scaled = 1.0 + kFp8ScaleBytes / kFp8GroupValues;
/// Whether values of `bytes` each are FP8 (weights or activations of a byte or less).
constexpr bool fp8_dtype(double bytes)
{
  return bytes <= 1;
}
/// The weights one GPU of the layout holds: everything but the routed experts split over `tp`, the
/// routed experts and their redundant copies split evenly over ep x tp. Under tensor parallelism the small
/// down-projections that serving engines replicate on every rank (query and KV down, the indexer, the gates: about 1 GB
/// of DeepSeek-V3's 690) are counted split too.
core::Bytes weights_per_gpu(const ModelSpec& m, const Layout& l);

/// The whole GPU's roofline time of a kernel that moves `bytes` and does `flops` at `peak` x
/// `efficiency`: max(bytes / (HBM x memory_efficiency), flops / (peak x efficiency)), no launch.
Seconds roofline(const calibrate::GpuSpec& g, core::Bytes bytes, double flops, core::FlopsPerSec peak,
                 double efficiency);

/// One element-wise kernel that moves `bytes` (read and written) through HBM: one launch.
Seconds elementwise_kernel(const Profile& p, core::Bytes bytes);

/// One GEMM kernel by the roofline: `rows` activation rows through a `k` x `n` weight matrix
/// (`matrices` of them read: a grouped or batched GEMM, each row meeting one), weights of
/// `weight_bytes` each (0: the model's dtype) at that dtype's tensor peak, activations BF16 in and
/// out, one launch. FP8 weights take FP8 input: unless `fp8_input` (the input arrives quantised),
/// a kernel before it quantises the BF16 rows (read in BF16, written in FP8 with a scale a
/// 128-value group).
Seconds gemm_time(const ModelSpec& m, const Profile& p, double rows, double k, double n, double matrices = 1,
                  double weight_bytes = 0, bool fp8_input = false);

/// An MLP's activation kernel at `rows` rows of `inter` intermediate values: SiLU of the gate times
/// the up projection, both read in BF16, the product written at `out_bytes` a value.
Seconds activation_time(const Profile& p, double rows, double inter, double out_bytes);

/// One layer's element-wise kernels at `tokens` rows on one of `tp` ranks, each one launch and its
/// bytes at HBM speed (elementwise_kernel): the residual RMSNorms before attention and before the
/// MLP (each fused with its residual add), MLA's query- and KV-latent RMSNorms, RoPE on the rotary
/// dimensions of the rank's query heads and of the keys, a sparse model's indexer key norm. The
/// activation quantisations are gemm_time's, the router's top-k and the MLPs' activations
/// mlp_time's, the routed experts' activation expert_gemm_time's. As the models' reference forward passes launch them,
/// one kernel each; a stack that fuses some (a norm with RoPE or with the quantisation that follows) saves their
/// launches.
Seconds elementwise_time(const ModelSpec& m, const Profile& p, double tokens, int tp = 1);

/// The non-attention compute one GPU runs for `tokens` decoded tokens in layers [first, last) of
/// one step: each layer's projections (projection_time's: MLA's query down and up, KV down, the
/// absorbed KV up on both sides of attention, output, and a sparse model's indexer projections;
/// GQA's query, key, value and output), then the dense MLP, or
/// in an MoE layer the router and the shared experts (the routed experts are expert_time's); the
/// output head once, with the last layer. Under `tp` ranks, as vLLM and SGLang shard MLA: the
/// query up, the per-head KV up and the output projection split by heads, the MLPs and shared
/// experts by their intermediate size, the head by the vocabulary; the query and KV down
/// projections, the indexer and the gates run whole on every rank. Each layer's element-wise
/// kernels (elementwise_time) are counted with it; gathering the head's logits is not priced. The
/// head runs for `head_rows` of the rows (negative: all of them, a decode step's; a prefill
/// chunk's tokens need it only for a prompt's last).
Seconds dense_time(const ModelSpec& m, const Profile& p, double tokens, int first, int last, int tp = 1,
                   double head_rows = -1);

/// One layer's attention projections at `tokens` rows on one of `tp` ranks (dense_time's
/// shards): query down and up (or one query projection), KV down, the output projection, a sparse
/// model's indexer projections; with `absorbed` (MLA's multi-query form, decode's) also each
/// head's query absorbed into the latent and the latent output expanded to values. A GQA model's
/// are its query, key and value projection (one GEMM, the KV heads split over the ranks as far as
/// they go, copies past that) and its output projection.
Seconds projection_time(const ModelSpec& m, const Profile& p, double tokens, int tp, bool absorbed);
/// One layer's MLP at `tokens` rows on one of `tp` ranks: a dense layer's gate and up, activation
/// and down; an MoE layer's router (its gate over the routed experts, then their top-k) and its
/// shared experts, likewise (the routed ones are expert_time's).
Seconds mlp_time(const ModelSpec& m, const Profile& p, double tokens, bool moe_layer, int tp = 1);
/// The output head at `tokens` rows on one of `tp` ranks (the vocabulary split).
Seconds head_time(const ModelSpec& m, const Profile& p, double tokens, int tp = 1);

/// One all-reduce of `bytes` among `ranks` GPUs of a node: the profile's fixed time plus
/// 2 (ranks - 1) / ranks x bytes at its bus bandwidth (what a ring or NVLink SHARP moves through
/// each GPU). 0 for one rank.
Seconds all_reduce_time(const Profile& p, core::Bytes bytes, int ranks);
/// Tensor parallelism's all-reduces for `tokens` decoded tokens in layers [first, last): two a
/// layer (after the attention's output projection and after the MLP or MoE), of the BF16 hidden
/// states. 0 at tp 1.
Seconds tensor_parallel_time(const ModelSpec& m, const Profile& p, double tokens, int first, int last, int tp);

/// Routed experts one GPU holding experts / ep of them activates, in expectation, when
/// `group_tokens` tokens each pick experts_per_token distinct experts uniformly.
double active_local_experts(const ModelSpec& m, int ep, double group_tokens);
/// One MoE layer's routed experts on one GPU of `ep`: the grouped gate-up and down GEMMs over the
/// token-expert pairs it receives (group_tokens x experts_per_token / ep), reading the weights of
/// the experts they activate; under `tp` ranks (ep 1) every expert's intermediate size is split.
Seconds expert_time(const ModelSpec& m, const Profile& p, int ep, double group_tokens, int tp = 1);

/// One MoE layer's routed experts on one GPU: the grouped gate-up GEMM, the activation and the
/// grouped down GEMM over `pairs` token-expert pairs that reach `experts` of its experts, each
/// expert's 1 / `tp` of it.
Seconds expert_gemm_time(const ModelSpec& m, const Profile& p, double pairs, double experts, int tp = 1);

/// Bytes one token-expert pair moves in one MoE layer: dispatch sends the hidden state in FP8 with
/// one fp32 scale per 128 values (DeepEP's low-latency layout), combine returns it in BF16.
core::Bytes dispatch_bytes(const ModelSpec& m);
core::Bytes combine_bytes(const ModelSpec& m);

} // namespace xattn::sim
