// The engine's reference network: transfers moved by SimGrid's own comms (engine.fast_path false),
// against which the fluid solver of network.hpp is checked. One comm per equal flow of a transfer
// (its thread blocks, or its streams where the link bounds it), started at once, with the
// transfer's bandwidth factor where the link bounds it; SimGrid's max-min model (CM02, its lazy
// update) shares the links. Network hands it each transfer and hears back when its last comm
// completed. Internal to sim/engine.
#pragma once

#include "topologies/platform.hpp"

#include <simgrid/s4u/Comm.hpp>

#include <cstdint>
#include <functional>
#include <vector>

namespace xattn::sim::engine
{

class SimgridComms
{
public:
  /// What a transfer is, as its comms need it.
  struct Spec {
    topo::GpuId src = 0, dst = 0;
    int src_rail = -1, dst_rail = -1; ///< the NIC whose relay endpoint each end uses, -1: its own
    bool link_bound = false;          ///< the link, not the blocks, bounds it: one comm per stream, no dispatch cap
    double factor = 1;                ///< payload per unit of link capacity (applied where link-bound)
    int flows = 1;                    ///< its equal flows
    double payload = 0;               ///< bytes
  };
  struct Counts {
    std::uint64_t comms = 0; ///< launched
    std::uint64_t max_in_flight = 0;
    double bytes_handed = 0, bytes_completed = 0; ///< payloads launched, and reported complete
  };
  /// `landed(id, bytes)`: transfer `id`'s last comm completed; its comms moved `bytes` in all.
  /// One instance per process (SimGrid's completion signal is process-wide).
  SimgridComms(const topo::Platform& platform, std::function<void(std::uint32_t, double)> landed);
  ~SimgridComms();
  SimgridComms(const SimgridComms&) = delete;
  SimgridComms& operator=(const SimgridComms&) = delete;

  /// Starts transfer `id`'s comms: whole bytes, split evenly over its flows (at most one per byte).
  /// Returns the bytes they move; 0: none started (under one byte), and `landed` is never called.
  std::uint64_t start(std::uint32_t id, const Spec& t);
  /// Calls `fn(id, bytes)` with what each transfer's comms have still to move, as SimGrid's lazy
  /// model knows it now, read without updating it (an update would change how SimGrid rounds the
  /// rest of the run).
  void for_each_left(const std::function<void(std::uint32_t, double)>& fn) const;
  /// Transfer `id` finished: its comms are released once no completion signal is running.
  void retire(std::uint32_t id);
  const Counts& counts() const { return counts_; }

private:
  void on_done(const simgrid::s4u::Activity& a);
  /// A transfer's comms in flight.
  struct InFlight {
    int left = 0; ///< comms not completed
    double moved = 0;
    std::vector<simgrid::s4u::CommPtr> comms;
    std::vector<double> bytes; ///< by comm
  };
  const topo::Platform& platform_;
  std::function<void(std::uint32_t, double)> landed_;
  std::vector<InFlight> transfers_; ///< by transfer id
  std::uint64_t in_flight_ = 0;     ///< comms
  // Comms of finished transfers: released at the next start or completion, never inside a
  // completion signal that may be firing one of them.
  std::vector<simgrid::s4u::CommPtr> retired_;
  bool in_completion_ = false;
  Counts counts_;
};

} // namespace xattn::sim::engine
