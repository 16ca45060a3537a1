// Which requester instance a request goes to (scenario `router`; sim/engine/README.md, "Routers").
// session and round-robin need nothing of the run (homes.hpp, which the offline look-ahead shares);
// least-loaded and prefix read the instances' loads, prefix also where the prompt's blocks live
// (the pools with prefill, else the fetch caches).
#include "sim/engine/state.hpp"

#include <algorithm>

namespace xattn::sim::engine
{

int Simulation::place_request(const workloads::Request& r)
{
  const RouterSpec& router = sc_.router;
  if (router.policy == Router::kSession || router.policy == Router::kRoundRobin) return homes_.of(r);
  // The load is the requests an instance serves (prefilling, decoding or waiting, or on their way
  // from the prefill pool), as SGLang's router counts its workers' running requests; ties go to
  // the lowest index.
  int idlest = 0, busiest = 0;
  const auto load = [this](int i) {
    return static_cast<double>(instances_[i]->active.size() + static_cast<std::size_t>(instances_[i]->incoming));
  };
  for (int i = 1; i < static_cast<int>(instances_.size()); ++i) {
    if (load(i) < load(idlest)) idlest = i;
    if (load(i) > load(busiest)) busiest = i;
  }
  if (router.policy == Router::kLeastLoaded) return idlest;
  if (load(busiest) - load(idlest) > router.balance_abs_threshold &&
      load(busiest) > load(idlest) * router.balance_rel_threshold)
    return idlest;
  // What each instance holds of the prompt, in blocks: the one that holds the most serves the most
  // of it locally. It is chosen when that is over cache_threshold of the prompt (ties to the least
  // loaded), else the least loaded.
  thread_local std::vector<std::size_t> held;
  held.assign(instances_.size(), 0);
  const auto best_holding = [&]() {
    int best = idlest;
    for (int i = 0; i < static_cast<int>(instances_.size()); ++i)
      if (held[i] > held[best] || (held[i] == held[best] && load(i) < load(best))) best = i;
    return static_cast<double>(held[best]) > router.cache_threshold * static_cast<double>(r.blocks.size()) ? best
                                                                                                           : idlest;
  };
  if (!kv_pool_) {
    // Without prefill every block lives on its corpus holder: an instance has what its fetch cache
    // kept of the prompt (a fetched chunk, or under top-k selection a fetched block), anywhere in it.
    for (std::uint64_t b : r.blocks) {
      const std::uint64_t key = sc_.selection.sparse ? b : corpus_->chunk_of(b); // the cache's entries
      for (std::size_t i = 0; i < instances_.size(); ++i)
        held[i] += instances_[i]->cache->contains(key) ? 1 : 0;
    }
    return best_holding();
  }
  // With prefill, the prompt's cached prefix: its blocks from the first while some pool holds each
  // (with cross-instance attention a block held anywhere is not prefilled again), or some host
  // tier (its instance reads it back).
  for (std::uint64_t b : r.blocks) {
    if (prefilled_blocks_.count(b) == 0) break;
    bool found = false;
    const auto count = [&](int i) {
      if (i < static_cast<int>(held.size())) ++held[static_cast<std::size_t>(i)]; // not a prefill instance's
      found = true;
    };
    kv_pool_->for_each_home(corpus_->chunk_of(b), count);
    kv_pool_->for_each_host_home(corpus_->chunk_of(b), count);
    if (!found) break;
  }
  return best_holding();
}

} // namespace xattn::sim::engine
