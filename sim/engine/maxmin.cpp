#include "sim/engine/maxmin.hpp"

#include "sim/core/check.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace xattn::sim::engine
{

void MaxMinSolver::clear()
{
  capacity_.clear();
  weight_.clear();
  cap_.clear();
  ceiling_.clear();
  group_begin_.assign(1, 0);
  group_links_.clear();
  // The table's slots carry the stamp of the set that filled them: a new stamp frees them all.
  if (++stamp_ == 0) {
    std::fill(table_.begin(), table_.end(), Slot{});
    stamp_ = 1;
  }
}

std::uint32_t MaxMinSolver::add_link(double capacity)
{
  XATTN_CHECK(capacity >= 0 && std::isfinite(capacity), "a link's capacity is a rate");
  capacity_.push_back(capacity);
  return static_cast<std::uint32_t>(capacity_.size() - 1);
}

void MaxMinSolver::set_capacity(std::uint32_t link, double capacity)
{
  XATTN_CHECK(link < capacity_.size() && capacity >= 0 && std::isfinite(capacity), "a link's capacity is a rate");
  capacity_[link] = capacity;
}

std::uint32_t MaxMinSolver::add_flow(double weight, double cap, std::span<const std::uint32_t> links)
{
  XATTN_CHECK(weight > 0 && cap > 0, "a flow has a positive weight and a positive cap");
  // Its group: the last flow's (a link's held-back flows join one after the other), or the one
  // with its links, found by their hash (a set may hold dozens of groups behind one link).
  std::uint32_t g = last_group_;
  if (g >= groups() || !crosses(g, links)) {
    const std::size_t slot = find(links);
    g = table_[slot].group;
    if (table_[slot].stamp != stamp_) {
      for (std::uint32_t l : links)
        XATTN_CHECK(l < capacity_.size(), "a flow crosses a link of the solve");
      g = static_cast<std::uint32_t>(groups());
      group_links_.insert(group_links_.end(), links.begin(), links.end());
      group_begin_.push_back(static_cast<std::uint32_t>(group_links_.size()));
      if (g == members_.size()) members_.emplace_back();
      members_[g].clear();
      table_[slot] = {stamp_, g};
      if (2 * groups() > table_.size()) grow_table();
    }
  }
  last_group_ = g;
  members_[g].push_back(static_cast<std::uint32_t>(weight_.size()));
  weight_.push_back(weight);
  cap_.push_back(cap);
  ceiling_.push_back(cap / weight);
  return g;
}

bool MaxMinSolver::crosses(std::uint32_t group, std::span<const std::uint32_t> links) const
{
  // A handful of links: a plain loop (std::equal calls memcmp).
  const std::uint32_t begin = group_begin_[group];
  if (group_begin_[group + 1] - begin != links.size()) return false;
  for (std::size_t k = 0; k < links.size(); ++k)
    if (group_links_[begin + k] != links[k]) return false;
  return true;
}

std::size_t MaxMinSolver::find(std::span<const std::uint32_t> links) const
{
  std::uint64_t hash = links.size();
  for (std::uint32_t l : links)
    hash = (hash ^ l) * 0x9E3779B97F4A7C15ULL; // Fibonacci hashing: the top bits mix every link
  const std::size_t mask = table_.size() - 1;
  for (auto slot = static_cast<std::size_t>(hash >> (64 - std::countr_zero(table_.size())));; slot = (slot + 1) & mask)
    if (table_[slot].stamp != stamp_ || crosses(table_[slot].group, links)) return slot;
}

void MaxMinSolver::grow_table()
{
  table_.assign(2 * table_.size(), Slot{});
  stamp_ = 1;
  for (std::uint32_t g = 0; g < groups(); ++g)
    table_[find(group_links(g))] = {stamp_, g};
}

double MaxMinSolver::freeze(std::uint32_t g, bool stop, double level, double tol)
{
  const auto links_begin = group_links_.begin() + group_begin_[g],
             links_end = group_links_.begin() + group_begin_[g + 1];
  // On a full link every unfrozen flow of the group freezes; otherwise those at their caps.
  double rate = 0, weight = 0, still_lowest = std::numeric_limits<double>::infinity();
  bool below = false; // a flow frozen below its cap: it is at the level
  const auto freeze_flow = [&](std::uint32_t i) {
    rate_[i] = std::min(cap_[i], weight_[i] * level);
    rate += rate_[i];
    weight += weight_[i];
    below = below || below_cap(rate_[i], cap_[i]);
  };
  std::vector<std::uint32_t>& members = members_[g];
  std::uint32_t end = live_end_[g];
  if (stop) {
    for (std::uint32_t k = 0; k < end; ++k)
      freeze_flow(members[k]);
    end = 0;
  }
  for (std::uint32_t k = 0; k < end;) {
    const std::uint32_t i = members[k];
    if (ceiling_[i] > tol) {
      still_lowest = std::min(still_lowest, ceiling_[i]);
      ++k;
      continue;
    }
    freeze_flow(i);
    std::swap(members[k], members[--end]); // the frozen go behind the unfrozen
  }
  live_end_[g] = end;
  for (auto l = links_begin; l != links_end; ++l) {
    left_[*l] -= rate;
    wsum_[*l] -= weight;
    if (below) top_[*l] = std::max(top_[*l], level);
  }
  return still_lowest;
}

const std::vector<double>& MaxMinSolver::solve()
{
  const std::size_t n = flows(), m = capacity_.size(), groups = this->groups();
  rate_.resize(n); // every flow freezes, and gets its rate then
  // One pass per kind (a few links and groups: assign() would call memmove for each array).
  left_.resize(m); // capacity not yet given to frozen flows
  wsum_.resize(m); // weight of the unfrozen flows on each link
  top_.resize(m);
  full_.resize(m);
  share_.resize(m);
  for (std::size_t l = 0; l < m; ++l) {
    left_[l] = capacity_[l];
    wsum_[l] = 0;
    top_[l] = -1;
  }
  live_end_.resize(groups);
  lowest_left_.resize(groups);
  live_.resize(groups);
  // The lowest ceiling of the unfrozen flows: of all of them now, then of those a round keeps.
  double lowest = std::numeric_limits<double>::infinity();
  for (std::uint32_t g = 0; g < groups; ++g) {
    // Summed here, where the sums stay in registers (added as flows join, one flow's add waited
    // for the last one's store).
    double weight = 0, lowest_ceiling = std::numeric_limits<double>::infinity();
    for (std::uint32_t i : members_[g]) {
      weight += weight_[i];
      lowest_ceiling = std::min(lowest_ceiling, ceiling_[i]);
    }
    for (std::uint32_t l : group_links(g))
      wsum_[l] += weight;
    live_end_[g] = static_cast<std::uint32_t>(members_[g].size());
    lowest_left_[g] = lowest_ceiling;
    live_[g] = g;
    lowest = std::min(lowest, lowest_ceiling);
  }
  hot_.clear(); // links with unfrozen users
  for (std::size_t l = 0; l < m; ++l)
    if (wsum_[l] > 0) hot_.push_back(static_cast<std::uint32_t>(l));
  // Progressive filling: the level (rate per unit of weight) rises for every unfrozen flow until
  // a link is full or a flow reaches its cap; the flows that hit a limit freeze there.
  while (!live_.empty()) {
    double level = lowest;
    for (std::uint32_t l : hot_) {
      share_[l] = std::max(0.0, left_[l]) / wsum_[l];
      level = std::min(level, share_[l]);
    }
    lowest = std::numeric_limits<double>::infinity();
    const double tol = level * (1 + 1e-12);
    for (std::uint32_t l : hot_)
      full_[l] = share_[l] <= tol;
    std::size_t kept = 0;
    bool froze = false;
    for (std::uint32_t g : live_) {
      const auto links_begin = group_links_.begin() + group_begin_[g],
                 links_end = group_links_.begin() + group_begin_[g + 1];
      const bool stop = std::any_of(links_begin, links_end, [&](std::uint32_t l) { return full_[l] != 0; });
      if (!stop && lowest_left_[g] > tol) { // the whole group rises on
        live_[kept++] = g;
        lowest = std::min(lowest, lowest_left_[g]);
        continue;
      }
      const double still_lowest = freeze(g, stop, level, tol);
      froze = true;
      if (live_end_[g] == 0) continue;
      lowest_left_[g] = still_lowest;
      live_[kept++] = g;
      lowest = std::min(lowest, still_lowest);
    }
    XATTN_CHECK(froze, "max-min: a round froze no flow");
    live_.resize(kept);
    // Weights are whole thread blocks: their sums are exact, and a link whose flows all froze is at 0.
    hot_.erase(std::remove_if(hot_.begin(), hot_.end(), [&](std::uint32_t l) { return wsum_[l] <= 0; }), hot_.end());
  }
  return rate_;
}

} // namespace xattn::sim::engine
