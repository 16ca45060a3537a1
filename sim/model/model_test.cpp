#include "sim/core/yaml.hpp"
#include "sim/model/model.hpp"
#include "sim/model/serving.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace xattn;
using Catch::Matchers::Contains;

TEST_CASE("model: DeepSeek-V3 byte accounting from first principles")
{
  sim::ModelSpec m = sim::load_model("deepseek-v3");
  CHECK(m.layers == 61);
  CHECK(m.heads == 128);
  CHECK(m.kv_per_token().value() == (512 + 64) * 2); // 1152 B bf16
  CHECK(m.query_row().value() == 576 * 2);           // one absorbed query row ~1 KB
  CHECK(m.output_row().value() == 512 * 2 + 4);      // bf16 output + fp32 LSE
  CHECK_FALSE(m.index.sparse());
  CHECK(m.index_key_per_token().value() == 0);
}

TEST_CASE("model: DeepSeek-V3.2 carries the DSA indexer")
{
  sim::ModelSpec m = sim::load_model("deepseek-v3.2");
  CHECK(m.index.topk == 2048);
  CHECK(m.index.heads == 64);
  CHECK(m.index.head_dim == 128);
  CHECK(m.index_key_per_token().value() == 128 + 4);    // fp8 key + fp32 scale
  CHECK(m.index_query_per_token().value() == 64 * 128); // fp8 per head
}

TEST_CASE("model: Kimi-K2 and GLM-5 dimensions")
{
  sim::ModelSpec k = sim::load_model("kimi-k2");
  CHECK(k.layers == 61);
  CHECK(k.heads == 64);
  CHECK(k.kv_per_token().value() == 1152);
  sim::ModelSpec g = sim::load_model("glm-5");
  CHECK(g.layers == 78);
  CHECK(g.heads == 64);
  CHECK(g.index.topk == 2048);
  CHECK(g.index.heads == 32);
}

TEST_CASE("model: FlashMLA fp8 layout is 656 B per token")
{
  core::Document doc = core::parse_yaml(
      "name: x\nlayers: 61\nheads: 128\nkv_lora_rank: 512\nrope_dim: 64\nkv_dtype: fp8-flashmla\n", "m.yaml");
  core::Diagnostics d;
  core::Section s(doc.file, doc.root, "", sim::model_schema(), d);
  sim::ModelSpec m = sim::read_model(s);
  REQUIRE(d.empty());
  CHECK(m.kv_per_token().value() == 512 + 4 * 4 + 64 * 2);
}

TEST_CASE("model: DeepSeek-V3.2's KV is stored as it is served, 656 B per token and layer")
{
  // 512 latent values in FP8 (1 B), one fp32 scale per 128 of them (4 x 4 B), 64 RoPE values in
  // BF16 (2 B): 656 B, against 1,152 B for the BF16 latent DeepSeek-V3's preset keeps.
  CHECK(sim::load_model("deepseek-v3.2").kv_per_token().value() == 656);
  CHECK(sim::load_model("deepseek-v3").kv_per_token().value() == (512 + 64) * 2);
}

namespace
{
sim::ModelSpec parse_model(const std::string& text, core::Diagnostics& d)
{
  core::Document doc = core::parse_yaml(text, "m.yaml");
  core::Section s(doc.file, doc.root, "", sim::model_schema(), d);
  return sim::read_model(s);
}
} // namespace

TEST_CASE("model: Qwen3-8B, grouped-query attention, as its config and model card give it")
{
  const sim::ModelSpec m = sim::load_model("qwen3-8b");
  REQUIRE_FALSE(m.mla());
  CHECK(m.layers == 36);
  CHECK(m.heads == 32);
  CHECK(m.kv_heads == 8);
  CHECK(m.head_dim == 128);
  CHECK(m.kv_per_token().value() == 2 * 8 * 128 * 2); // a key and a value per KV head, bf16
  CHECK(m.query_row().value() == 128 * 2);
  CHECK(m.output_row().value() == 128 * 2 + 4);
  CHECK(m.attention_flops_per_token_row() == 4 * 128);
  // Four query heads share a KV head: a quarter of the heads (tp 4) read a quarter of the KV, one
  // head still reads its whole KV head.
  CHECK(m.kv_read_per_token(32).value() == 4096);
  CHECK(m.kv_read_per_token(8).value() == 1024);
  CHECK(m.kv_read_per_token(1).value() == 512);
  CHECK(m.kv_split(4) == 4);
  CHECK(m.kv_split(16) == 8);
  CHECK(sim::load_model("deepseek-v3").kv_split(8) == 1);
  // The model card: 8.2B parameters, 6.95B of them outside the embeddings (input and output, not
  // tied). The count from the dimensions lands within the card's rounding.
  const sim::Parameters p = sim::parameters(m);
  CHECK(p.total == Approx(8.2e9).epsilon(0.05 / 8.2));
  CHECK(p.total - p.embedding - p.head == Approx(6.95e9).epsilon(0.005 / 6.95));
  CHECK(p.active == Approx(p.total - p.embedding));
}

TEST_CASE("model: Qwen3-8B's KV is what vLLM moved per prompt in Mooncake's prefill-to-decode measurements")
{
  // kvcache-ai/Mooncake measured vLLM v1 handing a Qwen3-8B prompt's KV from the prefill to the
  // decode instance and printed its size: for prompts of N tokens, N + 16 tokens' worth (the
  // prompt and the first generated token's slot, in vLLM's 16-token blocks), printed in MiB or
  // GiB to the digits shown. The model's bytes per token must give each printed size.
  const std::filesystem::path file = XATTN_SHARED_DIR "/measurements/mooncake_vllm_pd_transfer.csv";
  if (!std::filesystem::exists(file)) {
    WARN("skipped: " << file << " is absent");
    return;
  }
  const sim::ModelSpec m = sim::load_model("qwen3-8b");
  const double per_token = m.kv_per_token().value() * m.layers;
  std::ifstream in(file);
  std::string line;
  int rows = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line.rfind("prompt_tokens", 0) == 0) continue;
    std::stringstream row(line);
    std::string tokens, size;
    std::getline(row, tokens, ',');
    std::getline(row, size, ',');
    const bool gib = size.find("GB") != std::string::npos;
    const std::string digits = size.substr(0, size.size() - 2);
    const std::size_t dot = digits.find('.');
    const int decimals = dot == std::string::npos ? 0 : static_cast<int>(digits.size() - dot - 1);
    const double printed = std::stod(digits), unit = gib ? 1024.0 * 1024 * 1024 : 1024.0 * 1024;
    const double blocks = std::ceil((std::stod(tokens) + 1) / 16);
    const double model = per_token * blocks * 16 / unit;
    INFO(line << ": the model's " << model);
    CHECK(std::abs(model - printed) <= 0.5 * std::pow(10.0, -decimals));
    ++rows;
  }
  CHECK(rows == 9);
}

TEST_CASE("model: each attention kind takes its own keys")
{
  core::Diagnostics d;
  (void)parse_model("name: x\nattention: gqa\nlayers: 2\nheads: 12\nkv_heads: 8\nkv_lora_rank: 512\n"
                    "kv_dtype: fp8-flashmla\n",
                    d);
  REQUIRE_THROWS_WITH(d.throw_if_any(),
                      Contains("attention: gqa needs head_dim > 0") &&
                          Contains("kv_lora_rank: a key of attention: mla, not of this model's attention: gqa") &&
                          Contains("fp8-flashmla is MLA's latent layout") &&
                          Contains("12 query heads do not split into groups over 8 KV heads"));
  core::Diagnostics e;
  (void)parse_model("name: x\nlayers: 2\nheads: 8\nkv_heads: 8\n", e);
  REQUIRE_THROWS_WITH(e.throw_if_any(), Contains("attention: mla needs kv_lora_rank > 0") &&
                                            Contains("attention: mla needs rope_dim > 0") &&
                                            Contains("kv_heads: a key of attention: gqa"));
  core::Diagnostics f;
  const sim::ModelSpec fp8 = parse_model("name: x\nattention: gqa\nlayers: 2\nheads: 8\nkv_heads: 2\n"
                                         "head_dim: 64\nkv_dtype: fp8\n",
                                         f);
  REQUIRE(f.empty());
  CHECK(fp8.kv_per_token().value() == 2 * 2 * 64);
}

TEST_CASE("model: inline models are checked like any file")
{
  core::Document doc = core::parse_yaml("name: x\nlayers: 0\nheads: 8\nkv_lora_rank: 500\nrope_dim: 64\n"
                                        "kv_dtype: fp8-flashmla\nindex: {topk: 2048}\n",
                                        "m.yaml");
  core::Diagnostics d;
  core::Section s(doc.file, doc.root, "", sim::model_schema(), d);
  (void)sim::read_model(s);
  REQUIRE_THROWS_WITH(d.throw_if_any(), Contains("m.yaml:2:9: error: layers: must be greater than zero") &&
                                            Contains("kv_lora_rank must be a multiple of 128") &&
                                            Contains("index.topk: a sparse indexer (topk > 0) needs heads"));
}

TEST_CASE("model: an unknown preset lists the known ones")
{
  CHECK_THROWS_WITH(sim::load_model("deepseek-v9"), Contains("no model file or preset named 'deepseek-v9'") &&
                                                        Contains("deepseek-v3.2") && Contains("glm-5"));
}
