// Transfers between GPUs under max-min sharing of every link they cross: the fluid model SimGrid's
// network model solves (CM02, no latency on links), solved here incrementally (docs/architecture.md,
// "The simulation on SimGrid").
//
// A transfer is one flow of weight w, the w equal SimGrid flows it stands for: its thread blocks,
// each capped by the GPU's dispatch link, or when the link bounds it its streams (sim::Flow: the
// messages it carries at once, 1 for most); capped at its alone rate, in link-capacity units
// (payload / bandwidth factor). Equal flows on one path keep equal rates, so this is exact. At every instant where
// flows start or end, the network finds the flows whose rates can change and re-solves only them (max-min is global,
// but an event changes nothing beyond the links it fills or frees):
// - a newcomer that fits at its cap on every link it crosses takes its cap, and nobody changes;
// - an ending flow that leaves no full link changes nobody;
// - otherwise the newcomers, and the flows that the full links the ended ones freed held back
//   (the fastest per unit of weight there among those below their caps), are solved with the
//   capacity the flows outside leave; the set grows, and is solved again, wherever that answer is
//   not max-min fair: a link the new rates fill on which an outside flow runs faster per unit of
//   weight than the set's flows it holds back, or (held back there before) slower; a full link the
//   new rates leave that held outside flows back. What is left outside keeps its rates, exactly.
// Links that cannot bind stay out of a solve: those their flows' caps cannot fill, and those whose
// flows all cross a narrower guard link (Resource::guard).
// Each flow's end (the date its last byte moves at its current rate) sits in one heap, which a
// re-solve updates where an end comes earlier (a later one is moved once it reaches the top); one
// event (clock.hpp) wakes the network at the earliest.
// `fast_path` false sends every transfer through SimGrid's own comms instead: the reference
// (simgrid_comms.hpp).
#pragma once

#include "sim/engine/clock.hpp"
#include "sim/engine/end_heap.hpp"
#include "sim/engine/maxmin.hpp"
#include "sim/engine/simgrid_comms.hpp"
#include "sim/model/path.hpp"
#include "topologies/platform.hpp"
#include "topologies/topology.hpp"

#include <absl/container/flat_hash_map.h>
#include <array>
#include <bit>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <vector>

namespace xattn::sim::engine
{

using topo::GpuId;

struct NetworkStats {
  std::uint64_t transfers = 0;     ///< transfer() calls
  std::uint64_t fluid = 0;         ///< moved by the incremental max-min solver
  std::uint64_t simgrid = 0;       ///< moved by SimGrid comms (fast_path false)
  std::uint64_t resolves = 0;      ///< re-solves of a set of flows (an event that changed others' rates)
  std::uint64_t resolved = 0;      ///< flows in those sets, summed
  std::uint64_t widest = 0;        ///< flows in the largest set
  std::uint64_t relayed = 0;       ///< transfers through a rail-matched relay (a striping requester)
  std::uint64_t comms = 0;         ///< SimGrid comms launched (one per thread block of such a transfer)
  std::uint64_t max_in_flight = 0; ///< transfers moving bytes at once
  std::array<double, core::kAllFabrics.size()> bytes_by_fabric{};      ///< handed to transfer()
  std::array<double, core::kAllFabrics.size()> bytes_done_by_fabric{}; ///< arrived, of finished transfers
  double simgrid_bytes_handed = 0;                                     ///< payloads of the comms launched in SimGrid
  double simgrid_bytes_completed = 0; ///< payloads of the comms SimGrid reported complete
  std::uint64_t max_comms_in_flight = 0;
};

class Network
{
public:
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
  /// the tail carries the caller's fixed delays (latency, probes).
  /// REQUIRES: src != dst, bytes > 0, flow.rate > 0, flow.factor > 0.
  void transfer(GpuId src, GpuId dst, double bytes, const sim::Flow& flow, double tail_s, Callback done);

  /// The route between two GPUs as the cost model sees it (cached; relayed where one end stripes).
  sim::PathCost path_cost(GpuId src, GpuId dst);

  /// The busiest link direction on the routes between GPUs `a` and `b`, either way, now, as the
  /// engine's own solver holds it: its flows' rates over its capacity (a link its flows' caps
  /// cannot fill: their caps, at most), and how many flows cross it (the more of them among
  /// equals). Nothing on the SimGrid reference path (its flows are SimGrid's).
  struct Busy {
    double share = 0;
    int flows = 0;
  };
  Busy busiest(GpuId a, GpuId b);

  /// The counts so far, the SimGrid reference's comms among them.
  NetworkStats stats() const;
  /// Bytes carried per link direction (index link * 2 + direction: 0 up, 1 down).
  const std::vector<double>& link_bytes() const { return link_bytes_; }
  /// Bytes moved so far per link direction (same index), the transfers in flight counted by what
  /// they have moved by now (the timeline's link utilisation). `out` is overwritten.
  void moved_bytes(std::vector<double>& out) const;
  std::size_t in_flight() const { return active_; }
  /// engine.check_solver: after every re-solve, solve every moving flow from scratch and fail (an
  /// internal error) where a rate differs from the incremental one by more than kCheckTolerance.
  void set_check_solver(bool on) { check_solver_ = on; }
  static constexpr double kCheckTolerance = 1e-6;

private:
  /// A route, compact (the largest presets cache millions): where its links lie in route_links_,
  /// its resources first, then those of them whose guard it does not cross.
  struct CachedPath {
    std::uint32_t begin = 0;          ///< in route_links_
    std::uint16_t hops = 0;           ///< how many of its links are its resources
    std::uint16_t size = 0;           ///< its links in all
    int src_rail = -1, dst_rail = -1; ///< the NIC whose relay endpoint each end uses, -1: its own
  };
  /// A route as the route table holds it, with what the cost model reads of it beside it (pricing
  /// a transfer costs one probe of the table).
  struct Known {
    CachedPath route;
    sim::PathCost cost;
  };
  struct Transfer {
    int src_rail = -1, dst_rail = -1;                       ///< its route's (CachedPath; its links are in links_)
    core::FabricClass fabric = core::FabricClass::kSameGpu; ///< its route's (Known::cost)
    GpuId src = 0, dst = 0;
    double payload = 0; ///< the bytes the caller moves
    double factor = 1;  ///< payload per unit of link capacity
    bool link_bound = false;
    int flows = 1; ///< the equal flows it moves as (Flow: its blocks when block-bound, else its streams)
    double tail = 0;
    double arrived = 0;              ///< payload bytes that arrived (counted when the last one did)
    bool moving = false;             ///< on its links (bytes still moving)
    std::vector<std::uint32_t> slot; ///< its index in each route resource's `crossing`
    Callback done;
  };
  /// A transfer's fluid flow, in link-capacity units (same index as its Transfer): what every re-solve
  /// reads of it, in one cache line.
  struct alignas(64) Fluid {
    double weight = 1, cap = 0;
    double left = 0;  ///< capacity units still to move at `stamp`
    double rate = 0;  ///< its current rate
    double stamp = 0; ///< when `left` was last brought up to date
    // When its last byte moves at `rate` (ends_ holds it, or an earlier date).
    double end = std::numeric_limits<double>::infinity();
    std::uint32_t hops = 0;      ///< how many links its route crosses (Network::resources)
    std::uint32_t unguarded = 0; ///< how many of them have a guard the route does not cross (Network::unguarded)
    std::uint32_t mark = 0;      ///< == the network's epoch: in the set being re-solved
    std::uint32_t binding = 0;   ///< bit k: hop k's link can bind (its Look::binds), while it moves
  };
  static_assert(sizeof(Fluid) == 64, "a flow's hot state fits one cache line");
  static constexpr std::uint32_t kMaxHops = 32; ///< a route's links (Fluid::binding has a bit per hop)
  /// A flow's route as CachedPath lists its links, copied beside its Fluid (the cached routes lie
  /// all over memory; a re-solve reads the routes of dozens of flows, and a departure the links it
  /// leaves).
  using Hops = std::array<std::uint32_t, 2 * kMaxHops>;
  std::span<const std::uint32_t> resources(std::uint32_t id) const { return {links_[id].data(), fluid_[id].hops}; }
  std::span<const std::uint32_t> unguarded(std::uint32_t id) const
  {
    return {links_[id].data() + fluid_[id].hops, fluid_[id].unguarded};
  }
  /// Calls `fn` with each link of a flow's route that can bind (most cannot: an event skips them).
  template <class Fn>
  void for_binding(std::uint32_t id, Fn&& fn) const
  {
    const Hops& hops = links_[id];
    for (std::uint32_t m = fluid_[id].binding; m != 0; m &= m - 1)
      fn(hops[std::countr_zero(m)]);
  }
  /// A flow on a link: its transfer, and which hop of its route the link is.
  struct OnLink {
    std::uint32_t transfer = 0, hop = 0;
  };
  /// A link direction, in one cache line (every event reads the links its flows cross).
  struct alignas(64) Resource {
    double used = 0;     ///< the rates of the flows on it, summed
    double capsum = 0;   ///< their caps, summed
    double capacity = 0; ///< link capacity units per second
    // A narrower link that the first route through this one crosses too (the nearest on that
    // route), or kNoGuard; kUnrouted until a route through it is cached. While every flow here
    // crosses its guard (`unguarded` == 0), this link cannot fill before its guard does: it never
    // binds, and re-solves leave it out.
    std::uint32_t guard = kUnrouted;
    std::uint32_t unguarded = 0;  ///< flows on it that do not cross its guard
    std::uint32_t updates = 0;    ///< re-solves that changed it (its sum is redone every kResumEvery)
    std::vector<OnLink> crossing; ///< the flows on it
  };
  static_assert(sizeof(Resource) == 64, "a link direction fits one cache line");
  /// A resource as events see it, compact (read for the links of every flow they touch): whether
  /// it can bind, and its place in the current re-solve.
  struct Look {
    std::uint32_t epoch = 0; ///< == the network's epoch: looked at by this re-solve
    std::uint32_t local = 0; ///< its index in the solve, or kUnlisted (it cannot bind)
    // == the network's epoch: the flows it holds back joined this re-solve (rates do not move
    // during one, so they are the same flows if asked again: several newcomers or departures of an
    // instant share links).
    std::uint32_t bottlenecked = 0;
    // Its flows at their caps can fill it, and some cross no narrower guard (binds()). Only such a
    // link keeps `Resource::used` up to date (the others' sums are redone when they can bind
    // again), and its flows' Fluid::binding say so.
    bool binds = false;
  };

  // Rates are sums of doubles: a link within this share of its capacity is full, a flow that fits
  // within it fits, a flow within it of its cap is at its cap (the solver's own tolerance).
  // SimGrid, on the reference path, solves to 1e-10 (simulation.cpp).
  static constexpr double kTight = MaxMinSolver::kAtCap;
  /// A binding link's sum of rates drifts as rates change; every this many re-solves that change
  /// it, it is summed again from its flows.
  static constexpr std::uint32_t kResumEvery = 64;
  static constexpr std::uint32_t kNoGuard = ~std::uint32_t{0};
  static constexpr std::uint32_t kUnrouted = kNoGuard - 1;
  static constexpr std::uint32_t kUnlisted = ~std::uint32_t{0};
  /// The route between two GPUs, cached on first use (the reference stays valid until the next call).
  const Known& known(GpuId src, GpuId dst);
  std::uint32_t new_transfer();
  static bool binds(const Resource& r); ///< what Look::binds says, from the link's own sums
  void rebind(std::uint32_t resource);  ///< after its flows changed: Look::binds, its flows' bits, its sum
  bool full(std::uint32_t resource) const;
  void flush();
  void resolve(double t);
  bool reach(std::uint32_t id, double t);                    ///< false: in the set already, or leaving now
  double top_level(const Resource& res) const;               ///< the highest rate per unit of weight on it below a cap
  static bool held_back(const Fluid& f, double top);         ///< by a full link whose top level is `top`
  bool reach_bottlenecked(std::uint32_t resource, double t); ///< false: nobody new joined
  void look_at(std::uint32_t resource); ///< lists it for the solve where it can bind (once per re-solve)
  void count_set();                     ///< set_used_ and set_count_, from the set as it is
  void check_rates(double t) const;     ///< engine.check_solver's comparison, after a re-solve at `t`
  /// engine.check_solver, after every event: the bookkeeping every event keeps (network_check.cpp,
  /// where it is stated).
  void check_state(double t) const;
  bool settle(double t);
  void set_rate(std::uint32_t id, double rate, double t); ///< its rate, its links' sums, its end
  void retime(std::uint32_t id, double rate, double t);   ///< its rate and end only
  void refresh_top(); ///< moves the heap's top to its flow's end until they agree (set_rate())
  void rearm();
  void wake();
  void depart_due(double t); ///< every flow whose last byte moves by `t` leaves
  void attach(std::uint32_t id);
  void detach(std::uint32_t id);
  void depart(std::uint32_t id);
  void to_simgrid(std::uint32_t id); ///< hands it to the SimGrid reference
  void finish(std::uint32_t id);
  void finish_after_tail(std::uint32_t id); ///< finish() once its tail has passed (now, if it has none)
  /// Schedules the finishes of the transfers in leaving_: one event per date, at the turn of the
  /// first to leave, finishing them in the order they left (as one event each would).
  void schedule_leaving();
  void finish_batch(std::uint32_t batch);

  const topo::Topology& topo_;
  const topo::Platform& platform_;
  std::unique_ptr<SimgridComms> reference_; ///< fast_path false: every transfer is SimGrid's; else null
  // The routes used so far, their links one after the other in one buffer, found by GPU pair in
  // an open-addressing table (one probe, where a node-based map chases two pointers: the lookup
  // runs several times per transfer, over millions of pairs on the largest presets).
  std::vector<std::uint32_t> route_links_;
  absl::flat_hash_map<std::uint64_t, Known> known_;
  // The routes looked up last, a direct-mapped copy of a few thousand entries of known_ (small
  // enough to stay in cache, where the table does not): a step prices each pair's route and then
  // moves its transfer on it, close in time.
  struct Recent {
    std::uint64_t key = ~std::uint64_t{0}; ///< no GPU pair
    Known known;
  };
  static constexpr std::size_t kRecentRoutes = 4096;
  std::vector<Recent> recent_ = std::vector<Recent>(kRecentRoutes);
  std::vector<Resource> resources_;
  std::vector<double> link_bytes_;
  std::vector<Transfer> transfers_;
  std::vector<Fluid> fluid_; ///< by transfer
  std::vector<Hops> links_;  ///< by transfer: its route's links
  std::vector<std::uint32_t> free_transfers_;
  std::size_t active_ = 0, moving_ = 0;
  std::vector<std::uint32_t> pending_; ///< transfers of this instant, not yet placed
  std::vector<std::uint32_t> freed_;   ///< full links that ended flows left, since the last flush
  /// Transfers that left their links and finish after their tails (date, transfer), in the order they
  /// left, not yet scheduled; the pool of scheduled batches, and the one finishing now.
  std::vector<std::pair<double, std::uint32_t>> leaving_;
  absl::flat_hash_map<double, std::uint32_t> batch_of_date_; ///< schedule_leaving()'s scratch
  std::vector<std::pair<double, std::uint32_t>> made_;       ///< the batches it made: (date, batch)
  std::vector<std::vector<std::uint32_t>> batches_;
  std::vector<std::uint32_t> free_batches_, finishing_;
  bool flush_scheduled_ = false;
  // The re-solve's working set, storage kept between events.
  std::uint32_t epoch_ = 0;
  // The set's flows and the links it lists, each at its index in the solve; the newcomers.
  std::vector<std::uint32_t> set_, set_links_, seeds_;
  std::vector<Look> look_; ///< by resource
  // By the solve's link index: the set's rates on it before the re-solve, summed; the set's flows on
  // it (count_set(): a flow that joins during settle() is counted at the next solve).
  std::vector<double> set_used_;
  std::vector<std::uint32_t> set_count_;
  MaxMinSolver solver_;
  EndHeap ends_;     ///< moving flows by the date their last byte moves, or earlier (set_rate())
  TimerHandle wake_; ///< at ends_'s earliest date
  bool check_solver_ = false;
  NetworkStats stats_;
};

} // namespace xattn::sim::engine
