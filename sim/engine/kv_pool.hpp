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
#include <utility>
#include <vector>

namespace xattn::sim::engine
{

/// One tier of chunk copies (the HBM pools, or the host tiers): per instance its chunks, most
/// recently used first, and for each chunk the instances holding a copy, in the order they came to.
class KvTier
{
public:
  explicit KvTier(int instances) : order_(instances) {}

  bool holds(int instance, std::uint64_t chunk) const { return find(instance, chunk) != nullptr; }
  /// The instance that has held `chunk` longest; -1 when none does.
  int oldest(std::uint64_t chunk) const
  {
    auto it = where_.find(chunk);
    return it == where_.end() ? -1 : it->second.front().instance;
  }
  template <typename F>
  void for_each_home(std::uint64_t chunk, F&& f) const
  {
    if (auto it = where_.find(chunk); it != where_.end())
      for (const Entry& e : it->second)
        f(e.instance);
  }
  /// `chunk` the most recent of `instance`'s, if it holds it.
  void use(int instance, std::uint64_t chunk)
  {
    if (const Entry* e = find(instance, chunk); e != nullptr)
      order_[instance].splice(order_[instance].begin(), order_[instance], e->at);
  }
  /// `instance` holds `chunk` now, its most recent. REQUIRES: !holds(instance, chunk).
  void add(int instance, std::uint64_t chunk)
  {
    order_[instance].push_front(chunk);
    where_[chunk].push_back({instance, order_[instance].begin()});
  }
  /// `instance` no longer holds the chunk at `at` of its order.
  void remove(int instance, std::list<std::uint64_t>::iterator at)
  {
    auto it = where_.find(*at);
    std::vector<Entry>& homes = it->second;
    homes.erase(std::find_if(homes.begin(), homes.end(), [&](const Entry& e) { return e.instance == instance; }));
    if (homes.empty()) where_.erase(it);
    order_[instance].erase(at);
  }
  /// REQUIRES: holds(instance, chunk).
  void remove(int instance, std::uint64_t chunk) { remove(instance, find(instance, chunk)->at); }
  std::list<std::uint64_t>& order(int instance) { return order_[instance]; }

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
  std::vector<std::list<std::uint64_t>> order_;
  std::unordered_map<std::uint64_t, std::vector<Entry>> where_;
};

class KvPool
{
public:
  using Counts = PoolCounts;

  /// `capacity`: chunks an instance's pool holds (0: unbounded); `host`: chunks each instance's
  /// host tier holds (empty or 0: none).
  KvPool(int instances, std::uint64_t capacity, std::vector<std::uint64_t> host = {})
      : capacity_(capacity), pools_(instances), host_(instances), counts_(instances), host_capacity_(std::move(host))
  {
    host_capacity_.resize(instances, 0);
  }

  /// Whether `instance`'s pool holds `chunk`.
  bool holds(int instance, std::uint64_t chunk) const { return pools_.holds(instance, chunk); }
  /// An instance whose pool holds `chunk`: `prefer` when it does, else the one that has held it
  /// longest; -1 when none does.
  int home(std::uint64_t chunk, int prefer) const { return holds(prefer, chunk) ? prefer : pools_.oldest(chunk); }
  /// Every instance whose pool holds `chunk` (empty: none), in the order they came to hold it.
  template <typename F>
  void for_each_home(std::uint64_t chunk, F&& f) const
  {
    pools_.for_each_home(chunk, std::forward<F>(f));
  }
  /// `chunk` was read on `instance`'s pool: its most recent.
  void use(int instance, std::uint64_t chunk) { pools_.use(instance, chunk); }
  /// `chunk` was prefilled on `instance`: its pool holds it now, the least recent unpinned chunks
  /// out (to its host tier, if any) while the pool is over its bound. REQUIRES: !holds(instance, chunk).
  void place(int instance, std::uint64_t chunk)
  {
    XATTN_CHECK(!holds(instance, chunk), "a chunk is placed twice in one pool");
    pools_.add(instance, chunk);
    std::list<std::uint64_t>& order = pools_.order(instance);
    Counts& c = counts_[instance];
    // From the least recent up to, not including, the chunk being placed.
    for (auto it = std::prev(order.end()); capacity_ > 0 && order.size() > capacity_ && it != order.begin();) {
      auto victim = it--;
      if (pins_.count(*victim) != 0) continue;
      to_host(instance, *victim);
      pools_.remove(instance, victim);
      ++c.evictions;
    }
    if (capacity_ > 0 && order.size() > capacity_) ++c.overflows;
    c.peak = std::max<std::uint64_t>(c.peak, order.size());
  }
  /// Whether `instance`'s host tier holds `chunk`.
  bool in_host(int instance, std::uint64_t chunk) const { return host_.holds(instance, chunk); }
  /// Every instance whose host tier holds `chunk`.
  template <typename F>
  void for_each_host_home(std::uint64_t chunk, F&& f) const
  {
    host_.for_each_home(chunk, std::forward<F>(f));
  }
  /// `chunk` read back from `instance`'s host tier into its pool. REQUIRES: in_host(instance, chunk).
  void restore(int instance, std::uint64_t chunk)
  {
    XATTN_CHECK(in_host(instance, chunk), "a chunk is read back from a host tier that does not hold it");
    host_.remove(instance, chunk);
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
  // An evicted chunk to the instance's host tier, whose least recent chunk falls out past its bound.
  void to_host(int instance, std::uint64_t chunk)
  {
    const std::uint64_t bound = host_capacity_[instance];
    if (bound == 0) return;
    host_.add(instance, chunk);
    std::list<std::uint64_t>& order = host_.order(instance);
    if (order.size() > bound) {
      host_.remove(instance, std::prev(order.end()));
      ++counts_[instance].host_evictions;
    }
    counts_[instance].host_peak = std::max<std::uint64_t>(counts_[instance].host_peak, order.size());
  }
  std::uint64_t capacity_;
  KvTier pools_, host_;
  std::unordered_map<std::uint64_t, int> pins_;
  std::vector<Counts> counts_;
  std::vector<std::uint64_t> host_capacity_; ///< per instance, chunks
};

} // namespace xattn::sim::engine
