// Model presets and byte accounting from first principles (docs/cost-path.md).
//
// Two kinds of attention. Multi-head Latent Attention (MLA) keeps one latent vector per token per
// layer (kv_lora_rank + rope_dim values), shared by every head. In absorbed decode each head's
// query row is also kv_lora_rank + rope_dim values, and each row's partial result is kv_lora_rank
// values plus one fp32 log-sum-exp. Grouped-query attention (GQA) keeps a key and a value of
// head_dim values per KV head per token per layer; each query head (a row) reads the KV head of its
// group, sends head_dim values and gets head_dim values plus a log-sum-exp back.
#pragma once

#include "sim/core/schema.hpp"
#include "sim/core/units.hpp"

#include <algorithm>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace xattn::sim
{

using core::Bytes;

enum class KvDtype {
  kBf16,        ///< 2 B per value
  kFp8,         ///< 1 B per value, one scale per tensor (vLLM's fp8 KV cache)
  kFp8FlashMla, ///< FlashMLA's layout: latent in fp8, one fp32 scale per 128 values, rope in bf16
};

enum class AttentionKind {
  kMla, ///< multi-head latent attention (DeepSeek-V2 and later)
  kGqa, ///< grouped-query attention (multi-head when kv_heads = heads, multi-query at 1)
};

/// DSA-style lightning indexer (sparse selection); topk == 0 means dense attention.
struct IndexSpec {
  int topk = 0;     ///< tokens each query attends
  int heads = 0;    ///< indexer query heads
  int head_dim = 0; ///< indexer key / query dimension (fp8)
  bool sparse() const { return topk > 0; }
};

struct ModelSpec {
  std::string name;
  std::string source; ///< where the dimensions come from
  int layers = 0;
  int heads = 0; ///< query rows per decoded token
  AttentionKind attention = AttentionKind::kMla;
  int kv_lora_rank = 0; ///< MLA
  int rope_dim = 0;     ///< MLA: the decoupled RoPE part of the latent
  int kv_heads = 0;     ///< GQA: key and value heads
  int head_dim = 0;     ///< GQA: dims of each query, key and value head
  KvDtype kv_dtype = KvDtype::kBf16;
  IndexSpec index;
  int qk_nope_head_dim = 0; ///< per head, query/key dims without RoPE (prefill's unabsorbed attention)
  int v_head_dim = 0;       ///< per head, value dims
  // The rest of a layer, for the serving step (sim/model/serving.hpp); 0: not given.
  int hidden = 0;              ///< hidden size
  int q_lora_rank = 0;         ///< query down-projection rank (0: one plain query projection)
  int dense_layers = 0;        ///< first layers with a dense MLP (DeepSeek: first_k_dense_replace); the rest MoE
  int dense_intermediate = 0;  ///< dense MLP intermediate size
  int experts = 0;             ///< routed experts per MoE layer (0: every layer dense)
  int experts_per_token = 0;   ///< routed experts each token goes to
  int shared_experts = 0;      ///< experts every token goes to
  int expert_intermediate = 0; ///< one expert's intermediate size
  int vocab = 0;               ///< vocabulary (embedding and output head)
  double weight_bytes = 1;     ///< bytes per weight as served (FP8: 1, BF16: 2)
  bool moe() const { return experts > 0; }
  int moe_layers() const { return moe() ? layers - dense_layers : 0; }
  /// Layer `l` (from 0) is an MoE layer: past the first dense_layers of an MoE model.
  bool moe_layer(int l) const { return moe() && l >= dense_layers; }

  bool mla() const { return attention == AttentionKind::kMla; }

  /// KV of one token in one layer, all of it. MLA's latent: (rank + rope) x 2 B in bf16 (1152 B for
  /// 512 + 64); rank x 1 B + rank/128 x 4 B + rope x 2 B in FlashMLA fp8 (656 B). GQA's keys and
  /// values: 2 x kv_heads x head_dim values (4 KiB in bf16 for 8 heads of 128).
  Bytes kv_per_token() const;
  /// What a decode kernel reads of one cached token for `rows` query rows of one request: MLA's
  /// whole latent (every head reads it); under GQA the KV heads those rows' groups use (rows are
  /// consecutive heads: a tp-th of them reads a tp-th of the KV heads, at least one).
  Bytes kv_read_per_token(double rows) const;
  /// The ways tensor parallelism over `tp` ranks splits one token's KV: MLA's one latent head is
  /// needed whole on every rank (1); GQA's KV heads split, min(tp, kv_heads) (past kv_heads,
  /// ranks hold copies of a head).
  int kv_split(int tp) const { return mla() ? 1 : std::max(1, std::min(tp, kv_heads)); }
  /// Of `tokens` tokens' KV moved to an instance of `tp` ranks, what each rank receives from its
  /// sender, in tokens' worth: MLA a tp-th of them (forwarded to its peers after), GQA its own KV
  /// heads' share of every one.
  double tokens_per_rank(double tokens, int tp) const { return tokens / (mla() ? std::max(1, tp) : kv_split(tp)); }
  /// One token's KV in one layer as each of `tp` ranks holds it.
  Bytes kv_per_token_on_rank(int tp) const { return kv_per_token() / static_cast<double>(kv_split(tp)); }
  /// Of one token's KV in one layer, the bytes a move to another position re-rotates (RoPE): MLA's
  /// rope part (bf16 in every layout), GQA's keys.
  Bytes rotated_per_token() const;
  /// One query row as routed in absorbed form: MLA's (rank + rope) bf16 values (1152 B); GQA's
  /// head_dim bf16 values (256 B for 128).
  Bytes query_row() const;
  /// One partial result row: the row's values in bf16 (MLA: rank; GQA: head_dim) plus an fp32
  /// log-sum-exp (1028 B; 260 B).
  Bytes output_row() const;
  /// FLOPs of decode attention per (cached token, query row): scores and output, a multiply and an
  /// add each. MLA absorbed: scores over rank + rope values, output over rank; GQA: head_dim each.
  double attention_flops_per_token_row() const;
  /// Indexer key of one token in one layer: head_dim fp8 values plus an fp32 scale (132 B).
  Bytes index_key_per_token() const;
  /// Indexer query of one decoded token in one layer: heads x head_dim fp8 values (8 KiB).
  Bytes index_query_per_token() const;
};

/// The model schema, for --describe and inline models in scenarios.
const core::Schema& model_schema();
/// Reads a model from a mapping (a preset file's root or a scenario's inline `model:`).
ModelSpec read_model(core::Section& s);

/// The keys whose condition is false, "a, b, c" ("" when none): what a model lacks for a use.
std::string missing_keys(std::initializer_list<std::pair<bool, const char*>> needs);
/// The file a model name or path stands for (sim/models/NAME.yaml, or the path), if it exists.
std::optional<std::filesystem::path> model_file(std::string_view name_or_path);
/// Loads a preset by name (sim/models/NAME.yaml) or a model file by path.
ModelSpec load_model(std::string_view name_or_path);

} // namespace xattn::sim
