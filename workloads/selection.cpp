#include "workloads/selection.hpp"
#include "sim/core/yaml.hpp"

#include <algorithm>
#include <cmath>

namespace xattn::workloads
{
namespace
{
using core::Check;
using core::FieldKind;

const core::Schema kSelection{
    {.key = "mode",
     .kind = FieldKind::kChoice,
     .def = "topk",
     .meaning = "dense: every block; topk: DSA-style top-k",
     .choices = "topk|dense"},
    {.key = "top_k_tokens",
     .kind = FieldKind::kInteger,
     .def = "2048",
     .meaning = "k: tokens kept per query",
     .check = Check::kPositive,
     .range = core::kTokensRange},
    {.key = "recent_fraction",
     .kind = FieldKind::kQuantity,
     .def = "0.25",
     .meaning = "share of selected blocks from the recent window",
     .range = core::kShareRange},
    {.key = "recent_window_tokens",
     .kind = FieldKind::kInteger,
     .def = "4096",
     .meaning = "the recent window at the end of the context, tokens",
     .check = Check::kPositive,
     .range = core::kTokensRange},
    {.key = "hot_fraction",
     .kind = FieldKind::kQuantity,
     .def = "0.25",
     .meaning = "share of selected blocks from hot blocks",
     .range = core::kShareRange},
    {.key = "layer_overlap",
     .kind = FieldKind::kQuantity,
     .def = "0.85",
     .meaning = "each layer selects its own top-k: the share of a layer's blocks the next one keeps (IndexCache, "
                "arXiv 2603.12201: adjacent DSA layers share 70-100%; 1: one selection for all layers)",
     .range = core::kShareRange},
    {.key = "index_keys",
     .kind = FieldKind::kChoice,
     .def = "holders",
     .meaning = "where the indexer's keys live (topk): holders, with the KV (each step asks every holder of the "
                "context for its top-k candidates); requester, a copy of the context's keys on each requester "
                "(scanned there, no exchange; a fifth of the KV's HBM)",
     .choices = "holders|requester"},
};
} // namespace

const core::Schema& selection_schema()
{
  return kSelection;
}

SelectionConfig read_selection(core::Section& s)
{
  SelectionConfig c;
  c.sparse = s.choice("mode") == "topk";
  c.top_k_tokens = s.integer("top_k_tokens");
  c.recent_fraction = s.number("recent_fraction");
  c.recent_window_tokens = s.integer("recent_window_tokens");
  c.hot_fraction = s.number("hot_fraction");
  c.layer_overlap = s.number("layer_overlap");
  c.index_on_requester = s.choice("index_keys") == "requester";
  if (c.recent_fraction + c.hot_fraction > 1.0 + 1e-12)
    s.error("hot_fraction", "recent_fraction + hot_fraction must not exceed 1");
  return c;
}

Selector::Selector(const SelectionConfig& config, std::span<const std::uint64_t> context, std::int64_t block_tokens,
                   const std::function<bool(std::uint64_t)>& is_hot)
    : cfg_(config), context_(context)
{
  const std::int64_t bt = std::max<std::int64_t>(block_tokens, 1);
  take_ = cfg_.sparse ? static_cast<std::size_t>((cfg_.top_k_tokens + bt - 1) / bt) : context.size();
  take_ = std::min(take_, context.size());
  window_ = std::min(context.size(), static_cast<std::size_t>((cfg_.recent_window_tokens + bt - 1) / bt));
  if (is_hot && take_ < context.size())
    for (std::size_t i = 0; i < context.size(); ++i)
      if (is_hot(context[i])) hot_positions_.push_back(static_cast<std::uint32_t>(i));
}

bool Selector::pick(std::uint64_t pos)
{
  if (std::find(chosen_.begin(), chosen_.end(), pos) != chosen_.end()) return false;
  chosen_.push_back(static_cast<std::uint32_t>(pos));
  return true;
}

void Selector::select(Rng& rng, std::vector<std::uint64_t>& out)
{
  out.clear();
  if (take_ == context_.size()) {
    out.assign(context_.begin(), context_.end());
    return;
  }
  draw(rng);
  std::sort(chosen_.begin(), chosen_.end());
  for (std::uint32_t p : chosen_) // a block read twice into the context is attended once
    if (std::find(out.begin(), out.end(), context_[p]) == out.end()) out.push_back(context_[p]);
}

void Selector::select_layers(Rng& rng, int layers, std::vector<std::uint64_t>& out,
                             std::vector<std::uint32_t>& layers_of)
{
  out.clear();
  layers_of.clear();
  const auto all_layers = static_cast<std::uint32_t>(std::max(1, layers));
  if (take_ == context_.size() || cfg_.layer_overlap >= 1.0) { // every layer selects the same blocks
    select(rng, out);
    layers_of.assign(out.size(), all_layers);
    return;
  }
  count_.assign(context_.size(), 0);
  draw(rng);
  layer_ = chosen_;
  for (std::uint32_t p : layer_)
    ++count_[p];
  for (std::uint32_t l = 1; l < all_layers; ++l) {
    // Keep each block with probability layer_overlap, then fill up from a fresh draw.
    std::size_t kept = 0;
    for (std::uint32_t p : layer_)
      if (rng.uniform() < cfg_.layer_overlap) layer_[kept++] = p;
    layer_.resize(kept);
    draw(rng);
    for (std::uint32_t p : chosen_) {
      if (layer_.size() >= take_) break;
      if (std::find(layer_.begin(), layer_.end(), p) == layer_.end()) layer_.push_back(p);
    }
    for (std::uint32_t p : layer_)
      ++count_[p];
  }
  // In context order (a count per position, not a sort of every layer's picks).
  for (std::size_t pos = 0; pos < count_.size(); ++pos) {
    if (count_[pos] == 0) continue;
    const std::uint64_t b = context_[pos];
    auto it = std::find(out.begin(), out.end(), b); // a block read twice into the context is attended once
    if (it == out.end()) {
      out.push_back(b);
      layers_of.push_back(count_[pos]);
    } else {
      auto& n = layers_of[static_cast<std::size_t>(it - out.begin())];
      n = std::min(all_layers, n + count_[pos]);
    }
  }
}

double Selector::expected_union(int layers) const
{
  if (take_ == context_.size() || cfg_.layer_overlap >= 1.0) return static_cast<double>(take_);
  const double u = static_cast<double>(take_) * (1.0 + (std::max(1, layers) - 1) * (1.0 - cfg_.layer_overlap));
  return std::min(u, static_cast<double>(context_.size()));
}

void Selector::draw(Rng& rng)
{
  chosen_.clear();
  const auto n_recent = std::min(window_, static_cast<std::size_t>(std::llround(cfg_.recent_fraction * take_)));
  const auto n_hot = std::min(hot_positions_.size(), static_cast<std::size_t>(std::llround(cfg_.hot_fraction * take_)));
  const std::size_t first_recent = context_.size() - window_;
  // Draws without replacement by rejection: take_ is a handful of blocks, the pools are larger.
  // Each pool is used only while it still has an unchosen position.
  auto from_pool = [&](std::size_t want, std::size_t pool, auto position) {
    std::size_t got = 0, tries = 0;
    while (got < want && tries < 64 * (want + 1)) {
      ++tries;
      got += pick(position(rng.below(pool)));
    }
    for (std::size_t i = 0; got < want && i < pool; ++i) // a nearly exhausted pool: sweep it
      got += pick(position(i));
  };
  from_pool(n_recent, window_, [&](std::uint64_t i) { return first_recent + i; });
  if (!hot_positions_.empty())
    from_pool(std::min(n_hot + chosen_.size(), take_) - chosen_.size(), hot_positions_.size(),
              [&](std::uint64_t i) { return hot_positions_[i]; });
  from_pool(take_ - chosen_.size(), context_.size(), [](std::uint64_t i) { return i; });
}

std::size_t holders_touched(std::span<const std::uint64_t> blocks, const Corpus& corpus, const Placement& placement)
{
  std::vector<int> seen;
  for (std::uint64_t b : blocks)
    if (auto c = corpus.find(b)) {
      const int h = placement.primary(*c);
      if (std::find(seen.begin(), seen.end(), h) == seen.end()) seen.push_back(h);
    }
  return seen.size();
}

} // namespace xattn::workloads
