#include "sim/engine/maxmin.hpp"

#include "sim/core/check.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

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
  group_next_.clear();
  first_of_.clear();
  linkless_ = kNone;
}

std::uint32_t MaxMinSolver::add_link(double capacity)
{
  XATTN_CHECK(capacity >= 0 && std::isfinite(capacity), "a link's capacity is a rate");
  capacity_.push_back(capacity);
  first_of_.push_back(kNone);
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
  // Its group: among those whose first link is its first link, the one with its links.
  XATTN_CHECK(links.empty() || links.front() < first_of_.size(), "a flow crosses a link of the solve");
  std::uint32_t& head = links.empty() ? linkless_ : first_of_[links.front()];
  std::uint32_t g = head;
  for (; g != kNone; g = group_next_[g]) {
    const std::uint32_t b = group_begin_[g];
    if (group_begin_[g + 1] - b != links.size()) continue;
    std::size_t k = 1;
    while (k < links.size() && group_links_[b + k] == links[k])
      ++k;
    if (k == links.size()) break;
  }
  if (g == kNone) {
    for (std::uint32_t l : links)
      XATTN_CHECK(l < capacity_.size(), "a flow crosses a link of the solve");
    g = static_cast<std::uint32_t>(groups());
    group_links_.insert(group_links_.end(), links.begin(), links.end());
    group_begin_.push_back(static_cast<std::uint32_t>(group_links_.size()));
    group_next_.push_back(head);
    head = g;
    if (g == members_.size()) members_.emplace_back();
    members_[g].clear();
  }
  members_[g].push_back(static_cast<std::uint32_t>(weight_.size()));
  weight_.push_back(weight);
  cap_.push_back(cap);
  ceiling_.push_back(cap / weight);
  return g;
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
      // On a full link every unfrozen flow of the group freezes; otherwise those at their caps.
      double rate = 0, weight = 0, still_lowest = std::numeric_limits<double>::infinity();
      bool below = false; // a flow frozen below its cap: it is at the level
      const auto freeze = [&](std::uint32_t i) {
        rate_[i] = std::min(cap_[i], weight_[i] * level);
        rate += rate_[i];
        weight += weight_[i];
        below = below || below_cap(rate_[i], cap_[i]);
      };
      std::vector<std::uint32_t>& members = members_[g];
      std::uint32_t end = live_end_[g];
      if (stop) {
        for (std::uint32_t k = 0; k < end; ++k)
          freeze(members[k]);
        end = 0;
      }
      for (std::uint32_t k = 0; k < end;) {
        const std::uint32_t i = members[k];
        if (ceiling_[i] > tol) {
          still_lowest = std::min(still_lowest, ceiling_[i]);
          ++k;
          continue;
        }
        freeze(i);
        std::swap(members[k], members[--end]); // the frozen go behind the unfrozen
      }
      froze = true;
      live_end_[g] = end;
      for (auto l = links_begin; l != links_end; ++l) {
        left_[*l] -= rate;
        wsum_[*l] -= weight;
        if (below) top_[*l] = std::max(top_[*l], level);
      }
      if (end == 0) continue;
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
