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
  link_weight_.clear();
  weight_.clear();
  cap_.clear();
  ceiling_.clear();
  lowest_ceiling_ = std::numeric_limits<double>::infinity();
  begin_.assign(1, 0);
  links_.clear();
}

std::uint32_t MaxMinSolver::add_link(double capacity)
{
  XATTN_CHECK(capacity >= 0 && std::isfinite(capacity), "a link's capacity is a rate");
  capacity_.push_back(capacity);
  link_weight_.push_back(0);
  return static_cast<std::uint32_t>(capacity_.size() - 1);
}

void MaxMinSolver::set_capacity(std::uint32_t link, double capacity)
{
  XATTN_CHECK(link < capacity_.size() && capacity >= 0 && std::isfinite(capacity), "a link's capacity is a rate");
  capacity_[link] = capacity;
}

void MaxMinSolver::add_flow(double weight, double cap)
{
  XATTN_CHECK(weight > 0 && cap > 0, "a flow has a positive weight and a positive cap");
  weight_.push_back(weight);
  cap_.push_back(cap);
  ceiling_.push_back(cap / weight);
  lowest_ceiling_ = std::min(lowest_ceiling_, ceiling_.back());
  begin_.push_back(static_cast<std::uint32_t>(links_.size()));
}

const std::vector<double>& MaxMinSolver::solve()
{
  const std::size_t n = flows(), m = capacity_.size();
  rate_.resize(n);                                        // every flow freezes, and gets its rate then
  left_.assign(capacity_.begin(), capacity_.end());       // capacity not yet given to frozen flows
  wsum_.assign(link_weight_.begin(), link_weight_.end()); // weight of the unfrozen flows on each link
  top_.assign(m, -1.0);
  full_.resize(m);
  share_.resize(m);
  live_.resize(n);
  std::iota(live_.begin(), live_.end(), std::uint32_t{0});
  // The lowest ceiling of the unfrozen flows: of all of them now, then of those a round keeps.
  double lowest = lowest_ceiling_;
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
    for (std::uint32_t i : live_) {
      bool stop = ceiling_[i] <= tol;
      for (std::uint32_t k = begin_[i]; k < begin_[i + 1] && !stop; ++k)
        stop = full_[links_[k]] != 0;
      if (!stop) {
        live_[kept++] = i;
        lowest = std::min(lowest, ceiling_[i]);
        continue;
      }
      rate_[i] = std::min(cap_[i], weight_[i] * level);
      const double below = below_cap(rate_[i], cap_[i]) ? level : -1.0; // below its cap, it is at the level
      for (std::uint32_t k = begin_[i]; k < begin_[i + 1]; ++k) {
        left_[links_[k]] -= rate_[i];
        wsum_[links_[k]] -= weight_[i];
        top_[links_[k]] = std::max(top_[links_[k]], below);
      }
    }
    XATTN_CHECK(kept < live_.size(), "max-min: a round froze no flow");
    live_.resize(kept);
    // Weights are whole thread blocks: their sums are exact, and a link whose flows all froze is at 0.
    hot_.erase(std::remove_if(hot_.begin(), hot_.end(), [&](std::uint32_t l) { return wsum_[l] <= 0; }), hot_.end());
  }
  return rate_;
}

} // namespace xattn::sim::engine
