// Model presets and byte accounting from first principles (docs/cost-path.md).
//
// Multi-head Latent Attention keeps one latent vector per token per layer (kv_lora_rank +
// rope_dim values). In absorbed decode each head's query row is also kv_lora_rank + rope_dim
// values, and each row's partial result is kv_lora_rank values plus one fp32 log-sum-exp.
#pragma once

#include "sim/core/schema.hpp"
#include "sim/core/units.hpp"

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
  kFp8FlashMla, ///< FlashMLA's layout: latent in fp8, one fp32 scale per 128 values, rope in bf16
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
  int kv_lora_rank = 0;
  int rope_dim = 0;
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

  /// Latent KV of one token in one layer: (rank + rope) x 2 B in bf16 (1152 B for 512 + 64);
  /// rank x 1 B + rank/128 x 4 B + rope x 2 B in FlashMLA fp8 (656 B).
  Bytes latent_per_token() const;
  /// One absorbed query row: (rank + rope) bf16 values (1152 B).
  Bytes query_row() const;
  /// One partial result row: rank bf16 values plus an fp32 log-sum-exp (1028 B).
  Bytes output_row() const;
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
