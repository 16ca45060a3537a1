// A GPU's compute as the holder elbow needs it (docs/architecture.md): up to `slots` kernels run at
// full speed at once; past that they share the GPU equally (processor sharing: each of n kernels
// runs at slots / n of full speed), exactly as a SimGrid host with `slots` cores shares its
// executions. Kept as our own event-driven model because each kernel is two timer events here,
// against a SimGrid exec's far higher cost at millions of kernels.
//
// Also the staging-copy pool: K streams, first come first served.
#pragma once

#include "sim/engine/clock.hpp"

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
  double delay_s = 0; ///< sum over kernels of (finish - submit - work): sharing delay
  int max_concurrent = 0;
};

class ComputeUnit
{
public:
  /// REQUIRES: slots > 0.
  explicit ComputeUnit(int slots);
  /// Starts a kernel of `work_s` seconds at full speed now; `done` runs when it finishes.
  /// REQUIRES: work_s >= 0, finite.
  void submit(double work_s, std::function<void()> done);
  const ComputeStats& stats() const { return stats_; }
  int running() const { return static_cast<int>(active_.size()); }

private:
  struct Kernel {
    double remaining, submitted, work;
    std::function<void()> done;
  };
  double rate() const;
  void advance();
  void reschedule();
  void on_next();

  int slots_;
  std::vector<Kernel> active_;
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
  void acquire(std::function<void()> granted);
  /// REQUIRES: a stream acquired and not yet released.
  void release();
  const StreamStats& stats() const { return stats_; }
  /// Copies waiting for a free stream now.
  int waiting() const { return static_cast<int>(waiting_.size()); }

private:
  struct Waiter {
    double since;
    std::function<void()> granted;
  };
  int streams_, free_;
  std::deque<Waiter> waiting_;
  StreamStats stats_;
};

} // namespace xattn::sim::engine
