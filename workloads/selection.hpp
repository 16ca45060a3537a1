// Which blocks a decode step attends (workloads/README.md, "Corpus, placement, selection"): all of the context (dense),
// or a DSA-style top-k of k tokens, drawn per block with locality: a share from the most recent
// tokens, a share from hot blocks, the rest spread over the context.
#pragma once

#include "sim/core/schema.hpp"
#include "workloads/corpus.hpp"
#include "workloads/rng.hpp"

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace xattn::workloads
{

struct SelectionConfig {
  bool sparse = true;                       ///< false: dense, every context block
  std::int64_t top_k_tokens = 2048;         ///< k: tokens the indexer keeps per query
  double recent_fraction = 0.25;            ///< share of selected blocks from the recent window
  std::int64_t recent_window_tokens = 4096; ///< the recent window, tokens at the end of the context
  double hot_fraction = 0.25;               ///< share of selected blocks from hot blocks
  /// Each layer selects its own top-k: the share of a layer's blocks the next layer keeps.
  double layer_overlap = 0.85;
  /// Each step keeps a share of the blocks each layer selected the step before (DSA's top-k
  /// drifts slowly as the decoded tokens accumulate): the share kept.
  double step_overlap = 0.6;
  /// The indexer's keys are kept on the requester (a copy of its context's), not only with the KV
  /// on the holders: the selection is scanned there, with no exchange.
  bool index_on_requester = false;
};

const core::Schema& selection_schema();
SelectionConfig read_selection(core::Section& s);

/// Selection for one request: prepare once (O(context)), then draw per step in O(selected).
class Selector
{
public:
  /// `is_hot` tells hot blocks (may be empty: no block is hot).
  Selector(const SelectionConfig& config, std::span<const std::uint64_t> context, std::int64_t block_tokens,
           const std::function<bool(std::uint64_t)>& is_hot);
  /// Blocks selected for one step, in context order, no repeats: ceil(k / block_tokens) of them
  /// (all of the context when dense or when it is that short). After the first step each block
  /// of the step before is kept with probability step_overlap, the others not selected again,
  /// the rest drawn afresh.
  void select(Rng& rng, std::vector<std::uint64_t>& out);
  /// Blocks per step.
  std::size_t per_step() const { return take_; }
  /// One step of a model of `layers` layers, each selecting its own top-k. The request's step
  /// has a base selection, which keeps each of its blocks of the step before with probability
  /// step_overlap / layer_overlap (a block it does not keep is not selected again this step) and
  /// draws the rest afresh; each layer keeps each base block with probability sqrt(layer_overlap)
  /// and draws the rest afresh (the same locality model throughout). Two layers then share
  /// layer_overlap of their blocks and a layer keeps step_overlap of its own from the step
  /// before, both in expectation over a long context (fresh draws rarely collide). `out`: the
  /// blocks any layer selected, in context order; `layers_of[i]`: how many layers selected `out[i]`.
  void select_layers(Rng& rng, int layers, std::vector<std::uint64_t>& out, std::vector<std::uint32_t>& layers_of);
  /// The last select_layers() step, layer by layer: per_step() context positions a layer, in
  /// layer order (empty before the first, and when every layer selects the same blocks).
  std::span<const std::uint32_t> last_layers() const { return layers_; }
  /// Which layers selected out[i] in the last select_layers() step: a bit per layer, layer l in
  /// word l / 64, layer_words() words an entry.
  std::span<const std::uint64_t> layers_selecting(std::size_t i) const
  {
    return std::span<const std::uint64_t>(masks_).subspan(i * words_, words_);
  }
  std::size_t layer_words() const { return words_; }
  /// Expected blocks in select_layers' union: the base's blocks some layer kept,
  /// k (1 - (1 - q)^layers), and each layer's fresh ones, layers x k x (1 - q), with
  /// q = sqrt(layer_overlap), at most the context (fresh draws taken as new: an upper estimate on
  /// short contexts).
  double expected_union(int layers) const;

private:
  void pick(std::uint64_t pos); ///< chosen_ gains `pos` unless this draw chose it already
  /// One top-k draw into chosen_ (positions, unsorted), keeping each block of `from` with
  /// probability `p` (with `exclusive`, the others are not selected again). For each kind of block
  /// (recent, hot, spread) in turn, its share comes first from the kept blocks of that kind, then
  /// afresh, so that keeping blocks leaves the kinds' proportions as they are.
  void draw(Rng& rng, std::span<const std::uint32_t> from = {}, double p = 0, bool exclusive = false);
  SelectionConfig cfg_;
  std::span<const std::uint64_t> context_;
  std::vector<std::uint32_t> hot_positions_;
  std::size_t take_ = 0, window_ = 0;
  std::size_t n_recent_ = 0, n_hot_ = 0; ///< a draw's blocks from the recent window and from the hot blocks
  // By context position (sparse only): its kind (kRecent, kHot, kSpread, the first that applies),
  // and the draw that chose it, or dropped it from the step before (== stamp_: this one). A draw
  // asks for every candidate whether it was chosen or dropped: a mark, not a search.
  enum Kind : std::uint8_t { kRecent, kHot, kSpread };
  std::vector<Kind> kind_;
  std::vector<std::uint32_t> chosen_mark_, dropped_mark_;
  std::uint32_t stamp_ = 0;
  std::vector<std::uint32_t> chosen_;
  std::vector<std::uint32_t> kept_, by_kind_; // draw's scratch: the step before's blocks kept, and by kind
  // select_layers' scratch: one layer's positions; by context position, the layers that chose it.
  std::vector<std::uint32_t> layer_, count_;
  // The step before's base selection (select(): its selection), take_ positions (empty before the
  // first step); the last step's layers, take_ positions apiece.
  std::vector<std::uint32_t> before_, layers_;
  // By union entry of the last step, the layers that selected it (layers_selecting).
  std::vector<std::uint64_t> masks_;
  std::vector<std::uint32_t> entry_; // select_layers' scratch: by position, its union entry
  std::size_t words_ = 1;
};

/// Distinct holders (primaries) among the chunks of `blocks`: the fan-out of one step, the
/// statistic fetch's gather penalty grows with. Blocks not in the corpus are skipped.
std::size_t holders_touched(std::span<const std::uint64_t> blocks, const Corpus& corpus, const Placement& placement);

} // namespace xattn::workloads
