#include "sim/engine/future.hpp"

#include "sim/engine/homes.hpp"
#include "sim/engine/source.hpp"
#include "sim/engine/state.hpp"

#include <algorithm>

namespace xattn::sim::engine
{

FutureReads::FutureReads(const Scenario& sc, const PlacedCorpus& placed) : instances_(sc.requester_instances())
{
  // The same corpus the run starts from, filled in the same order, gives the same chunk ids.
  workloads::Corpus corpus =
      placed.corpus ? *placed.corpus : workloads::Corpus(sc.corpus.chunk_tokens, placed.block_tokens);
  Homes homes(instances_, sc.router.policy == Router::kRoundRobin);
  auto source = open_workload(sc);
  workloads::Request r;
  for (std::uint64_t seq = 0; source->next(r); ++seq) {
    const Simulation::Active a(r, sc, corpus, placed.hot_chunks);
    const int inst = homes.of(r);
    if (a.steps_total <= 0) continue;
    const double reads = static_cast<double>(a.steps_total) * a.select_probability;
    for (std::uint64_t c : a.chunks) {
      reads_[key(inst, c)].emplace_back(seq, reads);
      ++entries_;
    }
  }
  // Each list is in stream order; turn it into sums from each entry to the end.
  for (auto& [k, list] : reads_)
    for (std::size_t i = list.size() - 1; i-- > 0;)
      list[i].second += list[i + 1].second;
}

double FutureReads::after(int inst, std::uint64_t chunk, std::uint64_t arrived) const
{
  auto it = reads_.find(key(inst, chunk));
  if (it == reads_.end()) return 0;
  const auto& list = it->second;
  auto first = std::lower_bound(list.begin(), list.end(), arrived,
                                [](const std::pair<std::uint64_t, double>& e, std::uint64_t n) { return e.first < n; });
  return first == list.end() ? 0.0 : first->second;
}

} // namespace xattn::sim::engine
