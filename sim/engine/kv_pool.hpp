// prefill.enabled: where each chunk's KV lives, and each instance's HBM for it. A chunk lives on
// the instance that prefilled its first block, in that instance's pool (least recently used first
// out, bounded in chunks); a chunk that a request still being served attends is pinned, as vLLM
// frees a block only once no running request holds it, so a pool whose every chunk is pinned holds
// more than its bound until one is released (the overflow is counted). Internal to sim/engine.
#pragma once

#include "sim/core/check.hpp"
#include "sim/engine/result.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <list>
#include <unordered_map>
#include <vector>

namespace xattn::sim::engine
{

class KvPool
{
public:
  using Counts = PoolCounts;

  /// `capacity`: chunks an instance's pool holds (0: unbounded).
  KvPool(int instances, std::uint64_t capacity) : capacity_(capacity), order_(instances), counts_(instances) {}

  /// The instance whose pool holds `chunk`, or -1.
  int home(std::uint64_t chunk) const
  {
    auto it = where_.find(chunk);
    return it == where_.end() ? -1 : it->second.instance;
  }
  /// `chunk` was read: the most recent of its pool.
  void use(std::uint64_t chunk)
  {
    auto it = where_.find(chunk);
    if (it == where_.end()) return;
    std::list<std::uint64_t>& order = order_[it->second.instance];
    order.splice(order.begin(), order, it->second.at);
  }
  /// `chunk` was prefilled on `instance`: it lives there now, the least recent unpinned chunks
  /// out while the pool is over its bound. REQUIRES: home(chunk) == -1.
  void place(int instance, std::uint64_t chunk)
  {
    XATTN_CHECK(home(chunk) < 0, "a chunk is placed in two pools");
    std::list<std::uint64_t>& order = order_[instance];
    order.push_front(chunk);
    where_[chunk] = {instance, order.begin()};
    Counts& c = counts_[instance];
    if (capacity_ > 0 && order.size() > capacity_) {
      for (auto it = std::prev(order.end()); order.size() > capacity_;) {
        const bool first = it == order.begin();
        auto victim = it;
        if (!first) --it;
        if (pins_.count(*victim) == 0) {
          where_.erase(*victim);
          order.erase(victim);
          ++c.evictions;
        }
        if (first) break;
      }
      if (order.size() > capacity_) ++c.overflows;
    }
    c.peak = std::max<std::uint64_t>(c.peak, order.size());
  }
  /// A request being served attends `chunk` (pinned while any does).
  void pin(std::uint64_t chunk) { ++pins_[chunk]; }
  void unpin(std::uint64_t chunk)
  {
    auto it = pins_.find(chunk);
    XATTN_CHECK(it != pins_.end(), "a chunk is unpinned more often than pinned");
    if (--it->second == 0) pins_.erase(it);
  }
  Counts& counts(int instance) { return counts_[instance]; }
  const std::vector<Counts>& counts() const { return counts_; }
  std::uint64_t capacity() const { return capacity_; }

private:
  struct Entry {
    int instance = 0;
    std::list<std::uint64_t>::iterator at;
  };
  std::uint64_t capacity_;
  std::vector<std::list<std::uint64_t>> order_; ///< per instance, most recent first
  std::unordered_map<std::uint64_t, Entry> where_;
  std::unordered_map<std::uint64_t, int> pins_;
  std::vector<Counts> counts_;
};

} // namespace xattn::sim::engine
