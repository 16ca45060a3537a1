// The cluster as a graph: GPUs, NVSwitches, PCIe switches, host CPUs, NICs, leaf and spine switches
// (vertices) joined by full-duplex links (edges), held in a Boost.Graph adjacency list, plus the
// routed path between any two GPUs.
//
// Indexing is structural, so nothing is ever computed for all 67 M GPU pairs of an 8,192-GPU
// cluster: GPU i is local GPU i % gpus_per_node of node i / gpus_per_node; GPU, vertex and link
// ids follow fixed per-node blocks; a path is built from node, leaf and spine arithmetic in O(hops).
//
// Two shapes beyond the classic leaf/spine of 8-GPU nodes (docs/layouts.md):
// - NVLink domains of several nodes (GB200 NVL72: 18 trays of 4 GPUs): the GPUs of a domain share
//   one NVLink switch vertex, so any two of them are an nvlink path of two hops.
// - Rail-optimised fabrics: each group of nodes_per_leaf nodes has `rails` leaves, and NIC k of
//   every node of the group sits on rail leaf rail_of_nic[k]. Same-rail GPUs of two nodes of a
//   group are one leaf apart; a cross-rail pair takes PXN (NVLink to the GPU of the sender's node
//   on the receiver's rail, then that rail) or the spine, as the file says.
//
// Latencies are folded: a link's latency is its own cable or port latency plus half the crossing
// latency of each switch (NVSwitch, PCIe switch, host root complex, NIC, leaf, spine) at its ends.
// Every path starts and ends at a GPU and passes through each switch it meets, entering by one link
// and leaving by another, so each crossing is counted exactly once in a path's latency sum, and
// SimGrid (whose routers have no latency) gives the same total.
#pragma once

#include "sim/core/fabric.hpp"
#include "sim/core/units.hpp"
#include "topologies/spec.hpp"

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace xattn::topo
{

using GpuId = std::uint32_t;    ///< 0 .. gpu_count()-1, node-major
using LinkId = std::uint32_t;   ///< 0 .. link_count()-1
using VertexId = std::uint32_t; ///< 0 .. vertex_count()-1

enum class VertexKind { kGpu, kNvswitch, kPcieSwitch, kCpu, kNic, kLeaf, kSpine };
enum class LinkKind {
  kNvlink,   ///< GPU <-> NVSwitch
  kPcieSlot, ///< GPU or NIC <-> PCIe switch
  kPcieHost, ///< PCIe switch <-> host CPU
  kIbAccess, ///< NIC <-> leaf
  kIbTrunk,  ///< leaf <-> spine (all cables between the pair, aggregated; under adaptive routing all of the leaf's
             ///< uplinks)
};
std::string_view to_string(LinkKind k);

struct Vertex {
  std::string name; ///< "node12.gpu3", "node12.nvswitch" (or "domain1.nvswitch" for a multi-node NVLink
                    ///< domain), "node12.pcie1", "node12.cpu", "node12.nic3", "leaf2", "spine0" ("spines":
                    ///< the spine layer as one, under adaptive routing)
  VertexKind kind;
};

/// A full-duplex link: the same bandwidth each way, each direction shared only by flows going that way.
struct Link {
  std::string name; ///< "node12.gpu3.nvlink", "node12.gpu3.pcie", "node12.nic3.pcie", "node12.pcie1.host",
                    ///< "node12.nic3.ib", "leaf2.spine0" ("leaf2.spines" under adaptive routing)
  LinkKind kind;
  VertexId a;                  ///< the end nearer the GPUs
  VertexId b;                  ///< the end nearer the spines
  core::BytesPerSec bandwidth; ///< each way
  core::Seconds latency;       ///< folded (see the file comment)
};

/// kUp crosses a link from its `a` end to its `b` end (towards the spines), kDown the other way.
enum class Direction { kUp, kDown };

struct Hop {
  LinkId link;
  Direction dir;
  core::BytesPerSec bandwidth; ///< the link's, each way
  core::Seconds latency;       ///< the link's (folded)
};

struct Path {
  std::vector<Hop> hops; ///< in order from source to destination; empty for the same GPU
  core::FabricClass fabric = core::FabricClass::kSameGpu;
  core::Seconds latency;        ///< sum of the hops' latencies, s
  core::BytesPerSec bottleneck; ///< smallest hop bandwidth, B/s; +infinity for the same GPU
  /// Idle-network transfer time of `size`: latency + size / bottleneck, s.
  core::Seconds time(core::Bytes size) const;
};

class Topology
{
public:
  /// The Boost.Graph adjacency list of vertices_ and links_ (topologies/graph.hpp), shared by
  /// copies: it does not change once built.
  struct Graph;

  /// Builds the graph and validates it: connected, positive bandwidths, counts consistent.
  /// `spec` must come from read_topology_spec without diagnostics. Throws core::InputError.
  explicit Topology(TopologySpec spec);

  const TopologySpec& spec() const { return spec_; }
  const std::string& name() const { return spec_.name; }
  std::size_t gpu_count() const { return static_cast<std::size_t>(spec_.nodes) * gpus_per_node_; }
  std::size_t node_count() const { return spec_.nodes; }
  std::size_t leaf_count() const { return spec_.fabric ? spec_.fabric->leaves : 0; }
  /// NVLink domains (one per node without NVLink, or with one node per domain).
  std::size_t domain_count() const { return spec_.nodes / nodes_per_domain(); }
  int nodes_per_domain() const { return spec_.nvlink ? spec_.nvlink->nodes_per_domain : 1; }
  /// The fabric's spine switches (under adaptive routing the graph holds them as one vertex).
  std::size_t spine_count() const { return spec_.fabric ? spec_.fabric->spines : 0; }
  /// How flows between leaves cross the spines (pinned without a fabric).
  Routing routing() const { return spec_.fabric ? spec_.fabric->routing : Routing::kPinned; }
  std::size_t link_count() const { return links_.size(); }
  std::size_t vertex_count() const { return vertices_.size(); }
  bool has_nvlink() const { return spec_.nvlink.has_value(); }

  /// "node12.gpu3".
  std::string gpu_name(GpuId g) const;
  /// The GPU named "nodeN.gpuG", if it exists.
  std::optional<GpuId> find_gpu(std::string_view name) const;
  int node_of(GpuId g) const { return static_cast<int>(g / gpus_per_node_); }
  int local_index(GpuId g) const { return static_cast<int>(g % gpus_per_node_); }
  /// The PCIe switch of its node that local GPU `local` sits under (GPUs spread evenly over them).
  int pcie_switch_of_gpu(int local) const { return local * spec_.pcie.switches / gpus_per_node_; }
  int domain_of_node(int node) const { return node / nodes_per_domain(); }
  /// Whether two GPUs share an NVLink domain (their node, or a rack-scale domain of several nodes).
  bool same_domain(GpuId a, GpuId b) const
  {
    return has_nvlink() && domain_of_node(node_of(a)) == domain_of_node(node_of(b));
  }
  /// Leaves per group of nodes_per_leaf nodes: 1 classic, more rail-optimised.
  int rails() const { return spec_.fabric ? spec_.fabric->rails : 1; }
  /// The group of nodes that shares a set of leaves (0 when there is no fabric).
  int group_of_node(int node) const { return spec_.fabric ? node / spec_.fabric->nodes_per_leaf : 0; }
  /// Rail leaf of a local NIC (0 in a classic fabric).
  int rail_of_nic(int nic) const { return spec_.fabric ? spec_.fabric->rail_of_nic[nic] : 0; }
  /// The leaf that NIC `nic` of `node` is cabled to: group * rails + rail.
  int leaf_of_nic(int node, int nic) const { return group_of_node(node) * rails() + rail_of_nic(nic); }
  /// The first leaf of a node's group: its only leaf in a classic fabric (0 when there is none).
  int leaf_of_node(int node) const { return group_of_node(node) * rails(); }
  /// The leaf of the NIC a GPU uses (0 when there is no fabric).
  int leaf_of(GpuId g) const { return spec_.fabric ? leaf_of_nic(node_of(g), nic_of(g)) : 0; }
  /// Local index of the NIC a GPU uses (GPU-NIC affinity); -1 without NICs.
  int nic_of(GpuId g) const { return spec_.nics ? spec_.nics->affinity[local_index(g)] : -1; }

  const std::vector<Link>& links() const { return links_; }
  const Link& link(LinkId id) const { return links_[id]; }
  const std::vector<Vertex>& vertices() const { return vertices_; }
  const Vertex& vertex(VertexId id) const { return vertices_[id]; }
  VertexId gpu_vertex(GpuId g) const;
  /// Node a vertex belongs to; -1 for leaf and spine switches and multi-node NVLink domain switches.
  int node_of_vertex(VertexId v) const
  {
    return v < node_count() * vertices_per_node_ ? static_cast<int>(v / vertices_per_node_) : -1;
  }

  /// same-gpu; same NVLink domain (its node, or a rack-scale domain): nvlink (pcie within a node
  /// without NVLink); otherwise ib-same-leaf when the network part of the path crosses one leaf
  /// (the relay's leaf under PXN), ib-spine when it crosses a spine.
  core::FabricClass fabric_class(GpuId a, GpuId b) const;
  /// The routed path from a to b: deterministic, built structurally in O(hops). Between leaves it
  /// crosses the spine the fabric's routing picks (spine_of), or under adaptive routing the two
  /// leaves' uplinks as one link each.
  /// A cross-rail pair under PXN is path(a, pxn_relay(a, b)) followed by that GPU's rail to b.
  /// The SimGrid platform routes every pair over exactly these hops.
  Path path(GpuId a, GpuId b) const;
  /// The spine that traffic from GPU `from`'s NIC to GPU `to` crosses between leaves `from_leaf` and
  /// `to_leaf`: pinned, (from_leaf + to_leaf) % spines (both directions alike); ecmp, a seeded hash
  /// of the ordered GPU pair; adaptive, 0 (the spine layer as one).
  int spine_of(GpuId from, GpuId to, int from_leaf, int to_leaf) const;
  /// Under cross_rail: pxn, the GPU of a's node on b's rail that a's traffic to b goes through
  /// (NCCL's PXN); nullopt when a and b share an NVLink domain or a rail, or the fabric has one rail
  /// or takes the spine.
  std::optional<GpuId> pxn_relay(GpuId a, GpuId b) const;
  /// Hops from a GPU up to its leaf (PCIe to its NIC, then the NIC's access link); empty without a
  /// fabric. The way back is the same links, reversed, each crossed kDown instead of kUp.
  std::vector<Hop> gpu_to_leaf(GpuId g) const;
  /// Hops from a GPU up to its node's host memory: its PCIe slot to its switch, the switch's link
  /// to the host CPU (each crossed kUp).
  std::vector<Hop> gpu_to_host(GpuId g) const;
  /// Whether a GPU can spread its inter-node traffic over its node's NICs (NCCL's PXN): a fabric,
  /// NVLink (over PCIe the relay GPU would only add hops) and more than one NIC per node.
  bool can_stripe() const { return spec_.fabric && has_nvlink() && spec_.nics && spec_.nics->count > 1; }
  /// The first GPU of `node` whose NIC is local NIC `nic` (the GPU a relay on that rail goes
  /// through); nullopt when no GPU uses that NIC.
  std::optional<GpuId> rail_gpu(int node, int nic) const;
  /// Rail-matched relay: a GPU that stripes (can_stripe()) exchanges with `other` through the NIC
  /// of the same index as other's NIC (the same rail: every node cables its NICs alike), reached
  /// over NVLink from rail_gpu(). Returns that GPU; nullopt when striping is impossible, the two
  /// share a node, or its own NIC is already on other's rail.
  std::optional<GpuId> rail_relay(GpuId striping, GpuId other) const;
  /// path(a, via) followed by path(via, b), classed as a to b: a relayed transfer.
  Path path_via(GpuId a, GpuId via, GpuId b) const;
  /// A fewest-hops path between two vertices found by breadth-first search on the graph (links,
  /// in order). For cross-checks and inspection; use path() for routing.
  std::vector<LinkId> shortest_path(VertexId from, VertexId to) const;

  /// Graphviz DOT of the whole graph (vertices by name, links labelled with bandwidth and latency).
  void write_dot(std::ostream& out) const;

private:
  void build();
  /// Each NIC's PCIe switch and first GPU, and each rail's first GPU (build()).
  void place_nics();
  void validate() const;
  Hop hop(LinkId id, Direction d) const { return Hop{id, d, links_[id].bandwidth, links_[id].latency}; }
  // Per-node blocks of vertex and link ids.
  VertexId node_vertex(int node, int offset) const { return node * vertices_per_node_ + offset; }
  LinkId node_link(int node, int offset) const { return node * links_per_node_ + offset; }
  VertexId nvswitch_vertex(int node) const;
  /// Up from `from`'s NIC to its leaf, through a spine when b's leaf differs, down to b.
  void add_ib_hops(GpuId from, GpuId b, std::vector<Hop>& out) const;
  LinkId nvlink_link(GpuId g) const;
  LinkId gpu_slot_link(GpuId g) const;
  LinkId nic_slot_link(int node, int nic) const;
  LinkId host_link(int node, int sw) const;
  LinkId access_link(int node, int nic) const;
  LinkId trunk_link(int leaf, int spine) const;
  /// Trunks per leaf in the graph: one per spine, or one for all under adaptive routing.
  std::size_t trunks_per_leaf() const
  {
    return routing() == Routing::kAdaptive && spine_count() > 1 ? 1 : spine_count();
  }
  void add_pcie_between(int node, int sw_from, int sw_to, std::vector<Hop>& out) const;

  TopologySpec spec_;
  std::uint32_t gpus_per_node_ = 0;
  std::uint32_t vertices_per_node_ = 0;
  std::uint32_t links_per_node_ = 0;
  std::vector<int> nic_switch_;      ///< PCIe switch of each local NIC
  std::vector<int> nic_owner_;       ///< first local GPU whose affinity is each local NIC, -1 if none
  std::vector<int> rail_owner_;      ///< first local GPU whose NIC is on each rail, -1 if none
  VertexId first_domain_switch_ = 0; ///< multi-node NVLink domains: vertex of domain 0's switch
  std::vector<Vertex> vertices_;
  std::vector<Link> links_;
  std::shared_ptr<const Graph> graph_;
};

/// Reads, checks and builds a topology file. Throws core::InputError (file:line:col) on bad input.
Topology load_topology(const std::filesystem::path& file);
/// Same, from a parsed document (its `file` names it in messages).
Topology load_topology(const core::Document& doc);
/// Same, from a section of a larger file opened against topology_schema(): errors carry that
/// file's positions. Throws core::InputError with everything wrong in the section.
Topology read_topology(core::Section& section);

} // namespace xattn::topo
