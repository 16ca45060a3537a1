#include "sim/engine/clock.hpp"

#include <simgrid/kernel/Timer.hpp>

#include <algorithm>
#include <vector>

namespace xattn::sim::engine
{
namespace
{
// The process's event queue. Slots hold the callbacks (reused through a free list); the heap holds
// (date, order scheduled, slot, generation): an entry whose slot has moved on to another
// generation was cancelled, and is dropped when it reaches the top.
struct Slot {
  Callback fn;
  double date = 0;
  std::uint32_t generation = 0;
};
struct Entry {
  double date;
  std::uint64_t order;
  std::uint32_t slot, generation;
};
// The earliest on top, the same date in the order scheduled (a std heap keeps its greatest on top).
// A type, not a function: the heap's algorithms inline it.
struct Later {
  bool operator()(const Entry& a, const Entry& b) const
  {
    return a.date > b.date || (a.date == b.date && a.order > b.order);
  }
};
constexpr Later later;

struct Queue {
  std::vector<Slot> slots;
  std::vector<std::uint32_t> free;
  std::vector<Entry> heap;
  std::uint64_t order = 0;
  std::size_t dead = 0;                           ///< cancelled entries still in the heap
  simgrid::kernel::timer::Timer* armed = nullptr; ///< SimGrid's timer, at `armed_date`
  double armed_date = 0;
  bool running = false; ///< inside run_due(): it arms once the date's events ran

  bool live(const Entry& e) const { return slots[e.slot].generation == e.generation; }
  void drop_dead()
  {
    while (!heap.empty() && !live(heap.front())) {
      std::pop_heap(heap.begin(), heap.end(), later);
      heap.pop_back();
      --dead;
    }
  }
  /// A cancelled entry waits in the heap until its date; where they outnumber the live ones (a
  /// holder's next kernel end moves at every submit), they go at once.
  void compact()
  {
    if (2 * dead <= heap.size() || heap.size() < 64) return;
    std::erase_if(heap, [this](const Entry& e) { return !live(e); });
    std::make_heap(heap.begin(), heap.end(), later);
    dead = 0;
  }
  /// SimGrid's timer at the earliest live date, unless it is there already.
  void arm()
  {
    if (clock_detail::own) return; // run_events() runs the queue
    drop_dead();
    if (heap.empty()) return; // an armed timer left behind finds nothing due, and stops
    const double date = heap.front().date;
    if (armed != nullptr && armed_date == date) return;
    if (armed != nullptr) armed->remove();
    armed_date = date;
    armed = simgrid::kernel::timer::Timer::set(date, [this] {
      armed = nullptr;
      run_due();
    });
  }
  /// Every event due now, those they schedule for now included, in date and scheduling order.
  void run_due()
  {
    running = true;
    try {
      const double t = now();
      for (drop_dead(); !heap.empty() && heap.front().date <= t; drop_dead()) {
        const Entry e = heap.front();
        std::pop_heap(heap.begin(), heap.end(), later);
        heap.pop_back();
        Slot& s = slots[e.slot];
        Callback fn = std::move(s.fn);
        s.fn = nullptr;
        ++s.generation;
        free.push_back(e.slot);
        fn();
      }
    } catch (...) {
      // A check failed inside an event: the run ends with it, and the queue starts empty again.
      *this = Queue{};
      throw;
    }
    running = false;
    arm();
  }
};

Queue& queue()
{
  static Queue q;
  return q;
}
} // namespace

void run_events()
{
  Queue& q = queue();
  if (q.armed != nullptr) {
    q.armed->remove();
    q.armed = nullptr;
  }
  clock_detail::date = now();
  clock_detail::own = true;
  for (q.drop_dead(); !q.heap.empty(); q.drop_dead()) {
    clock_detail::date = q.heap.front().date;
    q.run_due();
  }
}

TimerHandle at(double date, Callback fn)
{
  XATTN_CHECK(date >= now(), "an event scheduled in the past");
  Queue& q = queue();
  std::uint32_t slot = 0;
  if (!q.free.empty()) {
    slot = q.free.back();
    q.free.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(q.slots.size());
    q.slots.emplace_back();
  }
  Slot& s = q.slots[slot];
  s.fn = std::move(fn);
  s.date = date;
  q.heap.push_back({date, q.order++, slot, s.generation});
  std::push_heap(q.heap.begin(), q.heap.end(), later);
  if (!q.running && (q.armed == nullptr || date < q.armed_date)) q.arm();
  return {slot + 1, s.generation};
}

void cancel(TimerHandle& t)
{
  if (t.slot_ != 0) {
    Queue& q = queue();
    Slot& s = q.slots[t.slot_ - 1];
    if (s.generation == t.generation_) {
      s.fn = nullptr;
      ++s.generation; // its heap entry is dead now
      q.free.push_back(t.slot_ - 1);
      ++q.dead;
      q.compact();
    }
  }
  t = nullptr;
}

double TimerHandle::date() const
{
  XATTN_CHECK(slot_ != 0, "the date of a null event");
  const Slot& s = queue().slots[slot_ - 1];
  XATTN_CHECK(s.generation == generation_, "the date of an event that ran or was cancelled");
  return s.date;
}

} // namespace xattn::sim::engine
