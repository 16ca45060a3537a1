// A requester GPU's own kernels (its rounds' tails, its experts, its splices and re-prefills), run
// one after another. On a GPU that serves no calls, or with engine.interference off, each runs at
// full speed from when the one before it ends. On a GPU that also holds chunks and serves calls
// for other requesters (engine.interference), each fills the GPU on that GPU's ComputeUnit and
// shares it with the routed kernels there (compute.hpp): both slow down while they overlap, which
// is what routing a query to a peer that is serving too costs. Internal to sim/engine.
#pragma once

#include "sim/engine/clock.hpp"
#include "sim/engine/compute.hpp"

#include <algorithm>
#include <deque>
#include <span>

namespace xattn::sim::engine
{

class OwnCompute
{
public:
  /// `shared`: the ComputeUnit of this GPU where its own kernels share it with the calls it
  /// serves; null: they run alone.
  explicit OwnCompute(ComputeUnit* shared = nullptr) : shared_(shared) {}
  OwnCompute(const OwnCompute&) = delete;
  OwnCompute& operator=(const OwnCompute&) = delete;
  // Movable only before its first kernel: a kernel on a shared GPU ends in a callback that holds
  // `this`.
  OwnCompute(OwnCompute&&) = default;
  OwnCompute& operator=(OwnCompute&&) = default;

  /// Runs `work` seconds of the GPU's own compute (at full speed) once the kernels queued before
  /// it have ended, then `done`.
  void run(double work, Callback done);
  /// Runs `work` on every rank of an instance, which steps in lockstep: alone, every rank starts
  /// it once the busiest rank's queue is empty (together_start()); sharing, each rank after its
  /// own queue. Then `done`, once every rank ended it.
  static void run_together(std::span<OwnCompute> ranks, double work, Callback done);
  /// When the ranks' queues are all empty at full speed: where run_together() starts now.
  static double together_start(std::span<const OwnCompute> ranks);
  /// Fault injection only (prefill-overlap): runs `work` at once, beside whatever is queued.
  void run_unqueued(double work, Callback done);

  /// When the kernels queued so far end at full speed (sharing: at least then).
  double free_at() const { return free_at_; }
  /// When a kernel run now starts at full speed (sharing: at least then).
  double next_start() const { return std::max(now(), free_at_); }
  /// The full-speed time of the kernels run, s.
  double busy() const { return busy_; }
  /// Sharing: how much longer its kernels took than at full speed, summed, s.
  double delay() const { return delay_; }
  bool shared() const { return shared_ != nullptr; }

private:
  struct Pending {
    double work;
    Callback done;
  };
  void start_next();
  /// How long after `t` the busiest of `ranks` has its queue empty, at full speed.
  static double wait_of(std::span<const OwnCompute> ranks, double t);

  ComputeUnit* shared_ = nullptr;
  double free_at_ = 0, busy_ = 0, delay_ = 0;
  std::deque<Pending> queue_; ///< sharing: the kernels waiting for the one running
  bool running_ = false;
};

} // namespace xattn::sim::engine
