// The GPUs of an expert-parallel group by node, as DeepEP's normal (prefill) kernels send: a token
// crosses to another node once, to the GPU at its sender's place among that node's GPUs (its
// relay, on the sender's rail), which forwards it over NVLink to each GPU of its node that holds
// one of its experts; the results come back the same ways, summed on the relay. Internal to
// sim/engine.
#pragma once

#include "sim/model/model.hpp"
#include "topologies/topology.hpp"

#include <vector>

namespace xattn::sim::engine
{

struct EpNodes {
  std::vector<std::vector<int>> on; ///< by node, in order of its first GPU: its GPUs (the group's indices)
  std::vector<int> node, place;     ///< by GPU: its node, its place there

  /// Lays out `gpus` (the group's, in order) by node.
  EpNodes(const topo::Topology& topo, const std::vector<topo::GpuId>& gpus);
  int nodes() const { return static_cast<int>(on.size()); }
  /// The GPU at r's place among node nd's: where r's tokens for that node go.
  int relay(int r, int nd) const { return on[nd][place[r] % on[nd].size()]; }
  /// Of `tokens` tokens, those with an expert on node nd when the model's experts are spread evenly
  /// over `ep` GPUs: a token's k distinct experts of E miss the node's e with the chance
  /// C(E - e, k) / C(E, k).
  double reaching(const ModelSpec& m, int ep, double tokens, int nd) const;
};

} // namespace xattn::sim::engine
