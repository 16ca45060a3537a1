// The corpus of a trace and where its chunks live (workloads/README.md, "Corpus, placement, selection"): the
// distinct blocks, in order of first appearance, cut into chunks of c_t tokens, each chunk on
// one holder instance (or several, for replicated hot chunks), checked against holder HBM.
#pragma once

#include "sim/core/schema.hpp"
#include "workloads/request.hpp"

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

namespace xattn::workloads
{

enum class PlacementStrategy { kContiguous, kRoundRobin, kHashed, kHotReplicated };

struct CorpusConfig {
  std::int64_t chunk_tokens = 2048; ///< c_t: tokens per chunk, a multiple of the trace's block size
  PlacementStrategy placement = PlacementStrategy::kRoundRobin;
  std::int64_t holders = 8;       ///< H: holder instances, indexed 0..H-1
  std::int64_t replicas = 2;      ///< hot-replicated: holders per hot chunk
  double hot_set_fraction = 0.05; ///< the hot set: this share of the chunks, the most referenced
  std::uint64_t seed = 1;
  core::Bytes holder_hbm{80e9};  ///< HBM each holder may spend on corpus KV, B
  bool prescan = true;           ///< count references in a first pass (needed by contiguous and hot-replicated)
  bool position_aligned = false; ///< moved chunks keep their cached positions: nothing to re-rotate
};

const core::Schema& corpus_schema();
CorpusConfig read_corpus(core::Section& s);

/// Blocks to chunks, discovered as a stream goes by: a block's index is its rank of first
/// appearance; chunk = index / (c_t / block_tokens). Memory grows with distinct blocks only.
class Corpus
{
public:
  /// Throws core::InputError when c_t is not a positive multiple of block_tokens.
  Corpus(std::int64_t chunk_tokens, std::int64_t block_tokens);
  /// The chunk of `block`, assigning it the next index on first sight.
  std::uint64_t chunk_of(std::uint64_t block);
  /// The chunk of a block already seen.
  std::optional<std::uint64_t> find(std::uint64_t block) const;
  /// The place of a block already seen within its chunk (0 for the chunk's first block).
  std::int64_t place_in_chunk(std::uint64_t block) const;
  /// Assigns every block of a request (in prompt order).
  void add(const Request& r);
  std::uint64_t blocks() const { return next_; }
  std::uint64_t chunks() const { return (next_ + per_chunk_ - 1) / per_chunk_; }
  std::int64_t blocks_per_chunk() const { return static_cast<std::int64_t>(per_chunk_); }

private:
  std::uint64_t per_chunk_;
  std::uint64_t next_ = 0;
  std::unordered_map<std::uint64_t, std::uint64_t> index_;
};

/// What a first pass over a trace learns: the whole corpus and each chunk's reference count.
struct CorpusScan {
  Corpus corpus;
  std::vector<std::uint64_t> chunk_refs; ///< references per chunk
  /// The most referenced `fraction` of chunks (ties: lower chunk id first), sorted by id.
  std::vector<std::uint64_t> hot_chunks(double fraction) const;
};
/// Reads `source` to its end. `block_tokens` must match the trace's.
CorpusScan prescan(RequestSource& source, std::int64_t chunk_tokens, std::int64_t block_tokens);

/// Chunk -> holders, a pure function of chunk id, strategy and seed (plus the total chunk count
/// for contiguous, and the hot set for hot-replicated).
class Placement
{
public:
  /// `total_chunks`: 0 when unknown (then contiguous is an error). `hot_chunks`: sorted chunk ids
  /// (hot-replicated needs them: from prescan). Throws core::InputError on an impossible setup.
  Placement(const CorpusConfig& config, std::uint64_t total_chunks, std::vector<std::uint64_t> hot_chunks = {});
  /// The chunk's first (home) holder.
  int primary(std::uint64_t chunk) const;
  /// All holders of the chunk, primary first.
  void holders_of(std::uint64_t chunk, std::vector<int>& out) const;
  int holders() const { return holders_; }

private:
  CorpusConfig cfg_;
  int holders_;
  std::uint64_t total_;
  std::vector<std::uint64_t> hot_;
};

/// Corpus KV per holder, B: each chunk c_t × bytes_per_token on each of its holders. Throws
/// core::FitError naming every holder over `config.holder_hbm`, at `file`'s corpus.holder_hbm.
std::vector<double> check_capacity(const Placement& placement, std::uint64_t chunks, const CorpusConfig& config,
                                   core::Bytes bytes_per_token, const std::string& file = "corpus placement");

} // namespace xattn::workloads
