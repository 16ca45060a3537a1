// Copies of hot chunks made while a run goes (engine.replication: dynamic). Each read of a chunk
// counts: a routed call to it or a fetch of it that a request's step plans, which a holder serves.
// A chunk read `replicate_after` times since its last copy (or since the run began) gets one more,
// up to `max_copies` beyond its placement's: the engine moves it from the holder that serves the
// read to the holder nearest the reader that has none (replicate.cpp), priced as a fetch to that
// holder, and calls go to whichever copy the replica choice picks from then on. Each holder keeps
// its copies within a budget of HBM, the least recently read out first. No live system needs the
// future for this: it sees reads as they come. Internal to sim/engine.
#pragma once

#include "sim/engine/cache.hpp"

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace xattn::sim::engine
{

class Replicas
{
public:
  /// `holders` holder instances, each keeping `budget_B` of copies (per GPU).
  Replicas(int holders, double budget_B, int after, int max_copies);
  /// The chunk's copies made so far and not evicted (holder instances), in the order they landed.
  const std::vector<int>& copies(std::uint64_t chunk) const;
  /// Holder instance `h` serves a read of `chunk` (a copy there is read again: most recent). True
  /// when the chunk is due a new copy, none being on its way: the caller sends it (then landed()).
  bool read(std::uint64_t chunk, int h);
  /// The copy of `chunk` landed on holder instance `h`, `bytes` of each of its GPUs' HBM.
  void landed(std::uint64_t chunk, int h, double bytes);
  /// The copy read() asked for found no holder without one: none is on its way.
  void dropped(std::uint64_t chunk) { chunks_[chunk].moving = false; }
  std::uint64_t made() const { return made_; }
  std::uint64_t evicted() const { return evicted_; }

private:
  struct State {
    std::uint32_t reads = 0; ///< since its last copy
    bool moving = false;     ///< a copy is on its way
    std::vector<int> copies;
  };
  std::unordered_map<std::uint64_t, State> chunks_;
  std::vector<LruCache> held_; ///< by holder instance: its copies
  std::uint32_t after_;
  std::size_t max_copies_;
  std::uint64_t made_ = 0, evicted_ = 0;
};

} // namespace xattn::sim::engine
