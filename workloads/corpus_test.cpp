#include "sim/core/error.hpp"
#include "sim/core/yaml.hpp"
#include "workloads/corpus.hpp"
#include "workloads/generator.hpp"
#include "workloads/mooncake.hpp"
#include "workloads/selection.hpp"
#include "workloads/test_util.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <numeric>
#include <set>

using namespace xattn::workloads;
using namespace xattn::workloads::testing;
using Catch::Matchers::Contains;

namespace
{
// 100,000 blocks numbered by position, and a selection without locality (nothing recent or hot):
// fresh draws almost never collide, so shares kept are what is drawn.
std::vector<std::uint64_t> plain_context()
{
  std::vector<std::uint64_t> context(100000);
  for (std::uint64_t i = 0; i < context.size(); ++i)
    context[i] = i;
  return context;
}
SelectionConfig no_locality()
{
  SelectionConfig cfg;
  cfg.recent_fraction = 0;
  cfg.hot_fraction = 0;
  return cfg;
}
} // namespace

TEST_CASE("workloads: corpus numbers blocks by first appearance and cuts chunks of c_t tokens")
{
  Corpus corpus(1024, 512); // 2 blocks per chunk
  MooncakeReader src(fixture("mooncake_small.jsonl"));
  Request r;
  while (src.next(r))
    corpus.add(r);
  // First appearance: 0 1 2 | 3 4 | 5 -> indices 0..5, chunks of two.
  CHECK(corpus.blocks() == 6);
  CHECK(corpus.chunks() == 3);
  CHECK(*corpus.find(2) == 1);
  CHECK(*corpus.find(3) == 1);
  CHECK(*corpus.find(5) == 2);
  CHECK_FALSE(corpus.find(99));
  CHECK_THROWS_WITH(Corpus(1000, 512), Contains("c_t = 1000 tokens is not a multiple of the trace's block size (512"));
  CHECK_THROWS_WITH(Corpus(1024, 0), Contains("the trace has no blocks"));
}

TEST_CASE("workloads: prescan counts chunk references and finds the hot chunks")
{
  MooncakeReader src(fixture("mooncake_small.jsonl"));
  CorpusScan scan = prescan(src, 1024, 512);
  // chunk 0 = blocks {0, 1}: 4 + 3 refs; chunk 1 = {2, 3}: 1 + 2; chunk 2 = {4, 5}: 1 + 1.
  CHECK(scan.chunk_refs == std::vector<std::uint64_t>{7, 3, 2});
  CHECK(scan.hot_chunks(0.34) == std::vector<std::uint64_t>{0});
  CHECK(scan.hot_chunks(0.67) == std::vector<std::uint64_t>{0, 1});
}

TEST_CASE("workloads: placement strategies map chunks to holders deterministically")
{
  CorpusConfig c;
  c.holders = 4;
  c.seed = 0;
  c.placement = PlacementStrategy::kRoundRobin;
  Placement rr(c, 0);
  CHECK(rr.primary(0) == 0);
  CHECK(rr.primary(5) == 1);
  c.placement = PlacementStrategy::kContiguous;
  Placement contiguous(c, 10);
  CHECK(contiguous.primary(0) == 0);
  CHECK(contiguous.primary(2) == 0);
  CHECK(contiguous.primary(3) == 1); // 3 * 4 / 10
  CHECK(contiguous.primary(9) == 3);
  CHECK_THROWS_WITH(Placement(c, 0), Contains("contiguous placement needs the corpus size"));
  c.placement = PlacementStrategy::kHashed;
  Placement hashed(c, 0), hashed_again(c, 0);
  std::vector<int> load(4, 0);
  for (std::uint64_t k = 0; k < 4000; ++k) {
    REQUIRE(hashed.primary(k) == hashed_again.primary(k));
    ++load[hashed.primary(k)];
  }
  for (int l : load)
    CHECK(l == Approx(1000).margin(120)); // binomial sd 27
  c.seed = 9;
  Placement reseeded(c, 0);
  int moved = 0;
  for (std::uint64_t k = 0; k < 100; ++k)
    moved += reseeded.primary(k) != hashed.primary(k);
  CHECK(moved > 50);
  c.placement = PlacementStrategy::kHotReplicated;
  c.replicas = 3;
  Placement hot(c, 0, {7, 2});
  std::vector<int> where;
  hot.holders_of(2, where);
  CHECK(where.size() == 3);
  CHECK(std::set<int>(where.begin(), where.end()).size() == 3);
  CHECK(where[0] == hot.primary(2));
  hot.holders_of(3, where);
  CHECK(where.size() == 1);
  CHECK_THROWS_WITH(Placement(c, 0), Contains("needs the hot chunks"));
}

TEST_CASE("workloads: capacity check names the holder over its HBM budget")
{
  CorpusConfig c;
  c.holders = 2;
  c.seed = 0;
  c.chunk_tokens = 2048;
  c.placement = PlacementStrategy::kRoundRobin;
  c.holder_hbm = xattn::core::Bytes(3 * 2048 * 1152.0); // room for 3 chunks of bf16 MLA latents
  Placement rr(c, 0);
  auto bytes = check_capacity(rr, 6, c, xattn::core::Bytes(1152));
  CHECK(bytes[0] == 3 * 2048 * 1152.0);
  CHECK(bytes[1] == 3 * 2048 * 1152.0);
  CHECK_THROWS_WITH(
      check_capacity(rr, 7, c, xattn::core::Bytes(1152)),
      Contains("corpus placement: error: corpus.holder_hbm: holder 0 needs 9.437MB of corpus KV (4 chunks of "
               "2.359MB), over its budget of 7.078MB"));
  // A corpus that does not fit is a FitError, which a plan judges as a failing size.
  CHECK_THROWS_AS(check_capacity(rr, 7, c, xattn::core::Bytes(1152)), xattn::core::FitError);
}

TEST_CASE("workloads: corpus and selection sections read from YAML with positions")
{
  auto errors = [](const xattn::core::Schema& schema, const std::string& text, bool selection) {
    xattn::core::Document doc = xattn::core::parse_yaml(text, "c.yaml");
    xattn::core::Diagnostics d;
    xattn::core::Section s("c.yaml", doc.root, "", schema, d);
    if (selection)
      read_selection(s);
    else
      read_corpus(s);
    try {
      d.throw_if_any();
    } catch (const xattn::core::InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(errors(corpus_schema(), "placement: hashed\nholder_hbm: 40GB\n", false).empty());
  CHECK_THAT(errors(corpus_schema(), "placement: contiguous\nprescan: false\n", false),
             Contains("c.yaml:2:10: error: prescan: placement 'contiguous' needs the whole corpus first"));
  CHECK_THAT(errors(corpus_schema(), "holder_hbm: 40\n", false), Contains("holder_hbm: missing unit"));
  CHECK_THAT(errors(selection_schema(), "recent_fraction: 0.8\nhot_fraction: 0.5\n", true),
             Contains("c.yaml:2:15: error: hot_fraction: recent_fraction + hot_fraction must not exceed 1"));
  CHECK_THAT(errors(selection_schema(), "mode: sparse\n", true), Contains("mode: unknown value 'sparse'"));
}

TEST_CASE("workloads: sparse selection keeps k tokens' worth of blocks with locality")
{
  std::vector<std::uint64_t> context(1000);
  for (std::uint64_t i = 0; i < 1000; ++i)
    context[i] = 5000 + i;
  auto hot = [](std::uint64_t b) { return b >= 5100 && b < 5110; }; // 10 hot blocks
  SelectionConfig cfg;                                              // k 2048, 25% recent, 25% hot
  cfg.recent_window_tokens = 64 * 20;                               // the last 20 blocks
  Selector sel(cfg, context, 64, hot);
  CHECK(sel.per_step() == 32);
  Rng rng(3);
  std::vector<std::uint64_t> out;
  double recent = 0, hot_n = 0;
  const int steps = 2000;
  for (int s = 0; s < steps; ++s) {
    sel.select(rng, out);
    REQUIRE(out.size() == 32);
    REQUIRE(std::is_sorted(out.begin(), out.end()));
    REQUIRE(std::adjacent_find(out.begin(), out.end()) == out.end());
    for (std::uint64_t b : out) {
      recent += b >= 5980;
      hot_n += hot(b);
    }
  }
  // Expected per step: 8 recent + 8 hot, plus what the 16 spread draws land there (16 * 20/1000
  // recent, 16 * 2/1000 hot, less collisions): about 8.3 and 8.03. Blocks kept from the step
  // before keep these proportions: a kept block is classed by where it lies, and a block not
  // kept is not drawn again that step, so spread draws land less often in the 20-block window
  // (about 8.1 recent blocks a step, whatever the share kept).
  CHECK(recent / steps == Approx(8.3).margin(0.25));
  CHECK(hot_n / steps == Approx(8.03).margin(0.1));
  for (double overlap : {0.0, 0.9}) {
    SelectionConfig c = cfg;
    c.step_overlap = overlap;
    Selector other(c, context, 64, hot);
    double r = 0, h = 0;
    for (int s = 0; s < steps; ++s) {
      other.select(rng, out);
      for (std::uint64_t b : out) {
        r += b >= 5980;
        h += hot(b);
      }
    }
    CAPTURE(overlap);
    CHECK(r / steps == Approx(8.3).margin(0.3));
    CHECK(h / steps == Approx(8.03).margin(0.1));
  }

  cfg.sparse = false;
  Selector dense(cfg, context, 64, hot);
  dense.select(rng, out);
  CHECK(out == context);
  SelectionConfig small;
  std::vector<std::uint64_t> short_ctx{1, 2, 3};
  Selector few(small, short_ctx, 512, nullptr); // 2048 / 512 = 4 blocks > 3: all of them
  few.select(rng, out);
  CHECK(out == short_ctx);
}

TEST_CASE("workloads: each layer selects its own top-k: the union of 61 layers by hand")
{
  // Each layer keeps each of the base's 32 blocks with probability q = sqrt(0.85) = 0.92195 and
  // draws 32 x (1 - q) = 2.498 afresh: the union is the base blocks some layer kept,
  // 32 x (1 - 0.07805^61) = 32, and 61 x 2.498 = 152.4 fresh ones, 184.4.
  const std::vector<std::uint64_t> context = plain_context();
  SelectionConfig cfg = no_locality();
  cfg.layer_overlap = 0.85;
  cfg.step_overlap = 0; // each step afresh: the union is the layers' alone
  Selector sel(cfg, context, 64, nullptr);
  Rng rng(7);
  std::vector<std::uint64_t> out;
  std::vector<std::uint32_t> layers_of;
  double blocks = 0;
  const int steps = 400;
  for (int s = 0; s < steps; ++s) {
    sel.select_layers(rng, 61, out, layers_of);
    REQUIRE(out.size() == layers_of.size());
    REQUIRE(std::is_sorted(out.begin(), out.end()));
    // Every layer selects exactly 32 blocks.
    REQUIRE(std::accumulate(layers_of.begin(), layers_of.end(), 0u) == 61u * 32);
    REQUIRE(*std::max_element(layers_of.begin(), layers_of.end()) <= 61u);
    blocks += static_cast<double>(out.size());
  }
  CHECK(blocks / steps == Approx(184.4).epsilon(0.02));
  CHECK(sel.expected_union(61) == Approx(184.4).epsilon(0.001));
  // Overlap 1: one selection for all layers, as select() draws it.
  cfg.layer_overlap = 1;
  Selector same(cfg, context, 64, nullptr), twin(cfg, context, 64, nullptr);
  Rng a(9), b(9);
  std::vector<std::uint64_t> one;
  same.select_layers(a, 61, out, layers_of);
  twin.select(b, one);
  CHECK(out == one);
  CHECK(std::all_of(layers_of.begin(), layers_of.end(), [](std::uint32_t n) { return n == 61; }));
  CHECK(same.expected_union(61) == 32);
}

TEST_CASE("workloads: layers share layer_overlap of their blocks, steps keep step_overlap")
{
  // The defaults: two layers share 0.85 of their 32 blocks, a layer keeps 0.6 of its own from the
  // step before.
  const std::vector<std::uint64_t> context = plain_context();
  const SelectionConfig cfg = no_locality();
  REQUIRE(cfg.layer_overlap == 0.85);
  REQUIRE(cfg.step_overlap == 0.6);
  Selector sel(cfg, context, 64, nullptr);
  Rng rng(5);
  std::vector<std::uint64_t> out;
  std::vector<std::uint32_t> layers_of, before;
  auto common = [](std::span<const std::uint32_t> a, std::span<const std::uint32_t> b) {
    double n = 0;
    for (std::uint32_t x : a)
      n += std::find(b.begin(), b.end(), x) != b.end() ? 1 : 0;
    return n;
  };
  double layer = 0, step = 0, blocks = 0;
  const int steps = 200;
  for (int s = 0; s < steps; ++s) {
    sel.select_layers(rng, 61, out, layers_of);
    REQUIRE(std::accumulate(layers_of.begin(), layers_of.end(), 0u) == 61u * 32);
    blocks += static_cast<double>(out.size());
    const std::span<const std::uint32_t> now = sel.last_layers();
    REQUIRE(now.size() == 61u * 32);
    // Each entry's layers, as a mask, against the layers' own selections.
    REQUIRE(sel.layer_words() == 1);
    for (std::size_t i = 0; i < out.size(); ++i) {
      std::uint64_t want = 0;
      for (std::size_t l = 0; l < 61; ++l)
        for (std::uint32_t pos : now.subspan(l * 32, 32))
          if (context[pos] == out[i]) want |= std::uint64_t{1} << l;
      REQUIRE(sel.layers_selecting(i)[0] == want);
      REQUIRE(std::popcount(want) == static_cast<int>(layers_of[i]));
    }
    for (std::size_t l = 1; l < 61; ++l)
      layer += common(now.subspan(l * 32, 32), now.subspan((l - 1) * 32, 32)) / (60 * 32.0);
    if (!before.empty())
      for (std::size_t l = 0; l < 61; ++l)
        step +=
            common(now.subspan(l * 32, 32), std::span<const std::uint32_t>(before).subspan(l * 32, 32)) / (61 * 32.0);
    before.assign(now.begin(), now.end());
  }
  CHECK(layer / steps == Approx(0.85).epsilon(0.02));
  CHECK(step / (steps - 1) == Approx(0.6).epsilon(0.03));
  CHECK(blocks / steps == Approx(sel.expected_union(61)).epsilon(0.03));
  // One selection for every layer (select()): it keeps 0.6 of the step before's.
  Selector one(cfg, context, 64, nullptr);
  std::vector<std::uint64_t> last;
  double kept = 0;
  one.select(rng, last);
  for (int s = 0; s < steps; ++s) {
    one.select(rng, out);
    REQUIRE(out.size() == 32);
    for (std::uint64_t b : out)
      kept += std::binary_search(last.begin(), last.end(), b) ? 1 : 0;
    last = out;
  }
  CHECK(kept / steps == Approx(0.6 * 32).epsilon(0.03));
}

TEST_CASE("workloads: holders touched per step grows with placement scatter")
{
  GeneratorConfig g;
  g.requests = 300;
  g.corpus_tokens = 1 << 20;
  AgenticGenerator gen(g);
  Corpus corpus(2048, 64);
  CorpusConfig c;
  c.holders = 16;
  std::vector<Request> reqs;
  Request r;
  while (gen.next(r)) {
    corpus.add(r);
    reqs.push_back(r);
  }
  c.placement = PlacementStrategy::kContiguous;
  Placement contiguous(c, corpus.chunks());
  c.placement = PlacementStrategy::kHashed;
  Placement hashed(c, 0);
  SelectionConfig sc;
  Rng rng(1);
  double touched_contig = 0, touched_hashed = 0;
  std::vector<std::uint64_t> out;
  for (const Request& q : reqs) {
    Selector sel(sc, q.blocks, q.block_tokens, nullptr);
    sel.select(rng, out);
    touched_contig += holders_touched(out, corpus, contiguous);
    touched_hashed += holders_touched(out, corpus, hashed);
    REQUIRE(holders_touched(out, corpus, hashed) <= out.size());
  }
  // 32 blocks per step: hashed chunks spread over most of the 16 holders, contiguous ones fewer.
  CHECK(touched_hashed / reqs.size() > 8);
  CHECK(touched_contig < touched_hashed);
}
