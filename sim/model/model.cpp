#include "sim/model/model.hpp"
#include "sim/core/yaml.hpp"

#include "sim/core/resources.hpp"

#include <cmath>

namespace xattn::sim
{
namespace
{
using core::Check;
using core::FieldKind;

const core::Schema kIndexSchema{
    {.key = "topk",
     .kind = FieldKind::kInteger,
     .def = "0",
     .meaning = "tokens each query attends (0: dense)",
     .range = {0, 16777216, "2^24 tokens is past every context window"}},
    {.key = "heads",
     .kind = FieldKind::kInteger,
     .def = "0",
     .meaning = "indexer query heads",
     .range = {0, 1024, "indexer heads: DeepSeek-V3.2 has 64"}},
    {.key = "head_dim",
     .kind = FieldKind::kInteger,
     .def = "0",
     .meaning = "indexer head dimension (fp8)",
     .range = {0, 65536, "indexer head dimension: DeepSeek-V3.2 has 128"}},
};

const core::Schema kModelSchema{
    {.key = "name", .kind = FieldKind::kString, .meaning = "model name"},
    {.key = "source", .kind = FieldKind::kString, .def = core::kNoDefault, .meaning = "where the dimensions come from"},
    {.key = "layers",
     .kind = FieldKind::kInteger,
     .meaning = "transformer layers",
     .check = Check::kPositive,
     .range = {1, 1024, "published models have at most a few hundred (DeepSeek-V3: 61)"}},
    {.key = "heads",
     .kind = FieldKind::kInteger,
     .meaning = "attention heads (query rows per token)",
     .check = Check::kPositive,
     .range = {1, 65536,
               "published models have 64 to 128; the validation harness (validate/micro.hpp) sets a microbenchmark's "
               "query rows, up to 16,384"}},
    {.key = "attention",
     .kind = FieldKind::kChoice,
     .def = "mla",
     .meaning = "attention kind: mla (a latent per token: kv_lora_rank, rope_dim) or gqa (kv_heads x head_dim keys "
                "and values)",
     .choices = "mla|gqa"},
    {.key = "kv_lora_rank",
     .kind = FieldKind::kInteger,
     .def = "0",
     .meaning = "MLA latent rank (attention: mla needs it)",
     .range = {0, 1073741824,
               "a token's latent row stays below 2 GiB (bf16); published models use 512, the validation harness "
               "(validate/micro.hpp) makes one row a whole message"}},
    {.key = "rope_dim",
     .kind = FieldKind::kInteger,
     .def = "0",
     .meaning = "MLA decoupled RoPE dimensions (attention: mla needs it)",
     .range = {0, 65536, "published models use 64"}},
    {.key = "kv_heads",
     .kind = FieldKind::kInteger,
     .def = "0",
     .meaning = "GQA key and value heads (num_key_value_heads; attention: gqa needs it)",
     .range = {0, 65536, "published models have 1 to 128; at most the query heads"}},
    {.key = "head_dim",
     .kind = FieldKind::kInteger,
     .def = "0",
     .meaning = "GQA dims of each query, key and value head (head_dim; attention: gqa needs it)",
     .range = {0, 65536, "published models use 64 to 256"}},
    {.key = "kv_dtype",
     .kind = FieldKind::kChoice,
     .def = "bf16",
     .meaning = "KV cache layout: bf16, fp8 (one byte a value, a scale per tensor), or FlashMLA's fp8 latent (MLA)",
     .choices = "bf16|fp8|fp8-flashmla"},
    {.key = "qk_nope_head_dim",
     .kind = FieldKind::kInteger,
     .def = "0",
     .meaning = "per head query/key dims without RoPE (prefill attention); 0: not given",
     .range = {0, 65536, "published models use 128"}},
    {.key = "v_head_dim",
     .kind = FieldKind::kInteger,
     .def = "0",
     .meaning = "per head value dims (prefill attention); 0: not given",
     .range = {0, 65536, "published models use 128"}},
    {.key = "hidden",
     .kind = FieldKind::kInteger,
     .def = "0",
     .meaning = "hidden size (the serving step's GEMMs); 0: not given",
     .range = {0, 1048576, "published models use 2,048 to 16,384"}},
    {.key = "q_lora_rank",
     .kind = FieldKind::kInteger,
     .def = "0",
     .meaning = "query down-projection rank (0: one plain query projection)",
     .range = {0, 1048576, "DeepSeek-V3 uses 1,536"}},
    {.key = "dense_layers",
     .kind = FieldKind::kInteger,
     .def = "0",
     .meaning = "first layers with a dense MLP (first_k_dense_replace); the rest are MoE when experts > 0",
     .range = {0, 1024, "at most the model's layers"}},
    {.key = "dense_intermediate",
     .kind = FieldKind::kInteger,
     .def = "0",
     .meaning = "dense MLP intermediate size (intermediate_size)",
     .range = {0, 4194304, "published models use up to about 50,000"}},
    {.key = "experts",
     .kind = FieldKind::kInteger,
     .def = "0",
     .meaning = "routed experts per MoE layer (n_routed_experts); 0: a dense model",
     .range = {0, 65536, "published MoE models have up to a few hundred"}},
    {.key = "experts_per_token",
     .kind = FieldKind::kInteger,
     .def = "0",
     .meaning = "routed experts each token goes to (num_experts_per_tok)",
     .range = {0, 1024, "published MoE models route each token to 1 to 16"}},
    {.key = "shared_experts",
     .kind = FieldKind::kInteger,
     .def = "0",
     .meaning = "experts every token goes to (n_shared_experts)",
     .range = {0, 1024, "DeepSeek-V3 has one"}},
    {.key = "expert_intermediate",
     .kind = FieldKind::kInteger,
     .def = "0",
     .meaning = "one expert's intermediate size (moe_intermediate_size)",
     .range = {0, 4194304, "DeepSeek-V3 uses 2,048"}},
    {.key = "vocab",
     .kind = FieldKind::kInteger,
     .def = "0",
     .meaning = "vocabulary size (embedding and output head)",
     .range = {0, 16777216, "published models have up to a few hundred thousand"}},
    {.key = "weight_dtype",
     .kind = FieldKind::kChoice,
     .def = "fp8",
     .meaning = "weights as served (GEMMs at that dtype's tensor peak)",
     .choices = "fp8|bf16"},
    {.key = "index",
     .kind = FieldKind::kSection,
     .def = "",
     .meaning = "DSA indexer (sparse selection)",
     .sub = &kIndexSchema},
};
} // namespace

namespace
{
double bytes_per_value(KvDtype d)
{
  return d == KvDtype::kBf16 ? 2.0 : 1.0;
}
} // namespace

Bytes ModelSpec::kv_per_token() const
{
  if (!mla()) return Bytes(2.0 * kv_heads * head_dim * bytes_per_value(kv_dtype));
  if (kv_dtype == KvDtype::kFp8FlashMla) return Bytes(kv_lora_rank * 1.0 + (kv_lora_rank / 128) * 4.0 + rope_dim * 2.0);
  return Bytes((kv_lora_rank + rope_dim) * bytes_per_value(kv_dtype));
}
Bytes ModelSpec::kv_read_per_token(double rows) const
{
  if (mla()) return kv_per_token();
  const double group = static_cast<double>(heads) / kv_heads; // query heads per KV head
  const double read = std::clamp(std::ceil(rows / group), 1.0, static_cast<double>(kv_heads));
  return kv_per_token() * (read / kv_heads);
}
Bytes ModelSpec::rotated_per_token() const
{
  if (mla()) return Bytes(rope_dim * 2.0);
  return Bytes(1.0 * kv_heads * head_dim * bytes_per_value(kv_dtype));
}
Bytes ModelSpec::query_row() const
{
  return Bytes((mla() ? kv_lora_rank + rope_dim : head_dim) * 2.0);
}
Bytes ModelSpec::output_row() const
{
  return Bytes((mla() ? kv_lora_rank : head_dim) * 2.0 + 4.0);
}
double ModelSpec::attention_flops_per_token_row() const
{
  return mla() ? 2.0 * (2.0 * kv_lora_rank + rope_dim) : 2.0 * (2.0 * head_dim);
}
Bytes ModelSpec::index_key_per_token() const
{
  return Bytes(index.sparse() ? index.head_dim + 4.0 : 0.0);
}
Bytes ModelSpec::index_query_per_token() const
{
  return Bytes(index.sparse() ? 1.0 * index.heads * index.head_dim : 0.0);
}

std::string missing_keys(std::initializer_list<std::pair<bool, const char*>> needs)
{
  std::string keys;
  for (const auto& [ok, key] : needs)
    if (!ok) keys += (keys.empty() ? "" : ", ") + std::string(key);
  return keys;
}

const core::Schema& model_schema()
{
  return kModelSchema;
}

namespace
{
// Each attention kind's own keys, and none of the other's.
void check_attention(core::Section& s, const ModelSpec& m)
{
  const std::string kind = m.mla() ? "attention: mla" : "attention: gqa";
  const auto need = [&](const char* key, int value) {
    if (value <= 0) s.error(key, kind + " needs " + key + " > 0");
  };
  const auto foreign = [&](const char* key, const char* owner) {
    if (s.has(key)) s.error(key, std::string("a key of ") + owner + ", not of this model's " + kind);
  };
  if (m.mla()) {
    need("kv_lora_rank", m.kv_lora_rank);
    need("rope_dim", m.rope_dim);
    for (const char* key : {"kv_heads", "head_dim"})
      foreign(key, "attention: gqa");
    if (m.kv_dtype == KvDtype::kFp8FlashMla && m.kv_lora_rank % 128 != 0)
      s.error("kv_dtype", "fp8-flashmla scales every 128 latent values: kv_lora_rank must be a multiple of 128");
    return;
  }
  need("kv_heads", m.kv_heads);
  need("head_dim", m.head_dim);
  for (const char* key : {"kv_lora_rank", "rope_dim", "q_lora_rank", "qk_nope_head_dim", "v_head_dim", "index"})
    foreign(key, "attention: mla");
  if (m.kv_dtype == KvDtype::kFp8FlashMla)
    s.error("kv_dtype", "fp8-flashmla is MLA's latent layout; GQA takes bf16 or fp8");
  if (m.kv_heads > 0 && m.heads % m.kv_heads != 0)
    s.error("kv_heads", std::to_string(m.heads) + " query heads do not split into groups over " +
                            std::to_string(m.kv_heads) + " KV heads");
}
} // namespace

ModelSpec read_model(core::Section& s)
{
  ModelSpec m;
  m.name = s.string("name");
  m.source = s.string("source");
  m.layers = s.count("layers");
  m.heads = s.count("heads");
  m.attention = s.choice("attention") == "gqa" ? AttentionKind::kGqa : AttentionKind::kMla;
  m.kv_lora_rank = s.count("kv_lora_rank");
  m.rope_dim = s.count("rope_dim");
  m.kv_heads = s.count("kv_heads");
  m.head_dim = s.count("head_dim");
  const std::string dtype = s.choice("kv_dtype");
  m.kv_dtype = dtype == "fp8-flashmla" ? KvDtype::kFp8FlashMla : dtype == "fp8" ? KvDtype::kFp8 : KvDtype::kBf16;
  m.qk_nope_head_dim = s.count("qk_nope_head_dim");
  m.v_head_dim = s.count("v_head_dim");
  m.hidden = s.count("hidden");
  m.q_lora_rank = s.count("q_lora_rank");
  m.dense_layers = s.count("dense_layers");
  m.dense_intermediate = s.count("dense_intermediate");
  m.experts = s.count("experts");
  m.experts_per_token = s.count("experts_per_token");
  m.shared_experts = s.count("shared_experts");
  m.expert_intermediate = s.count("expert_intermediate");
  m.vocab = s.count("vocab");
  m.weight_bytes = s.choice("weight_dtype") == "bf16" ? 2.0 : 1.0;
  if (m.dense_layers > m.layers)
    s.error("dense_layers", std::to_string(m.dense_layers) + " dense layers in a model of " + std::to_string(m.layers));
  if (m.experts > 0 && (m.experts_per_token <= 0 || m.experts_per_token > m.experts || m.expert_intermediate <= 0))
    s.error("experts", "an MoE model (experts > 0) needs experts_per_token in 1..experts and expert_intermediate > 0");
  core::Section idx = s.section("index");
  m.index.topk = idx.count("topk");
  m.index.heads = idx.count("heads");
  m.index.head_dim = idx.count("head_dim");
  if (m.index.sparse() && (m.index.heads <= 0 || m.index.head_dim <= 0))
    idx.error("topk", "a sparse indexer (topk > 0) needs heads and head_dim > 0");
  check_attention(s, m);
  return m;
}

std::optional<std::filesystem::path> model_file(std::string_view name_or_path)
{
  return core::resolve_preset(name_or_path, "sim/models");
}

ModelSpec load_model(std::string_view name_or_path)
{
  auto path = model_file(name_or_path);
  if (!path) {
    core::fail("command line", 0, 0, "--model", core::no_preset_message("model", name_or_path, "sim/models"));
  }
  core::Document doc = core::load_yaml(*path);
  core::Diagnostics diags;
  core::Section top(doc.file, doc.root, "", kModelSchema, diags);
  ModelSpec m = read_model(top);
  diags.throw_if_any();
  return m;
}

} // namespace xattn::sim
