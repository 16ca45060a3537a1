#include "workloads/corpus.hpp"
#include "sim/core/yaml.hpp"

#include "sim/core/check.hpp"

#include <algorithm>
#include <numeric>

namespace xattn::workloads
{
namespace
{
using core::Check;
using core::Dimension;
using core::FieldKind;

const core::Schema kCorpusSchema{
    {.key = "chunk_tokens",
     .kind = FieldKind::kInteger,
     .def = "2048",
     .meaning = "c_t: tokens per chunk, a multiple of the block size",
     .check = Check::kPositive,
     .range = core::kTokensRange},
    {.key = "placement",
     .kind = FieldKind::kChoice,
     .def = "round-robin",
     .meaning = "chunk -> holder strategy",
     .choices = "contiguous|round-robin|hashed|hot-replicated"},
    {.key = "holders",
     .kind = FieldKind::kInteger,
     .def = "8",
     .meaning = "H: holder instances",
     .check = Check::kPositive,
     .range = {1, 65536, "at most the GPUs xattn simulates"}},
    {.key = "replicas",
     .kind = FieldKind::kInteger,
     .def = "2",
     .meaning = "hot-replicated: holders per hot chunk",
     .check = Check::kPositive,
     .range = {1, 65536, "at most the GPUs xattn simulates"}},
    {.key = "hot_set_fraction",
     .kind = FieldKind::kQuantity,
     .def = "0.05",
     .meaning = "the hot set: this share of the chunks, the most referenced (prescan); hot-replicated copies "
                "them, and a selection's hot blocks (selection.hot_fraction) are theirs",
     .range = core::kShareRange,
     .former = "hot_fraction"},
    {.key = "seed",
     .kind = FieldKind::kInteger,
     .def = core::kNoDefault,
     .meaning = "placement seed (round-robin: chunk c on holder (c + seed) mod holders); absent: the scenario's seed",
     .range = core::kSeedRange},
    {.key = "holder_hbm",
     .dim = Dimension::kBytes,
     .def = "80GB",
     .meaning = "HBM per holder for corpus KV",
     .check = Check::kPositive,
     .range = {0, 1e15, "HBM per GPU: 80GB (H100) to 288GB (B300); a PB is a typo"}},
    {.key = "position_aligned",
     .kind = FieldKind::kBool,
     .def = "false",
     .meaning = "a moved chunk keeps the positions it was cached at (prefix-chained reuse, as Mooncake's hash_ids): "
                "the splice re-rotates nothing"},
    {.key = "prescan",
     .kind = FieldKind::kBool,
     .def = "true",
     .meaning = "count references in a first pass over the trace"},
};

std::uint64_t mix(std::uint64_t x)
{
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
} // namespace

const core::Schema& corpus_schema()
{
  return kCorpusSchema;
}

CorpusConfig read_corpus(core::Section& s)
{
  CorpusConfig c;
  c.chunk_tokens = s.integer("chunk_tokens");
  const auto p = s.choice("placement");
  c.placement = p == "contiguous"       ? PlacementStrategy::kContiguous
                : p == "hashed"         ? PlacementStrategy::kHashed
                : p == "hot-replicated" ? PlacementStrategy::kHotReplicated
                                        : PlacementStrategy::kRoundRobin;
  c.holders = s.integer("holders");
  c.replicas = s.integer("replicas");
  c.hot_set_fraction = s.number("hot_set_fraction");
  if (s.has("seed")) c.seed = static_cast<std::uint64_t>(s.integer("seed"));
  c.holder_hbm = s.bytes("holder_hbm");
  c.prescan = s.boolean("prescan");
  c.position_aligned = s.boolean("position_aligned");
  if (c.placement == PlacementStrategy::kHotReplicated && c.replicas > c.holders)
    s.error("replicas", "cannot exceed holders (" + std::to_string(c.holders) + ")");
  if ((c.placement == PlacementStrategy::kHotReplicated || c.placement == PlacementStrategy::kContiguous) && !c.prescan)
    s.error("prescan", "placement '" + p + "' needs the whole corpus first: set prescan: true");
  return c;
}

Corpus::Corpus(std::int64_t chunk_tokens, std::int64_t block_tokens)
{
  if (block_tokens <= 0)
    core::fail("", 0, 0, "chunk_tokens", "the trace has no blocks: a corpus needs block ids (use the generator)");
  if (chunk_tokens <= 0 || chunk_tokens % block_tokens != 0)
    core::fail("", 0, 0, "chunk_tokens",
               "c_t = " + std::to_string(chunk_tokens) + " tokens is not a multiple of the trace's block size (" +
                   std::to_string(block_tokens) + " tokens)");
  per_chunk_ = static_cast<std::uint64_t>(chunk_tokens / block_tokens);
}

std::uint64_t Corpus::chunk_of(std::uint64_t block)
{
  auto [it, fresh] = index_.try_emplace(block, next_);
  if (fresh) ++next_;
  return it->second / per_chunk_;
}

std::optional<std::uint64_t> Corpus::find(std::uint64_t block) const
{
  auto it = index_.find(block);
  if (it == index_.end()) return std::nullopt;
  return it->second / per_chunk_;
}

std::int64_t Corpus::place_in_chunk(std::uint64_t block) const
{
  auto it = index_.find(block);
  XATTN_CHECK(it != index_.end(), "the place of a block never seen");
  return static_cast<std::int64_t>(it->second % per_chunk_);
}

void Corpus::add(const Request& r)
{
  for (std::uint64_t b : r.blocks)
    chunk_of(b);
}

std::vector<std::uint64_t> CorpusScan::hot_chunks(double fraction) const
{
  std::vector<std::uint64_t> order(chunk_refs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return chunk_refs[a] > chunk_refs[b]; });
  order.resize(static_cast<std::size_t>(fraction * static_cast<double>(order.size()) + 0.5));
  std::sort(order.begin(), order.end());
  return order;
}

CorpusScan prescan(RequestSource& source, std::int64_t chunk_tokens, std::int64_t block_tokens)
{
  CorpusScan scan{Corpus(chunk_tokens, block_tokens), {}};
  Request r;
  while (source.next(r)) {
    if (!r.blocks.empty() && r.block_tokens != block_tokens)
      core::fail("", 0, 0, "block_tokens",
                 "request " + std::to_string(r.id) + " has " + std::to_string(r.block_tokens) +
                     "-token blocks, expected " + std::to_string(block_tokens));
    for (std::uint64_t b : r.blocks) {
      const std::uint64_t c = scan.corpus.chunk_of(b);
      if (c >= scan.chunk_refs.size()) scan.chunk_refs.resize(c + 1, 0);
      ++scan.chunk_refs[c];
    }
  }
  return scan;
}

Placement::Placement(const CorpusConfig& config, std::uint64_t total_chunks, std::vector<std::uint64_t> hot_chunks)
    : cfg_(config), holders_(static_cast<int>(config.holders)), total_(total_chunks), hot_(std::move(hot_chunks))
{
  if (holders_ <= 0) core::fail("", 0, 0, "holders", "need at least one holder");
  if (cfg_.placement == PlacementStrategy::kContiguous && total_ == 0)
    core::fail("", 0, 0, "placement", "contiguous placement needs the corpus size (prescan)");
  if (cfg_.placement == PlacementStrategy::kHotReplicated) {
    if (cfg_.replicas > holders_) core::fail("", 0, 0, "replicas", "cannot exceed holders");
    if (hot_.empty() && cfg_.hot_set_fraction > 0)
      core::fail("", 0, 0, "placement", "hot-replicated placement needs the hot chunks (prescan)");
    std::sort(hot_.begin(), hot_.end());
  }
}

int Placement::primary(std::uint64_t chunk) const
{
  const auto h = static_cast<std::uint64_t>(holders_);
  switch (cfg_.placement) {
  case PlacementStrategy::kContiguous:
    return static_cast<int>(std::min(chunk, total_ - 1) * h / total_);
  case PlacementStrategy::kRoundRobin:
    return static_cast<int>((chunk + cfg_.seed) % h);
  case PlacementStrategy::kHashed:
  case PlacementStrategy::kHotReplicated:
    return static_cast<int>(mix(chunk ^ mix(cfg_.seed)) % h);
  }
  return 0;
}

void Placement::holders_of(std::uint64_t chunk, std::vector<int>& out) const
{
  out.clear();
  const int p = primary(chunk);
  out.push_back(p);
  if (cfg_.placement == PlacementStrategy::kHotReplicated && std::binary_search(hot_.begin(), hot_.end(), chunk))
    for (int k = 1; k < cfg_.replicas; ++k)
      out.push_back((p + k) % holders_); // distinct: replicas <= holders
}

std::vector<double> check_capacity(const Placement& placement, std::uint64_t chunks, const CorpusConfig& config,
                                   core::Bytes bytes_per_token, const std::string& file)
{
  std::vector<double> bytes(static_cast<std::size_t>(placement.holders()), 0.0);
  const double chunk_B = static_cast<double>(config.chunk_tokens) * bytes_per_token.value();
  std::vector<int> where;
  for (std::uint64_t c = 0; c < chunks; ++c) {
    placement.holders_of(c, where);
    for (int h : where)
      bytes[h] += chunk_B;
  }
  core::Diagnostics diags;
  for (std::size_t h = 0; h < bytes.size(); ++h)
    if (bytes[h] > config.holder_hbm.value())
      diags.add({file, 0, 0, "corpus.holder_hbm",
                 "holder " + std::to_string(h) + " needs " + core::format_bytes(core::Bytes(bytes[h])) +
                     " of corpus KV (" + std::to_string(static_cast<std::uint64_t>(bytes[h] / chunk_B)) +
                     " chunks of " + core::format_bytes(core::Bytes(chunk_B)) + "), over its budget of " +
                     core::format_bytes(config.holder_hbm)});
  if (!diags.empty()) throw core::FitError(diags.list());
  return bytes;
}

} // namespace xattn::workloads
