// What an offline policy knows of the future beyond the requests being decoded: for each requester
// and chunk, the reads that requests yet to arrive will make of it, from one pass over the whole
// workload before the run. A read is a decode step of a request whose context holds the chunk,
// weighted by its chance of selecting a block of it (1 when dense), as for the live requests.
#pragma once

#include "sim/engine/simulation.hpp"

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

namespace xattn::sim::engine
{

class FutureReads
{
public:
  /// Reads the workload once more, in the order the run will see it.
  FutureReads(const Scenario& sc, const PlacedCorpus& plan);
  /// Reads of `chunk` on requester `inst` by the requests after the first `arrived` of the stream.
  double after(int inst, std::uint64_t chunk, std::uint64_t arrived) const;
  /// Entries kept (one per request and distinct chunk of its context), for the memory figures.
  std::uint64_t entries() const { return entries_; }

private:
  std::uint64_t key(int inst, std::uint64_t chunk) const
  {
    return chunk * static_cast<std::uint64_t>(instances_) + static_cast<std::uint64_t>(inst);
  }
  int instances_;
  std::uint64_t entries_ = 0;
  /// (requester, chunk) -> (the request's place in the stream, reads by it and every later one).
  std::unordered_map<std::uint64_t, std::vector<std::pair<std::uint64_t, double>>> reads_;
};

} // namespace xattn::sim::engine
