// Routed paths from node, leaf and spine arithmetic, and a breadth-first search to cross-check them.
#include "topologies/graph.hpp"
#include "topologies/topology.hpp"

#include <boost/graph/breadth_first_search.hpp>

#include <algorithm>
#include <limits>

namespace xattn::topo
{

core::Seconds Path::time(core::Bytes size) const
{
  if (hops.empty()) return core::Seconds(0.0);
  return latency + size / bottleneck;
}

LinkId Topology::nvlink_link(GpuId g) const
{
  return node_link(node_of(g), local_index(g));
}

LinkId Topology::gpu_slot_link(GpuId g) const
{
  return node_link(node_of(g), (has_nvlink() ? gpus_per_node_ : 0) + local_index(g));
}

LinkId Topology::nic_slot_link(int node, int nic) const
{
  return node_link(node, (has_nvlink() ? gpus_per_node_ : 0) + gpus_per_node_ + nic);
}

LinkId Topology::host_link(int node, int sw) const
{
  return node_link(node,
                   (has_nvlink() ? gpus_per_node_ : 0) + gpus_per_node_ + spec_.nics.value_or(NicSpec{}).count + sw);
}

LinkId Topology::access_link(int node, int nic) const
{
  return static_cast<LinkId>(node_count() * links_per_node_ + node * spec_.nics->count + nic);
}

LinkId Topology::trunk_link(int leaf, int spine) const
{
  return static_cast<LinkId>(node_count() * (links_per_node_ + spec_.nics->count) + leaf * trunks_per_leaf() + spine);
}

// Between two PCIe switches of a node: nothing when they are the same, else up to the host and down.
void Topology::add_pcie_between(int node, int sw_from, int sw_to, std::vector<Hop>& out) const
{
  if (sw_from == sw_to) return;
  out.push_back(hop(host_link(node, sw_from), Direction::kUp));
  out.push_back(hop(host_link(node, sw_to), Direction::kDown));
}

int Topology::spine_of(GpuId from, GpuId to, int from_leaf, int to_leaf) const
{
  const auto spines = static_cast<std::uint64_t>(spine_count());
  switch (routing()) {
  case Routing::kPinned:
    return static_cast<int>(static_cast<std::uint64_t>(from_leaf + to_leaf) % spines);
  case Routing::kEcmp: {
    // SplitMix64's finaliser over the seed and the ordered pair: every bit of each mixes into the
    // spine's index, and another seed draws another set of collisions.
    std::uint64_t z = spec_.fabric->ecmp_seed * 0x9E3779B97F4A7C15ULL + ((std::uint64_t{from} << 32) | to);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return static_cast<int>((z ^ (z >> 31)) % spines);
  }
  case Routing::kAdaptive:
    return 0;
  }
  return 0;
}

core::FabricClass Topology::fabric_class(GpuId a, GpuId b) const
{
  if (a == b) return core::FabricClass::kSameGpu;
  if (node_of(a) == node_of(b)) return has_nvlink() ? core::FabricClass::kNvlink : core::FabricClass::kPcie;
  if (same_domain(a, b)) return core::FabricClass::kNvlink;
  // The network part starts at the relay's NIC under PXN, at a's own otherwise.
  const std::optional<GpuId> relay = pxn_relay(a, b);
  return leaf_of(relay.value_or(a)) == leaf_of(b) ? core::FabricClass::kIbSameLeaf : core::FabricClass::kIbSpine;
}

std::optional<GpuId> Topology::pxn_relay(GpuId a, GpuId b) const
{
  if (rails() == 1 || spec_.fabric->cross_rail != CrossRail::kPxn || same_domain(a, b) || node_of(a) == node_of(b))
    return std::nullopt;
  const int rail = rail_of_nic(nic_of(b));
  if (rail_of_nic(nic_of(a)) == rail) return std::nullopt;
  // The schema requires a GPU on every rail under PXN.
  return static_cast<GpuId>(node_of(a)) * gpus_per_node_ + static_cast<GpuId>(rail_owner_[rail]);
}

std::vector<Hop> Topology::gpu_to_leaf(GpuId g) const
{
  std::vector<Hop> out;
  if (!spec_.fabric) return out;
  const int node = node_of(g), nic = nic_of(g);
  out.push_back(hop(gpu_slot_link(g), Direction::kUp));
  add_pcie_between(node, pcie_switch_of_gpu(local_index(g)), nic_switch_[nic], out);
  out.push_back(hop(nic_slot_link(node, nic), Direction::kDown));
  out.push_back(hop(access_link(node, nic), Direction::kUp));
  return out;
}

std::vector<Hop> Topology::gpu_to_host(GpuId g) const
{
  return {hop(gpu_slot_link(g), Direction::kUp),
          hop(host_link(node_of(g), pcie_switch_of_gpu(local_index(g))), Direction::kUp)};
}

std::optional<GpuId> Topology::rail_gpu(int node, int nic) const
{
  if (nic < 0 || nic >= static_cast<int>(nic_owner_.size()) || nic_owner_[nic] < 0) return std::nullopt;
  return static_cast<GpuId>(node) * gpus_per_node_ + static_cast<GpuId>(nic_owner_[nic]);
}

std::optional<GpuId> Topology::rail_relay(GpuId striping, GpuId other) const
{
  if (!can_stripe() || node_of(striping) == node_of(other)) return std::nullopt;
  // Its own NIC already reaches other's rail: the same NIC, or on a rail-optimised fabric any NIC
  // of the same rail leaf.
  const int mine = nic_of(striping), theirs = nic_of(other);
  if (mine == theirs || (rails() > 1 && rail_of_nic(mine) == rail_of_nic(theirs))) return std::nullopt;
  return rail_gpu(node_of(striping), nic_of(other));
}

Path Topology::path_via(GpuId a, GpuId via, GpuId b) const
{
  Path p = path(a, via);
  const Path second = path(via, b);
  p.hops.insert(p.hops.end(), second.hops.begin(), second.hops.end());
  p.fabric = fabric_class(a, b);
  p.latency += second.latency;
  p.bottleneck = std::min(p.bottleneck, second.bottleneck);
  return p;
}

void Topology::add_ib_hops(GpuId from, GpuId b, std::vector<Hop>& out) const
{
  const std::vector<Hop> up = gpu_to_leaf(from);
  out.insert(out.end(), up.begin(), up.end());
  if (const int la = leaf_of(from), lb = leaf_of(b); la != lb) {
    const int spine = spine_of(from, b, la, lb);
    out.push_back(hop(trunk_link(la, spine), Direction::kUp));
    out.push_back(hop(trunk_link(lb, spine), Direction::kDown));
  }
  const std::vector<Hop> down = gpu_to_leaf(b);
  for (auto it = down.rbegin(); it != down.rend(); ++it)
    out.push_back(hop(it->link, it->dir == Direction::kUp ? Direction::kDown : Direction::kUp));
}

Path Topology::path(GpuId a, GpuId b) const
{
  Path p;
  p.fabric = fabric_class(a, b);
  switch (p.fabric) {
  case core::FabricClass::kSameGpu:
    p.bottleneck = core::BytesPerSec(std::numeric_limits<double>::infinity());
    return p;
  case core::FabricClass::kNvlink: // within a node or across the trays of one NVLink domain
    p.hops = {hop(nvlink_link(a), Direction::kUp), hop(nvlink_link(b), Direction::kDown)};
    break;
  case core::FabricClass::kPcie:
    p.hops.push_back(hop(gpu_slot_link(a), Direction::kUp));
    add_pcie_between(node_of(a), pcie_switch_of_gpu(local_index(a)), pcie_switch_of_gpu(local_index(b)), p.hops);
    p.hops.push_back(hop(gpu_slot_link(b), Direction::kDown));
    break;
  case core::FabricClass::kIbSameLeaf:
  case core::FabricClass::kIbSpine:
    if (const std::optional<GpuId> relay = pxn_relay(a, b)) {
      p.hops = {hop(nvlink_link(a), Direction::kUp), hop(nvlink_link(*relay), Direction::kDown)};
      add_ib_hops(*relay, b, p.hops);
    } else {
      add_ib_hops(a, b, p.hops);
    }
    break;
  }
  p.bottleneck = core::BytesPerSec(std::numeric_limits<double>::infinity());
  for (const Hop& h : p.hops) {
    p.latency += h.latency;
    p.bottleneck = std::min(p.bottleneck, h.bandwidth);
  }
  return p;
}

std::vector<LinkId> Topology::shortest_path(VertexId from, VertexId to) const
{
  // Predecessor edges recorded by a BFS from `from`, then walked back from `to`.
  constexpr LinkId kNone = std::numeric_limits<LinkId>::max();
  std::vector<LinkId> via(vertices_.size(), kNone);
  std::vector<bool> seen(vertices_.size(), false);
  struct Recorder : boost::default_bfs_visitor {
    std::vector<LinkId>* via;
    void tree_edge(Graph::List::edge_descriptor e, const Graph::List& g) const
    {
      (*via)[boost::target(e, g)] = boost::get(boost::edge_index, g, e);
    }
  } rec;
  rec.via = &via;
  boost::breadth_first_search(graph_->list, from, boost::visitor(rec));
  std::vector<LinkId> out;
  for (VertexId v = to; v != from;) {
    LinkId id = via[v];
    if (id == kNone) return {};
    out.push_back(id);
    v = links_[id].a == v ? links_[id].b : links_[id].a;
  }
  std::reverse(out.begin(), out.end());
  return out;
}

} // namespace xattn::topo
