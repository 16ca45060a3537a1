#include "sim/engine/ep_nodes.hpp"

#include <algorithm>

namespace xattn::sim::engine
{

EpNodes::EpNodes(const topo::Topology& topo, const std::vector<topo::GpuId>& gpus)
{
  std::vector<int> ids; // the nodes' topology ids, in the order of `on`
  const auto n = static_cast<int>(gpus.size());
  node.assign(n, 0);
  place.assign(n, 0);
  for (int r = 0; r < n; ++r) {
    const int id = topo.node_of(gpus[r]);
    auto it = std::find(ids.begin(), ids.end(), id);
    if (it == ids.end()) {
      ids.push_back(id);
      on.emplace_back();
      it = ids.end() - 1;
    }
    node[r] = static_cast<int>(it - ids.begin());
    place[r] = static_cast<int>(on[node[r]].size());
    on[node[r]].push_back(r);
  }
}

double EpNodes::reaching(const ModelSpec& m, int ep, double tokens, int nd) const
{
  const double E = m.experts, k = m.experts_per_token;
  const double e = E / ep * static_cast<double>(on[nd].size());
  double none = 1;
  for (int i = 0; i < static_cast<int>(k); ++i)
    none *= std::max(0.0, (E - e - i) / (E - i));
  return tokens * (1 - none);
}

} // namespace xattn::sim::engine
