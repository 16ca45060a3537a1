// A requester's cache of moved KV (fetched or re-prefilled), least recently used first out,
// bounded by an HBM budget in bytes. Keys are chunk ids (dense) or block ids (sparse gathers).
// The most it ever held (peak) is what the invariant caches_within_budget checks at the end of a
// run (docs/architecture.md, "Invariants").
#pragma once

#include "sim/core/check.hpp"
#include "sim/core/fault.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <list>
#include <unordered_map>
#include <vector>

namespace xattn::sim::engine
{

class LruCache
{
public:
  explicit LruCache(double budget_B) : budget_(budget_B) {}
  /// True (and marks it most recent) when `key` is cached.
  bool touch(std::uint64_t key)
  {
    auto it = index_.find(key);
    if (it == index_.end()) return false;
    order_.splice(order_.begin(), order_, it->second);
    return true;
  }
  bool contains(std::uint64_t key) const { return index_.count(key) != 0; }
  /// Inserts `key` of `bytes`, evicting the least recent entries to fit (their keys appended to
  /// `evicted` when given). An entry larger than the whole budget is not kept (it is paid again
  /// next time). REQUIRES: bytes >= 0, finite.
  void insert(std::uint64_t key, double bytes, std::vector<std::uint64_t>* evicted = nullptr)
  {
    XATTN_CHECK(bytes >= 0 && std::isfinite(bytes), "a cache entry has a size");
    if (bytes > budget_ || touch(key)) return;
    while (used_ + bytes > budget_ && !order_.empty()) {
      if (XATTN_FAULT(kCacheOverBudget)) break; // in without room
      if (evicted != nullptr) evicted->push_back(order_.back().first);
      used_ -= order_.back().second;
      index_.erase(order_.back().first);
      order_.pop_back();
      ++evictions_;
    }
    order_.emplace_front(key, bytes);
    index_[key] = order_.begin();
    used_ += bytes;
    peak_ = std::max(peak_, used_);
  }
  double used() const { return used_; }
  /// The most bytes held at once, B.
  double peak() const { return peak_; }
  double budget() const { return budget_; }
  std::uint64_t evictions() const { return evictions_; }

private:
  double budget_;
  double used_ = 0, peak_ = 0;
  std::uint64_t evictions_ = 0;
  std::list<std::pair<std::uint64_t, double>> order_;
  std::unordered_map<std::uint64_t, std::list<std::pair<std::uint64_t, double>>::iterator> index_;
};

} // namespace xattn::sim::engine
