#include "sim/engine/replicas.hpp"

#include "sim/core/check.hpp"

#include <algorithm>

namespace xattn::sim::engine
{

Replicas::Replicas(int holders, double budget_B, int after, int max_copies)
    : held_(static_cast<std::size_t>(holders), LruCache(budget_B)), after_(static_cast<std::uint32_t>(after)),
      max_copies_(static_cast<std::size_t>(max_copies))
{
  XATTN_CHECK(holders > 0 && after > 0 && max_copies > 0, "replication has holders, a read count and copies");
}

const std::vector<int>& Replicas::copies(std::uint64_t chunk) const
{
  static const std::vector<int> none;
  auto it = chunks_.find(chunk);
  return it == chunks_.end() ? none : it->second.copies;
}

bool Replicas::read(std::uint64_t chunk, int h)
{
  State& s = chunks_[chunk];
  if (std::find(s.copies.begin(), s.copies.end(), h) != s.copies.end()) held_[h].touch(chunk);
  if (s.moving || s.copies.size() >= max_copies_ || ++s.reads < after_) return false;
  s.reads = 0;
  s.moving = true;
  return true;
}

void Replicas::landed(std::uint64_t chunk, int h, double bytes)
{
  State& s = chunks_[chunk];
  XATTN_CHECK(s.moving, "a copy landed that was not on its way");
  s.moving = false;
  std::vector<std::uint64_t> out;
  held_[h].insert(chunk, bytes, &out);
  for (std::uint64_t e : out) {
    std::vector<int>& c = chunks_.find(e)->second.copies; // a key with a copy: there
    c.erase(std::remove(c.begin(), c.end(), h), c.end());
    ++evicted_;
  }
  if (!held_[h].contains(chunk)) return; // larger than the whole budget: not kept
  chunks_.find(chunk)->second.copies.push_back(h);
  ++made_;
}

} // namespace xattn::sim::engine
