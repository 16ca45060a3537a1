// The dates at which moving flows end, earliest first: a 4-ary min-heap indexed by flow, so that a
// re-solve moves a flow's date in O(log n) with no allocation (an event per flow would
// be rescheduled on every rate change). The network keeps one event, at the earliest date.
#pragma once

#include "sim/core/check.hpp"

#include <cstdint>
#include <utility>
#include <vector>

namespace xattn::sim::engine
{

class EndHeap
{
public:
  static constexpr std::uint32_t kAbsent = ~std::uint32_t{0};

  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  std::uint32_t top() const { return heap_.front().second; }
  double top_date() const { return heap_.front().first; }
  bool contains(std::uint32_t id) const { return id < pos_.size() && pos_[id] != kAbsent; }
  double date(std::uint32_t id) const { return heap_[pos_[id]].first; }

  /// Puts `id` in at `date`, or moves it there.
  void set(std::uint32_t id, double date)
  {
    if (id >= pos_.size()) pos_.resize(id + 1, kAbsent);
    if (pos_[id] == kAbsent) {
      pos_[id] = static_cast<std::uint32_t>(heap_.size());
      heap_.emplace_back(date, id);
      up(pos_[id]);
      return;
    }
    const std::uint32_t i = pos_[id];
    const double old = heap_[i].first;
    heap_[i].first = date;
    if (date < old)
      up(i);
    else
      down(i);
  }

  void erase(std::uint32_t id)
  {
    XATTN_CHECK(contains(id), "a flow leaves the end dates it is not in");
    const std::uint32_t i = pos_[id];
    pos_[id] = kAbsent;
    const auto last = static_cast<std::uint32_t>(heap_.size() - 1);
    if (i != last) {
      const std::uint32_t moved = heap_[last].second;
      place(i, heap_[last]);
      heap_.pop_back();
      up(i);
      down(pos_[moved]);
    } else {
      heap_.pop_back();
    }
  }

private:
  static constexpr std::uint32_t kArity = 4;

  void place(std::uint32_t i, std::pair<double, std::uint32_t> e)
  {
    heap_[i] = e;
    pos_[e.second] = i;
  }
  void up(std::uint32_t i)
  {
    const auto e = heap_[i];
    while (i > 0) {
      const std::uint32_t parent = (i - 1) / kArity;
      if (!(e.first < heap_[parent].first)) break;
      place(i, heap_[parent]);
      i = parent;
    }
    place(i, e);
  }
  void down(std::uint32_t i)
  {
    const auto e = heap_[i];
    const auto n = static_cast<std::uint32_t>(heap_.size());
    for (;;) {
      const std::uint32_t first = i * kArity + 1;
      if (first >= n) break;
      std::uint32_t best = first;
      for (std::uint32_t c = first + 1; c < first + kArity && c < n; ++c)
        if (heap_[c].first < heap_[best].first) best = c;
      if (!(heap_[best].first < e.first)) break;
      place(i, heap_[best]);
      i = best;
    }
    place(i, e);
  }

  std::vector<std::pair<double, std::uint32_t>> heap_; ///< (date, flow)
  std::vector<std::uint32_t> pos_;                     ///< by flow: its index in heap_, or kAbsent
};

} // namespace xattn::sim::engine
