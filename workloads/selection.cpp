#include "workloads/selection.hpp"

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
  chosen_.clear();
  const auto n_recent = std::min(window_, static_cast<std::size_t>(std::llround(cfg_.recent_fraction * take_)));
  const auto n_hot = std::min(hot_positions_.size(), static_cast<std::size_t>(std::llround(cfg_.hot_fraction * take_)));
  const std::size_t first_recent = context_.size() - window_;
  // Draws without replacement by rejection: take_ is a handful of blocks, the pools are larger.
  // Each pool is used only while it still has an unchosen position.
  auto draw = [&](std::size_t want, std::size_t pool, auto position) {
    std::size_t got = 0, tries = 0;
    while (got < want && tries < 64 * (want + 1)) {
      ++tries;
      got += pick(position(rng.below(pool)));
    }
    for (std::size_t i = 0; got < want && i < pool; ++i) // a nearly exhausted pool: sweep it
      got += pick(position(i));
  };
  draw(n_recent, window_, [&](std::uint64_t i) { return first_recent + i; });
  if (!hot_positions_.empty())
    draw(std::min(n_hot + chosen_.size(), take_) - chosen_.size(), hot_positions_.size(),
         [&](std::uint64_t i) { return hot_positions_[i]; });
  draw(take_ - chosen_.size(), context_.size(), [](std::uint64_t i) { return i; });
  std::sort(chosen_.begin(), chosen_.end());
  for (std::uint32_t p : chosen_) // a block read twice into the context is attended once
    if (std::find(out.begin(), out.end(), context_[p]) == out.end()) out.push_back(context_[p]);
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
