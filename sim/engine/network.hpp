// Transfers between GPUs: SimGrid's max-min sharing is the model of record for every byte that
// shares a link with other traffic; a transfer that provably meets no contention takes a fused
// timer instead (docs/architecture.md, "The simulation on SimGrid"), with the same result.
//
// The proof is a reservation rule. Each active transfer reserves its alone-rate (what it would
// get by itself: min(blocks x per-block rate, path bottleneck)) on every link direction it
// crosses. Transfers that start at the same instant are looked at together. On a link where all
// reservations fit in the capacity nobody can be limited. A link that would overflow but carries
// only transfers of this instant binds them among themselves alone: such a group is solved
// exactly (max-min with caps, re-solved as members finish, maxmin.hpp) and fused into timers. A
// link that would overflow with earlier traffic on it is contention: the new transfers become
// real SimGrid comms, and every fused transfer on that link is demoted: its remaining bytes,
// exact because its schedule was exact until now, continue as real comms (a group is demoted
// whole), unless everything on the links it couples is fused: then the coupled set is re-solved
// exactly from now as one group. SimGrid links carry no latency (latency and probes are the caller's delays), so a
// demoted transfer continues without paying latency twice.
#pragma once

#include "sim/engine/maxmin.hpp"
#include "sim/model/pricing.hpp"
#include "topologies/platform.hpp"
#include "topologies/topology.hpp"

#include <simgrid/s4u/Comm.hpp>

#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <unordered_map>
#include <vector>

namespace xattn::sim::engine
{

using topo::GpuId;

struct NetworkStats {
  std::uint64_t transfers = 0; ///< transfer() calls
  std::uint64_t fused = 0;     ///< finished as a fused timer
  std::uint64_t real = 0;      ///< started as real SimGrid comms
  std::uint64_t demoted = 0;   ///< started fused, continued as real comms
  std::uint64_t grouped = 0;   ///< fused as members of a group that shares links among itself
  std::uint64_t regrouped = 0; ///< fused transfers re-solved with newcomers instead of demoted
  std::uint64_t relayed = 0;   ///< transfers through a rail-matched relay (a striping requester)
  std::uint64_t comms = 0;     ///< SimGrid comms launched (one per thread block of a real transfer)
  std::array<double, core::kAllFabrics.size()> bytes_by_fabric{};      ///< handed to transfer()
  std::array<double, core::kAllFabrics.size()> bytes_done_by_fabric{}; ///< of finished transfers
  double simgrid_bytes_handed = 0;                                     ///< payloads of the comms launched in SimGrid
  double simgrid_bytes_completed = 0; ///< payloads of the comms SimGrid reported complete
  std::uint64_t max_in_flight = 0;    ///< real comms in flight at once
};

class Network
{
public:
  /// `fast_path` false sends every transfer through SimGrid (the reference for the fast path).
  /// A transfer between a GPU that stripes (Platform::stripes: a requester spreading its traffic
  /// over its node's NICs) and a GPU on another node takes Topology::path_via through the
  /// rail-matched relay on the striping GPU's node, in both directions, unless the other GPU is on
  /// its own rail already.
  Network(const topo::Topology& topo, const topo::Platform& platform, bool fast_path);
  ~Network();
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  /// Starts moving `bytes` from `src` to `dst` now as `flow` (sim::flow priced it on path(src,
  /// dst): its alone rate, its thread blocks, the link capacity it turns into progress), and calls
  /// `done` `tail_s` seconds after the last byte arrives. The transfer is the bandwidth phase only;
  /// the tail carries the caller's fixed delays (latency, probes), fused into the same event when
  /// the transfer is fused. REQUIRES: src != dst, bytes > 0, flow.rate > 0, flow.factor > 0.
  void transfer(GpuId src, GpuId dst, double bytes, const sim::Flow& flow, double tail_s, std::function<void()> done);

  /// The route between two GPUs as the engine uses it (cached; relayed where one end stripes).
  const topo::Path& path(GpuId src, GpuId dst);
  /// The same as the cost model sees it.
  sim::PathCost path_cost(GpuId src, GpuId dst);

  const NetworkStats& stats() const { return stats_; }
  /// Bytes carried per link direction (index link * 2 + direction: 0 up, 1 down).
  const std::vector<double>& link_bytes() const { return link_bytes_; }
  std::size_t in_flight() const { return active_; }

private:
  struct CachedPath {
    topo::Path path;
    std::vector<std::uint32_t> resources; ///< link * 2 + direction
    int src_rail = -1, dst_rail = -1;     ///< the NIC whose relay endpoint each end uses, -1: its own
  };
  struct Leg {
    const CachedPath* route = nullptr;
    GpuId src = 0, dst = 0;
    /// `bytes` and `alone` are in link capacity (payload / factor): the solver, the reservations
    /// and the schedules all work in it, as SimGrid's max-min does with a bandwidth factor.
    double bytes = 0, alone = 0, start = 0, end = 0, tail = 0;
    double payload = 0; ///< the bytes the caller moves
    double factor = 1;  ///< payload per unit of capacity
    bool link_bound = false;
    int blocks = 1;
    bool real = false;
    bool released = false;           ///< its reservations are gone (the bytes have all moved)
    int group = -1;                  ///< the fused group it belongs to, if any
    Schedule schedule;               ///< rate over time while fused, from `start`
    double offset = 0;               ///< bytes moved before `start` (a re-solved transfer restarts its schedule)
    std::vector<std::uint32_t> slot; ///< its index in each route resource's `legs`
    int subs_left = 0;
    simgrid::kernel::timer::Timer* timer = nullptr;
    std::vector<simgrid::s4u::CommPtr> comms;
    std::vector<double> sub_bytes;
    std::function<void()> done;
  };
  struct Resource {
    double capacity = 0;
    double reserved = 0;
    std::vector<std::uint32_t> legs;
    /// No fused transfer on it ends before this (a lower bound): purge() has nothing to do earlier.
    double min_end = std::numeric_limits<double>::infinity();
  };

  const CachedPath& cached(GpuId src, GpuId dst);
  std::uint32_t new_leg();
  void go_real(std::uint32_t leg, double bytes);
  void flush();
  bool regroup(const std::vector<std::uint32_t>& seeds, const std::vector<std::uint32_t>& batch, double t,
               std::vector<std::uint32_t>& settled);
  void dissolve(int group);
  /// Gives each transfer its exact schedule from `t` and its timer (a group when several).
  void fuse(const std::vector<std::uint32_t>& ids, std::vector<Schedule>& sched, double t);
  void demote(std::uint32_t leg);
  void demote_one(std::uint32_t leg);
  void purge(std::uint32_t resource, double t);
  void release(std::uint32_t leg);
  void finish(std::uint32_t leg);
  void on_comm_done(const simgrid::s4u::Activity& a);

  const topo::Topology& topo_;
  const topo::Platform& platform_;
  bool fast_path_;
  std::unordered_map<std::uint64_t, CachedPath> paths_;
  std::vector<Resource> resources_;
  std::vector<double> link_bytes_;
  std::vector<Leg> legs_;
  std::vector<std::uint32_t> free_legs_;
  std::size_t active_ = 0;
  std::uint64_t comms_in_flight_ = 0;
  std::vector<simgrid::s4u::CommPtr> retired_;
  std::vector<std::uint32_t> pending_; ///< transfers of this instant, not yet placed
  bool flush_scheduled_ = false;
  // Scratch of flush() and regroup(), kept to spare the allocator.
  std::vector<std::uint32_t> fl_batch_, fl_touched_, fl_seeds_, fl_settled_, fl_ids_;
  std::vector<std::size_t> fl_parent_, fl_order_, fl_group_;
  std::vector<char> fl_real_root_, fl_handled_;
  std::vector<std::uint32_t> rg_set_, rg_binding_, rg_queue_, rg_legs_;
  MaxMinSolver solver_;         ///< reused by every exact solve
  std::vector<Schedule> sched_; ///< its schedules, storage reused
  std::vector<std::vector<std::uint32_t>> groups_;
  std::vector<int> free_groups_;
  std::vector<double> batch_load_;  ///< scratch, per resource
  std::vector<int> resource_class_; ///< scratch, per resource
  std::vector<int> resource_owner_; ///< scratch, per resource
  // Scratch marks for the re-solve: entry == epoch_ means "marked in this pass".
  std::uint32_t epoch_ = 0;
  std::vector<std::uint32_t> leg_mark_, link_mark_, local_mark_, group_mark_;
  std::vector<std::uint32_t> local_index_;
  std::uint32_t next_epoch();
  bool in_completion_ = false;
  NetworkStats stats_;
};

} // namespace xattn::sim::engine
