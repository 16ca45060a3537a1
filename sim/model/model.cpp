#include "sim/model/model.hpp"

#include "sim/core/resources.hpp"

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
    {.key = "kv_lora_rank",
     .kind = FieldKind::kInteger,
     .meaning = "MLA latent rank",
     .check = Check::kPositive,
     .range = {1, 1073741824,
               "a token's latent row stays below 2 GiB (bf16); published models use 512, the validation harness "
               "(validate/micro.hpp) makes one row a whole message"}},
    {.key = "rope_dim",
     .kind = FieldKind::kInteger,
     .meaning = "decoupled RoPE dimensions",
     .check = Check::kPositive,
     .range = {1, 65536, "published models use 64"}},
    {.key = "kv_dtype",
     .kind = FieldKind::kChoice,
     .def = "bf16",
     .meaning = "latent cache layout",
     .choices = "bf16|fp8-flashmla"},
    {.key = "active_parameters",
     .dim = core::Dimension::kCount,
     .def = "0",
     .meaning = "parameters one token's forward pass uses (MoE: activated), for the roofline re-prefill; 0: not given",
     .range = {0, 1e15, "published models activate at most a few hundred billion"}},
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
    {.key = "index",
     .kind = FieldKind::kSection,
     .def = "",
     .meaning = "DSA indexer (sparse selection)",
     .sub = &kIndexSchema},
};
} // namespace

Bytes ModelSpec::latent_per_token() const
{
  if (kv_dtype == KvDtype::kFp8FlashMla) return Bytes(kv_lora_rank * 1.0 + (kv_lora_rank / 128) * 4.0 + rope_dim * 2.0);
  return Bytes((kv_lora_rank + rope_dim) * 2.0);
}
Bytes ModelSpec::query_row() const
{
  return Bytes((kv_lora_rank + rope_dim) * 2.0);
}
Bytes ModelSpec::output_row() const
{
  return Bytes(kv_lora_rank * 2.0 + 4.0);
}
Bytes ModelSpec::index_key_per_token() const
{
  return Bytes(index.sparse() ? index.head_dim + 4.0 : 0.0);
}
Bytes ModelSpec::index_query_per_token() const
{
  return Bytes(index.sparse() ? 1.0 * index.heads * index.head_dim : 0.0);
}

const core::Schema& model_schema()
{
  return kModelSchema;
}

ModelSpec read_model(core::Section& s)
{
  ModelSpec m;
  m.name = s.string("name");
  m.source = s.string("source");
  m.layers = s.count("layers");
  m.heads = s.count("heads");
  m.kv_lora_rank = s.count("kv_lora_rank");
  m.rope_dim = s.count("rope_dim");
  m.kv_dtype = s.choice("kv_dtype") == "fp8-flashmla" ? KvDtype::kFp8FlashMla : KvDtype::kBf16;
  m.active_parameters = s.number("active_parameters");
  m.qk_nope_head_dim = s.count("qk_nope_head_dim");
  m.v_head_dim = s.count("v_head_dim");
  core::Section idx = s.section("index");
  m.index.topk = idx.count("topk");
  m.index.heads = idx.count("heads");
  m.index.head_dim = idx.count("head_dim");
  if (m.index.sparse() && (m.index.heads <= 0 || m.index.head_dim <= 0))
    idx.error("topk", "a sparse indexer (topk > 0) needs heads and head_dim > 0");
  if (m.kv_dtype == KvDtype::kFp8FlashMla && m.kv_lora_rank % 128 != 0)
    s.error("kv_dtype", "fp8-flashmla scales every 128 latent values: kv_lora_rank must be a multiple of 128");
  return m;
}

ModelSpec load_model(std::string_view name_or_path)
{
  auto path = core::resolve_preset(name_or_path, "sim/models");
  if (!path) {
    std::string known;
    for (const std::string& n : core::list_presets("sim/models"))
      known += (known.empty() ? "" : ", ") + n;
    core::fail("command line", 0, 0, "--model",
               "no model file or preset named '" + std::string(name_or_path) + "' (presets: " + known + ")");
  }
  core::Document doc = core::load_yaml(*path);
  core::Diagnostics diags;
  core::Section top(doc.file, doc.root, "", kModelSchema, diags);
  ModelSpec m = read_model(top);
  diags.throw_if_any();
  return m;
}

} // namespace xattn::sim
