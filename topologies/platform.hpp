// The SimGrid platform of a topology, built in C++ from the graph (no XML).
//
// Routing (docs/architecture.md, "The simulation on SimGrid"): every GPU host and every link sits
// in one netzone, "gpus", under the root, and that zone computes each route when SimGrid asks for
// it, from Topology::path() (a SimGrid NetZoneImpl whose get_local_route() walks the topology). So
// the SimGrid route of every pair is exactly path(a, b).hops, in every layout: leaf/spine, NVLink
// domains of several nodes, rail-optimised fabrics with PXN or spine cross-rail routes. The
// platform stores O(GPUs + links), no route table; a route costs O(hops) when a comm starts.
//
// Why not SimGrid's stock zones nested (a star zone per leaf under a full zone of leaves): SimGrid
// picks gateways per pair of zones, never per host, so a route that depends on both ends (PXN:
// NVLink to the GPU of the sender's node on the receiver's rail; NVLink between two trays of a
// rack whose NICs sit on different leaves) would need a stored bypass per GPU pair.
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
  std::vector<simgrid::s4u::Host*> hosts;    ///< GpuId -> host
  std::vector<simgrid::s4u::Host*> ce_hosts; ///< GpuId -> copy-engine endpoint (HostSpec::copy_engine_hosts)
  std::vector<simgrid::s4u::Link*> links;    ///< LinkId -> split-duplex link (its two directions are
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
/// REQUIRES: `topo` outlives every comm of `engine` (routes are computed from it).
Platform build_platform(const Topology& topo, simgrid::s4u::Engine& engine, const HostSpec& host);

/// The SimGrid configuration build_platform sets, for an engine that sets up otherwise.
void configure_network(simgrid::s4u::Engine& engine);

} // namespace xattn::topo
