#include "sim/core/yaml.hpp"
#include "sim/model/model.hpp"

#include <catch2/catch.hpp>

using namespace xattn;
using Catch::Matchers::Contains;

TEST_CASE("model: DeepSeek-V3 byte accounting from first principles")
{
  sim::ModelSpec m = sim::load_model("deepseek-v3");
  CHECK(m.layers == 61);
  CHECK(m.heads == 128);
  CHECK(m.latent_per_token().value() == (512 + 64) * 2); // 1152 B bf16
  CHECK(m.query_row().value() == 576 * 2);               // one absorbed query row ~1 KB
  CHECK(m.output_row().value() == 512 * 2 + 4);          // bf16 output + fp32 LSE
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
  CHECK(k.latent_per_token().value() == 1152);
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
  CHECK(m.latent_per_token().value() == 512 + 4 * 4 + 64 * 2);
}

TEST_CASE("model: DeepSeek-V3.2's KV is stored as it is served, 656 B per token and layer")
{
  // 512 latent values in FP8 (1 B), one fp32 scale per 128 of them (4 x 4 B), 64 RoPE values in
  // BF16 (2 B): 656 B, against 1,152 B for the BF16 latent DeepSeek-V3's preset keeps.
  CHECK(sim::load_model("deepseek-v3.2").latent_per_token().value() == 656);
  CHECK(sim::load_model("deepseek-v3").latent_per_token().value() == (512 + 64) * 2);
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
