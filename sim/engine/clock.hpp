// Events on SimGrid's clock, or on the queue's own. The engine keeps its own queue of dated
// callbacks (a binary heap, same-date events in the order they were scheduled). Where SimGrid
// moves comms (engine.fast_path false) the queue holds one SimGrid kernel timer, at the earliest
// date: SimGrid advances the clock and interleaves its comms, while a date's events run in one
// pass without a SimGrid timer, allocation and main-loop round each. Where it moves nothing,
// run_events() runs the queue itself, with no SimGrid timer nor main-loop round at all, and now()
// reads the queue's clock (docs/architecture.md, "Speed"). One simulation per process: the queue
// and its clock are the process's.
#pragma once

#include "sim/engine/callback.hpp"

#include "sim/core/check.hpp"

#include <simgrid/s4u/Engine.hpp>

#include <cstdint>
#include <functional>
#include <utility>

namespace xattn::sim::engine
{

namespace clock_detail
{
inline bool own = false; ///< run_events() runs the queue: now() is `date`
inline double date = 0;
} // namespace clock_detail

inline double now()
{
  return clock_detail::own ? clock_detail::date : simgrid::s4u::Engine::get_clock();
}

/// Runs every event in date order, those they schedule included, until none is left, on the
/// queue's own clock from SimGrid's date now, without SimGrid: for a run that hands SimGrid no
/// activity (its clock would only follow the queue's). From then on now() reads that clock; at the
/// end it is the last event's date.
void run_events();

/// A scheduled event, to cancel it or read its date; null by default and once it ran or was
/// cancelled.
class TimerHandle
{
public:
  TimerHandle() = default;
  TimerHandle(std::nullptr_t) {} // NOLINT(google-explicit-constructor): `handle = nullptr` clears it
  explicit operator bool() const { return slot_ != 0; }
  bool operator==(std::nullptr_t) const { return slot_ == 0; }
  /// When it runs. REQUIRES: not null, not yet run nor cancelled.
  double date() const;

private:
  friend TimerHandle at(double date, Callback fn);
  friend void cancel(TimerHandle& t);
  TimerHandle(std::uint32_t slot, std::uint32_t generation) : slot_(slot), generation_(generation) {}
  std::uint32_t slot_ = 0; ///< 1 + its slot in the queue; 0: null
  std::uint32_t generation_ = 0;
};

/// Runs `fn` at `date`. REQUIRES: date >= now().
TimerHandle at(double date, Callback fn);

/// Runs `fn` at now() + delay_s. REQUIRES: delay_s >= 0 (simulated time never goes backwards).
inline TimerHandle after(double delay_s, Callback fn)
{
  XATTN_CHECK(delay_s >= 0, "an event scheduled in the past");
  return at(now() + delay_s, std::move(fn));
}

/// Cancels the event if it has not run, and makes the handle null.
void cancel(TimerHandle& t);

} // namespace xattn::sim::engine
