#include "workloads/selection.hpp"
#include "sim/core/yaml.hpp"

#include <algorithm>
#include <array>
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
     .meaning = "share of selected blocks from the hot set's (corpus.hot_set_fraction)",
     .range = core::kShareRange},
    {.key = "layer_overlap",
     .kind = FieldKind::kQuantity,
     .def = "0.85",
     .meaning = "each layer selects its own top-k: the share of a layer's blocks the next one keeps (IndexCache, "
                "arXiv 2603.12201: adjacent DSA layers share 70-100%; 1: one selection for all layers)",
     .range = core::kShareRange},
    {.key = "step_overlap",
     .kind = FieldKind::kQuantity,
     .def = "0.6",
     .meaning = "the share of each layer's top-k blocks a decode step keeps from the step before (DSA's selection "
                "drifts as tokens accumulate: about 60% kept step to step, NVIDIA's GVR study, arXiv 2604.22312; "
                "0: every step draws afresh)",
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
  c.step_overlap = s.number("step_overlap");
  c.index_on_requester = s.choice("index_keys") == "requester";
  if (c.step_overlap > c.layer_overlap)
    s.error("step_overlap", "a layer keeps no more of its blocks from the step before than two layers share "
                            "(layer_overlap): the layers' selections drift together from one base selection; lower "
                            "step_overlap or raise layer_overlap");
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
  if (take_ == context.size()) return; // dense, or a context no longer than a top-k: nothing is drawn
  if (is_hot)
    for (std::size_t i = 0; i < context.size(); ++i)
      if (is_hot(context[i])) hot_positions_.push_back(static_cast<std::uint32_t>(i));
  n_recent_ = std::min(window_, static_cast<std::size_t>(std::llround(cfg_.recent_fraction * take_)));
  n_hot_ = std::min(hot_positions_.size(), static_cast<std::size_t>(std::llround(cfg_.hot_fraction * take_)));
  kind_.assign(context.size(), kSpread);
  for (std::uint32_t pos : hot_positions_)
    kind_[pos] = kHot;
  std::fill(kind_.end() - static_cast<std::ptrdiff_t>(window_), kind_.end(), kRecent);
  chosen_mark_.assign(context.size(), 0);
  dropped_mark_.assign(context.size(), 0);
}

void Selector::pick(std::uint64_t pos)
{
  if (chosen_mark_[pos] == stamp_) return;
  chosen_mark_[pos] = stamp_;
  chosen_.push_back(static_cast<std::uint32_t>(pos));
}

void Selector::select(Rng& rng, std::vector<std::uint64_t>& out)
{
  out.clear();
  if (take_ == context_.size()) {
    out.assign(context_.begin(), context_.end());
    return;
  }
  if (before_.size() != take_) before_.clear(); // the first step
  draw(rng, before_, cfg_.step_overlap, true);
  layer_ = chosen_;
  before_ = layer_;
  std::sort(layer_.begin(), layer_.end());
  for (std::uint32_t p : layer_) // a block read twice into the context is attended once
    if (std::find(out.begin(), out.end(), context_[p]) == out.end()) out.push_back(context_[p]);
}

void Selector::select_layers(Rng& rng, int layers, std::vector<std::uint64_t>& out,
                             std::vector<std::uint32_t>& layers_of)
{
  out.clear();
  layers_of.clear();
  const auto all_layers = static_cast<std::uint32_t>(std::max(1, layers));
  words_ = (all_layers + 63) / 64;
  if (take_ == context_.size() || cfg_.layer_overlap >= 1.0) { // every layer selects the same blocks
    select(rng, out);
    layers_of.assign(out.size(), all_layers);
    layers_.clear(); // no layer-by-layer record: every layer selected `out`
    masks_.assign(out.size() * words_, 0);
    for (std::size_t i = 0; i < out.size(); ++i)
      for (std::uint32_t l = 0; l < all_layers; ++l)
        masks_[i * words_ + l / 64] |= std::uint64_t{1} << (l % 64);
    return;
  }
  count_.assign(context_.size(), 0);
  if (before_.size() != take_) before_.clear();                     // the first step
  draw(rng, before_, cfg_.step_overlap / cfg_.layer_overlap, true); // read_selection: step <= layer, layer > 0 here
  before_ = chosen_;                                                // this step's base
  const double q = std::sqrt(cfg_.layer_overlap);
  layers_.clear();
  for (std::uint32_t l = 0; l < all_layers; ++l) {
    draw(rng, before_, q, false);
    for (std::uint32_t p : chosen_)
      ++count_[p];
    layers_.insert(layers_.end(), chosen_.begin(), chosen_.end());
  }
  // In context order (a count per position, not a sort of every layer's picks); each position's
  // union entry, for the layers' masks.
  entry_.assign(context_.size(), 0);
  for (std::size_t pos = 0; pos < count_.size(); ++pos) {
    if (count_[pos] == 0) continue;
    const std::uint64_t b = context_[pos];
    auto it = std::find(out.begin(), out.end(), b); // a block read twice into the context is attended once
    if (it == out.end()) {
      entry_[pos] = static_cast<std::uint32_t>(out.size());
      out.push_back(b);
      layers_of.push_back(count_[pos]);
    } else {
      entry_[pos] = static_cast<std::uint32_t>(it - out.begin());
      auto& n = layers_of[entry_[pos]];
      n = std::min(all_layers, n + count_[pos]);
    }
  }
  masks_.assign(out.size() * words_, 0);
  for (std::uint32_t l = 0; l < all_layers; ++l)
    for (std::size_t k = 0; k < take_; ++k)
      masks_[entry_[layers_[l * take_ + k]] * words_ + l / 64] |= std::uint64_t{1} << (l % 64);
}

double Selector::expected_union(int layers) const
{
  if (take_ == context_.size() || cfg_.layer_overlap >= 1.0) return static_cast<double>(take_);
  const double fresh = 1.0 - std::sqrt(cfg_.layer_overlap), k = static_cast<double>(take_);
  const double n = std::max(1, layers);
  return std::min(k * (1.0 - std::pow(fresh, n)) + n * k * fresh, static_cast<double>(context_.size()));
}

void Selector::draw(Rng& rng, std::span<const std::uint32_t> from, double p, bool exclusive)
{
  if (++stamp_ == 0) { // the marks' stamps wrapped: every mark is stale
    std::fill(chosen_mark_.begin(), chosen_mark_.end(), 0);
    std::fill(dropped_mark_.begin(), dropped_mark_.end(), 0);
    stamp_ = 1;
  }
  chosen_.clear();
  kept_.clear();
  for (std::uint32_t pos : from)
    if (rng.uniform() < p)
      kept_.push_back(pos);
    else if (exclusive)
      dropped_mark_[pos] = stamp_;
  const std::size_t first_recent = context_.size() - window_;
  // The kept blocks by kind: recent first, then hot, then spread (kept_'s order within each kind).
  by_kind_.clear();
  std::array<std::size_t, 3> kind_end{};
  for (Kind k : {kRecent, kHot, kSpread}) {
    for (std::uint32_t pos : kept_)
      if (kind_[pos] == k) by_kind_.push_back(pos);
    kind_end[k] = by_kind_.size();
  }
  const auto hot_from = by_kind_.begin() + static_cast<std::ptrdiff_t>(kind_end[kRecent]);
  const auto spread_from = by_kind_.begin() + static_cast<std::ptrdiff_t>(kind_end[kHot]);
  auto dropped = [&](std::uint64_t pos) { return dropped_mark_[pos] == stamp_; };
  // The kept blocks in [first, last), until chosen_ holds `upto`.
  auto keep = [&](auto first, auto last, std::size_t upto) {
    for (auto it = first; it != last && chosen_.size() < upto; ++it)
      pick(*it);
  };
  // Draws without replacement by rejection: take_ is a handful of blocks, the pools are larger.
  // Each pool is used only while it still has a position neither chosen nor dropped; a nearly
  // exhausted pool is swept, dropped blocks last.
  auto from_pool = [&](std::size_t upto, std::size_t pool, auto position) {
    const std::size_t want = upto - std::min(upto, chosen_.size());
    for (std::size_t tries = 0; chosen_.size() < upto && tries < 64 * (want + 1); ++tries) {
      const std::uint64_t pos = position(rng.below(pool));
      if (!dropped(pos)) pick(pos);
    }
    for (int pass = 0; pass < 2; ++pass)
      for (std::size_t i = 0; chosen_.size() < upto && i < pool; ++i)
        if (pass == 1 || !dropped(position(i))) pick(position(i));
  };
  keep(by_kind_.begin(), hot_from, n_recent_);
  from_pool(n_recent_, window_, [&](std::uint64_t i) { return first_recent + i; });
  if (!hot_positions_.empty()) {
    const std::size_t upto = std::min(n_hot_ + chosen_.size(), take_);
    keep(hot_from, spread_from, upto);
    from_pool(upto, hot_positions_.size(), [&](std::uint64_t i) { return hot_positions_[i]; });
  }
  keep(by_kind_.begin(), by_kind_.end(),
       take_); // spread: any kept block not taken yet (a spread draw may fall anywhere)
  from_pool(take_, context_.size(), [](std::uint64_t i) { return i; });
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
