// Which requester instance a request goes to (scenario `router`; sim/engine/README.md, "Routers").
// session and round-robin need nothing of the run (homes.hpp, which the offline look-ahead shares);
// least-loaded and prefix read the instances' loads, prefix also where the prompt's blocks live.
#include "sim/engine/state.hpp"

namespace xattn::sim::engine
{

int Simulation::place_request(const workloads::Request& r)
{
  const RouterSpec& router = sc_.router;
  if (router.policy == Router::kSession || router.policy == Router::kRoundRobin) return homes_.of(r);
  // The load is the requests an instance serves (prefilling, decoding or waiting), as SGLang's
  // router counts its workers' running requests; ties go to the lowest index.
  int idlest = 0, busiest = 0;
  const auto load = [this](int i) { return static_cast<double>(instances_[i]->active.size()); };
  for (int i = 1; i < static_cast<int>(instances_.size()); ++i) {
    if (load(i) < load(idlest)) idlest = i;
    if (load(i) > load(busiest)) busiest = i;
  }
  if (router.policy == Router::kLeastLoaded) return idlest;
  if (load(busiest) - load(idlest) > router.balance_abs_threshold &&
      load(busiest) > load(idlest) * router.balance_rel_threshold)
    return idlest;
  // The longest cached prefix: a chunk lives in one pool, so only the pool holding the prompt's
  // first block holds a prefix of it, as long as it holds the blocks after it.
  int holder = -1;
  std::size_t run = 0;
  for (std::uint64_t b : r.blocks) {
    if (prefilled_blocks_.count(b) == 0) break;
    const int home = kv_pool_->home(corpus_->chunk_of(b));
    if (home < 0 || (holder >= 0 && home != holder)) break;
    holder = home;
    ++run;
  }
  if (holder >= 0 && static_cast<double>(run) > router.cache_threshold * static_cast<double>(r.blocks.size()))
    return holder;
  return idlest;
}

} // namespace xattn::sim::engine
