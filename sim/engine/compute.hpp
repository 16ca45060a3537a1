// A GPU's compute as its kernels share it (docs/architecture.md): each kernel occupies a share of
// the GPU (the SMs its grid fills; a measured profile's 1 / compute_concurrency) and runs at its
// own full speed while the shares of the kernels running sum to at most 1; past that every kernel
// slows by the same factor, 1 / (sum of shares), so the GPU never does more than one GPU's work
// (processor sharing, as a SimGrid host shares its executions: equal shares of 1/n reproduce a host
// with n cores). Kept as our own event-driven model because each kernel is two timer events here,
// against a SimGrid exec's far higher cost at millions of kernels.
//
// Also the staging-copy pool: K streams, first come first served.
#pragma once

#include "sim/engine/clock.hpp"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

namespace xattn::sim::engine
{

struct ComputeStats {
  std::uint64_t kernels = 0;
  double busy_s = 0;  ///< time with at least one kernel running
  double work_s = 0;  ///< sum of kernels' full-speed durations
  double gpu_s = 0;   ///< GPU time the kernels used: the sum of full-speed duration x share
  double delay_s = 0; ///< sum over kernels of (finish - submit - work): sharing delay
  int max_concurrent = 0;
};

class ComputeUnit
{
public:
  ComputeUnit() = default;
  /// Starts a kernel of `work_s` seconds at full speed, occupying `share` of the GPU, now; `done`
  /// runs when it finishes. REQUIRES: work_s >= 0, finite; 0 < share <= 1.
  void submit(double work_s, double share, Callback done);
  const ComputeStats& stats() const { return stats_; }
  int running() const { return static_cast<int>(active_.size()); }
  /// How many times slower than alone a kernel occupying `share` of the GPU would run if it
  /// started now, while the kernels running now run: the shares past a full GPU, at least 1.
  double slowdown(double share) const { return std::max(1.0, shares_ + share); }

private:
  struct Kernel {
    double remaining, submitted, work, share;
    Callback done;
  };
  double rate() const;
  void advance();
  void reschedule();
  void on_next();

  std::vector<Kernel> active_;
  double shares_ = 0; ///< sum of the running kernels' shares
  double last_ = 0;
  TimerHandle next_ = nullptr;
  ComputeStats stats_;
};

struct StreamStats {
  std::uint64_t copies = 0;
  double wait_s = 0; ///< total time copies waited for a free stream
  int max_queue = 0;
};

class StreamPool
{
public:
  /// REQUIRES: streams > 0.
  explicit StreamPool(int streams);
  /// Calls `granted` now if a stream is free, else when one is released (FIFO).
  void acquire(Callback granted);
  /// REQUIRES: a stream acquired and not yet released.
  void release();
  const StreamStats& stats() const { return stats_; }
  /// Copies waiting for a free stream now.
  int waiting() const { return static_cast<int>(waiting_.size()); }
  /// How many copies' time a copy asked for now, after `more` others, waits for a stream, the
  /// streams sharing what is ahead of it: (copying + waiting + more + 1 - streams) / streams, or 0
  /// where a stream is left for it.
  double ahead(int more = 0) const
  {
    const int queued = streams_ - free_ + static_cast<int>(waiting_.size()) + more;
    return std::max(0.0, static_cast<double>(queued + 1 - streams_) / streams_);
  }

private:
  struct Waiter {
    double since;
    Callback granted;
  };
  int streams_, free_;
  std::deque<Waiter> waiting_;
  StreamStats stats_;
};

} // namespace xattn::sim::engine
