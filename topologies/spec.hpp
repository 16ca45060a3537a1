// What a topology file says, as plain structs with the file's defaults, and the schema that reads
// them (docs/architecture.md; docs/conventions.md, "Schema first"). The graph, paths and platform are built from
// a TopologySpec by Topology (topology.hpp).
//
// A topology file:
//
//   name: testbed-ndr200
//   description: ...            # optional: one line for reports
//   nodes: 4                    # servers
//   gpus_per_node: 8
//   host_memory: 2TB            # optional: each node's CPU memory (a KV tier: prefill.host_capacity)
//   nvlink:                     # optional: absent means the GPUs of a node talk over PCIe only
//     bandwidth: 450GBps        # per GPU, each way (NVLink 4.0 "900 GB/s bidirectional")
//     latency: 1us              # GPU <-> NVSwitch port
//     switch_latency: 0s
//     nodes_per_domain: 1       # nodes sharing one NVLink domain (GB200 NVL72: 18 trays of 4 GPUs)
//     switch_trays: 9           # optional: NVLink switch trays of a domain; with tray_bandwidth, the
//     tray_bandwidth: 100GBps   #   per-GPU bandwidth is switch_trays x tray_bandwidth
//   pcie:                       # the tree GPU <-> PCIe switch <-> host CPU, NIC <-> PCIe switch
//     switches: 4               # per node; GPUs spread evenly over them
//     bandwidth: 64GBps         # per GPU or NIC slot, each way
//     latency: 0.5us
//     host_bandwidth: 64GBps    # PCIe switch <-> host CPU uplink
//   nics:                       # needed with a fabric
//     count: 8                  # per node: 8 = one per GPU; fewer = shared
//     affinity: [0, 1, ...]     # optional: NIC of each local GPU (default: even spread)
//   fabric:                     # optional for one node: the leaf/spine InfiniBand fabric
//     nodes_per_leaf: 2
//     leaves: 2
//     spines: 1
//     link: {bandwidth: 200Gbps, latency: 0.5us}   # NIC <-> leaf cable, and each leaf <-> spine trunk's latency
//     switch_latency: 0.2us
//     oversubscription: 1       # leaf downlink / uplink capacity
//     rails: 1                  # leaves per group of nodes_per_leaf nodes: > 1 is rail-optimised
//     rail_of_nic: [0, 1, ...]  # optional: rail leaf of each local NIC (default: even spread)
//     cross_rail: pxn           # rails > 1: pxn (NVLink to the node's GPU on the other rail) or spine
//     routing: adaptive         # how flows between leaves cross the spines: adaptive, ecmp or pinned
//     ecmp_seed: 0              # ecmp: the switches' hash seed
#pragma once

#include "sim/core/schema.hpp"
#include "sim/core/units.hpp"

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace xattn::topo
{

struct NvlinkSpec {
  core::BytesPerSec bandwidth; ///< per GPU port, each way (switch_trays x tray_bandwidth when trays are given)
  core::Seconds latency;       ///< GPU <-> NVSwitch port
  core::Seconds switch_latency;
  int nodes_per_domain = 1;         ///< consecutive nodes whose GPUs share one NVLink switch fabric
  int switch_trays = 0;             ///< NVLink switch trays of a domain; 0: not described
  core::BytesPerSec tray_bandwidth; ///< NVLink bandwidth from one GPU to one switch tray, each way
};

struct PcieSpec {
  int switches = 1;            ///< PCIe switches per node
  core::BytesPerSec bandwidth; ///< per GPU or NIC slot, each way
  core::Seconds latency;       ///< per slot link
  core::Seconds switch_latency;
  core::BytesPerSec host_bandwidth; ///< PCIe switch <-> host CPU, each way
  core::Seconds host_latency;       ///< PCIe switch <-> host CPU link
  core::Seconds host_crossing;      ///< crossing the host CPU's root complex
};

struct NicSpec {
  int count = 0;             ///< NICs per node
  core::Seconds latency;     ///< crossing the NIC (PCIe to wire)
  std::vector<int> affinity; ///< NIC index of each local GPU (size gpus_per_node)
};

/// How a GPU reaches a GPU on another rail of a rail-optimised fabric.
enum class CrossRail {
  kPxn,   ///< over NVLink to the GPU of its own node on the destination's rail, then that rail (NCCL's PXN)
  kSpine, ///< up its own rail leaf, through a spine, down the destination's rail leaf
};

/// How flows between two leaves cross the spines.
enum class Routing {
  /// Every flow of a leaf pair over one spine, (leaf_a + leaf_b) % spines: a static table, one
  /// leaf pair on 1 / spines of a leaf's uplink.
  kPinned,
  /// Each GPU pair's flows over one spine picked by a seeded hash of the pair, as switches hash a
  /// connection's headers (an RDMA queue pair keeps its path): pairs that hash alike share a spine.
  kEcmp,
  /// Every flow spread evenly over all spines, as switches with adaptive routing spread a flow's
  /// packets: in the fluid model a leaf's uplinks carry it as one link of their summed capacity.
  kAdaptive,
};
/// The routing modes by the names files give them (the one list of them).
inline constexpr std::array<std::pair<const char*, Routing>, 3> kRoutings{
    {{"adaptive", Routing::kAdaptive}, {"ecmp", Routing::kEcmp}, {"pinned", Routing::kPinned}}};
std::string_view to_string(Routing r);

struct FabricSpec {
  int nodes_per_leaf = 0;
  int leaves = 0;
  int spines = 0;
  core::BytesPerSec link_bandwidth; ///< NIC <-> leaf, each way
  core::Seconds link_latency;       ///< NIC <-> leaf, and leaf <-> spine
  core::Seconds switch_latency;     ///< crossing a leaf or spine switch
  double oversubscription = 1.0;    ///< leaf downlink capacity / uplink capacity
  /// Leaf switches per group of nodes_per_leaf nodes. 1: every NIC of a node on the group's one
  /// leaf (classic leaf/spine). More: rail-optimised, NIC k of every node of the group on the
  /// group's rail leaf rail_of_nic[k]; leaf = group * rails + rail.
  int rails = 1;
  std::vector<int> rail_of_nic; ///< rail of each local NIC (size nics.count)
  CrossRail cross_rail = CrossRail::kPxn;
  Routing routing = Routing::kEcmp;
  std::uint64_t ecmp_seed = 0; ///< kEcmp: the hash's seed
};

struct TopologySpec {
  std::string name;
  std::string description; ///< one line for reports ("" if not given)
  std::string file;        ///< where it came from, for messages
  int nodes = 0;
  int gpus_per_node = 0;
  core::Bytes host_memory; ///< each node's CPU memory; 0: not described
  std::optional<NvlinkSpec> nvlink;
  PcieSpec pcie;
  std::optional<NicSpec> nics;
  std::optional<FabricSpec> fabric;
};

/// The topology file's schema: allow-list, defaults, and the text of `xattn topo --describe`.
const core::Schema& topology_schema();

/// Reads a topology from a section already opened against topology_schema() (a scenario can embed a
/// topology under a key: `Section s = scenario.section("topology")`, its schema's field pointing at
/// topology_schema()). Problems (bad values, inconsistent counts, dangling references) are added to
/// the section's Diagnostics with the file's positions; the caller throws them. The result is only
/// meaningful when no diagnostic was added.
TopologySpec read_topology_spec(core::Section& section);

} // namespace xattn::topo
