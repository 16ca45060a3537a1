// The SimGrid platform of a topology, built in C++ from the graph (no XML).
//
// Zones (docs/architecture.md, "The simulation on SimGrid"): a full zone "fabric" at the root
// holds one star zone per leaf ("leaf3"), which holds the GPU hosts of the leaf's nodes
// ("node12.gpu3") and a router "leaf3.sw" as its gateway. A GPU's star route up is
// Topology::gpu_to_leaf() (PCIe to its own NIC, then the NIC's access link); down is the same
// links reversed. Two GPUs of one node are joined by a bypass route over their NVLink (or PCIe)
// hops; two leaves by a fabric route over the trunks of the spine Topology::path() picks. So the
// SimGrid route of every pair is exactly path(a, b).hops, and the platform holds
// O(GPUs + leaves²) routes, not O(GPUs²).
//
// Node zones are folded into the leaf zones on purpose: a SimGrid zone has one gateway, so a node
// zone would send all of a node's traffic through one NIC and break GPU-NIC affinity.
#pragma once

#include "sim/core/units.hpp"
#include "topologies/topology.hpp"

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include <array>
#include <vector>

namespace xattn::topo
{

/// What each GPU host computes with: the engine models a holder's compute elbow as `cores` cores
/// of `speed` each (a host with n cores runs n tasks at full speed, then shares).
struct HostSpec {
  core::FlopsPerSec speed{1e12}; ///< per core, flop/s
  int cores = 1;
  /// Per-flow dispatch caps (one thread block's rate) for NVLink, PCIe and InfiniBand routes, B/s;
  /// 0 leaves that class uncapped. Each GPU gets a FATPIPE link per capped class (a FATPIPE limits
  /// every flow to its bandwidth and shares nothing), first on the routes of that class, so that a
  /// SimGrid comm is one thread block's flow.
  std::array<core::BytesPerSec, 3> dispatch{};
  /// Also give every GPU a copy-engine endpoint, host "<gpu>.ce", routed over the same hops
  /// without dispatch caps: bulk copies that the link, not a thread block, limits.
  bool copy_engine_hosts = false;
  /// GPUs that spread their inter-node traffic over all of their node's NICs, rail-matched
  /// (Topology::rail_relay; ignored unless Topology::can_stripe()). Each gets a relay endpoint per
  /// NIC k of its node other than its own that some GPU uses, host "<gpu>.rail<k>" (and
  /// "<gpu>.ce.rail<k>" with copy-engine hosts), routed over the same dispatch cap, then NVLink to
  /// Topology::rail_gpu(node, k), then up NIC k: a comm between it and a GPU on another node takes
  /// Topology::path_via either way.
  std::vector<GpuId> striping;
};

struct Platform {
  std::vector<simgrid::s4u::Host*> hosts; ///< GpuId -> host
  std::vector<simgrid::s4u::Host*> ce_hosts; ///< GpuId -> copy-engine endpoint (HostSpec::copy_engine_hosts)
  std::vector<simgrid::s4u::Link*> links; ///< LinkId -> split-duplex link (its two directions are
                                          ///< `<name>_UP` and `<name>_DOWN`, matching Direction)
  int nics_per_node = 0;
  std::vector<char> striping;                      ///< per GPU: it has relay endpoints (empty: nobody)
  std::vector<simgrid::s4u::Host*> relay_hosts;    ///< GpuId * nics_per_node + NIC -> relay endpoint, or null
  std::vector<simgrid::s4u::Host*> relay_ce_hosts; ///< same, for copy-engine endpoints
  bool stripes(GpuId g) const { return !striping.empty() && striping[g] != 0; }
  /// The endpoint of `g` on the rail of NIC `nic` (its own host when that is its own NIC).
  simgrid::s4u::Host* endpoint(GpuId g, int nic, bool copy_engine) const;
};

/// Sets the network configuration (network/model:CM02, network/crosstraffic:0, network/TCP-gamma:0:
/// SimGrid's defaults are wrong for RDMA, docs/architecture.md) and builds the platform into
/// `engine`, which must have no platform yet. One platform per Engine, one Engine per process.
Platform build_platform(const Topology& topo, simgrid::s4u::Engine& engine, const HostSpec& host);

/// The SimGrid configuration build_platform sets, for an engine that sets up otherwise.
void configure_network(simgrid::s4u::Engine& engine);

} // namespace xattn::topo
