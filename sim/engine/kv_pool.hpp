// prefill.enabled: where each chunk's KV lives, and each instance's HBM for it. Every instance that
// prefilled a chunk keeps it in its pool, as each vLLM instance keeps its own prefix cache (least
// recently used first out, bounded in chunks); a chunk that a request still being served attends
// is pinned, as vLLM frees a block only once no running request holds it, so a pool whose every
// chunk is pinned holds more than its bound until one is released (the overflow is counted).
// With a host tier (prefill.host_capacity), a chunk evicted from an instance's pool goes to that
// instance's share of its node's CPU memory, least recently used out again, where only that
// instance finds it (as vLLM's KV offloading keeps each engine's own); a chunk read back from it
// leaves it for the pool.
// Internal to sim/engine.
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

  /// `capacity`: chunks an instance's pool holds (0: unbounded); `host`: chunks each instance's
  /// host tier holds (empty or 0: none).
  KvPool(int instances, std::uint64_t capacity, std::vector<std::uint64_t> host = {})
      : capacity_(capacity), order_(instances), counts_(instances), host_capacity_(std::move(host)),
        host_order_(instances), host_at_(instances)
  {
    host_capacity_.resize(instances, 0);
  }

  /// Whether `instance`'s pool holds `chunk`.
  bool holds(int instance, std::uint64_t chunk) const { return find(instance, chunk) != nullptr; }
  /// An instance whose pool holds `chunk`: `prefer` when it does, else the one that has held it
  /// longest; -1 when none does.
  int home(std::uint64_t chunk, int prefer) const
  {
    auto it = where_.find(chunk);
    if (it == where_.end()) return -1;
    return holds(prefer, chunk) ? prefer : it->second.front().instance;
  }
  /// Every instance whose pool holds `chunk` (empty: none), in the order they came to hold it.
  template <typename F>
  void for_each_home(std::uint64_t chunk, F&& f) const
  {
    if (auto it = where_.find(chunk); it != where_.end())
      for (const Entry& e : it->second)
        f(e.instance);
  }
  /// `chunk` was read on `instance`'s pool: its most recent.
  void use(int instance, std::uint64_t chunk)
  {
    if (const Entry* e = find(instance, chunk); e != nullptr)
      order_[instance].splice(order_[instance].begin(), order_[instance], e->at);
  }
  /// `chunk` was prefilled on `instance`: its pool holds it now, the least recent unpinned chunks
  /// out while the pool is over its bound. REQUIRES: !holds(instance, chunk).
  void place(int instance, std::uint64_t chunk)
  {
    XATTN_CHECK(!holds(instance, chunk), "a chunk is placed twice in one pool");
    std::list<std::uint64_t>& order = order_[instance];
    order.push_front(chunk);
    where_[chunk].push_back({instance, order.begin()});
    Counts& c = counts_[instance];
    // From the least recent up to, not including, the chunk being placed.
    for (auto it = std::prev(order.end()); capacity_ > 0 && order.size() > capacity_ && it != order.begin();) {
      auto victim = it--;
      if (pins_.count(*victim) != 0) continue;
      drop(instance, *victim);
      to_host(instance, *victim);
      order.erase(victim);
      ++c.evictions;
    }
    if (capacity_ > 0 && order.size() > capacity_) ++c.overflows;
    c.peak = std::max<std::uint64_t>(c.peak, order.size());
  }
  /// Whether `instance`'s host tier holds `chunk`.
  bool in_host(int instance, std::uint64_t chunk) const { return host_at_[instance].count(chunk) != 0; }
  /// Every instance whose host tier holds `chunk`.
  template <typename F>
  void for_each_host_home(std::uint64_t chunk, F&& f) const
  {
    if (auto it = host_where_.find(chunk); it != host_where_.end())
      for (int i : it->second)
        f(i);
  }
  /// `chunk` read back from `instance`'s host tier into its pool. REQUIRES: in_host(instance, chunk).
  void restore(int instance, std::uint64_t chunk)
  {
    auto it = host_at_[instance].find(chunk);
    XATTN_CHECK(it != host_at_[instance].end(), "a chunk is read back from a host tier that does not hold it");
    host_order_[instance].erase(it->second);
    host_at_[instance].erase(it);
    host_forget(instance, chunk);
    ++counts_[instance].host_reads;
    place(instance, chunk);
  }
  /// Chunks each instance's host tier holds (0: no tier).
  std::uint64_t host_capacity(int instance) const { return host_capacity_[instance]; }
  /// A request being served attends `chunk`: no pool drops it while any does.
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
  const Entry* find(int instance, std::uint64_t chunk) const
  {
    auto it = where_.find(chunk);
    if (it == where_.end()) return nullptr;
    for (const Entry& e : it->second)
      if (e.instance == instance) return &e;
    return nullptr;
  }
  // An evicted chunk to the instance's host tier, whose least recent chunk falls out past its bound.
  void to_host(int instance, std::uint64_t chunk)
  {
    const std::uint64_t bound = host_capacity_[instance];
    if (bound == 0) return;
    std::list<std::uint64_t>& order = host_order_[instance];
    order.push_front(chunk);
    host_at_[instance][chunk] = order.begin();
    host_where_[chunk].push_back(instance);
    if (order.size() > bound) {
      host_at_[instance].erase(order.back());
      host_forget(instance, order.back());
      order.pop_back();
      ++counts_[instance].host_evictions;
    }
    counts_[instance].host_peak = std::max<std::uint64_t>(counts_[instance].host_peak, order.size());
  }
  void host_forget(int instance, std::uint64_t chunk)
  {
    auto it = host_where_.find(chunk);
    std::vector<int>& homes = it->second;
    homes.erase(std::find(homes.begin(), homes.end(), instance));
    if (homes.empty()) host_where_.erase(it);
  }
  void drop(int instance, std::uint64_t chunk)
  {
    auto it = where_.find(chunk);
    std::vector<Entry>& homes = it->second;
    homes.erase(std::find_if(homes.begin(), homes.end(), [&](const Entry& e) { return e.instance == instance; }));
    if (homes.empty()) where_.erase(it);
  }
  std::uint64_t capacity_;
  std::vector<std::list<std::uint64_t>> order_; ///< per instance, most recent first
  std::unordered_map<std::uint64_t, std::vector<Entry>> where_;
  std::unordered_map<std::uint64_t, int> pins_;
  std::vector<Counts> counts_;
  std::vector<std::uint64_t> host_capacity_;         ///< per instance, chunks
  std::vector<std::list<std::uint64_t>> host_order_; ///< per instance, most recent first
  std::vector<std::unordered_map<std::uint64_t, std::list<std::uint64_t>::iterator>> host_at_;
  std::unordered_map<std::uint64_t, std::vector<int>> host_where_; ///< chunk -> instances whose tier holds it
};

} // namespace xattn::sim::engine
