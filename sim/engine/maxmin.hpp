// Weighted max-min fair sharing with per-flow caps, at one instant: the allocation SimGrid's lmm
// solver computes. Each flow has a weight w (the number of equal SimGrid flows it stands for: a
// transfer's thread blocks) and a cap; progressive filling raises every unfrozen flow to w x level
// until a link is full (its flows freeze at that level) or a flow reaches its cap. The network
// (network.hpp) solves, at each event, only the flows whose rates the event can change.
#pragma once

#include "sim/core/check.hpp"

#include <cstdint>
#include <limits>
#include <vector>

namespace xattn::sim::engine
{

/// The solver, with its buffers kept from one solve to the next (the network solves millions of
/// small sets): links and flows are added flat, then solve() gives every flow's rate. More links
/// and flows may be added after a solve, and capacities changed, and the whole solved again (the
/// network grows the set it re-solves).
class MaxMinSolver
{
public:
  /// Forgets every link and flow.
  void clear();
  /// Adds a link with `capacity` units/s for these flows; returns its index. REQUIRES capacity >= 0.
  std::uint32_t add_link(double capacity);
  /// REQUIRES: link < links(), capacity >= 0.
  void set_capacity(std::uint32_t link, double capacity);
  /// Adds a flow of `weight` (its share of a full link, relative to the others) capped at `cap`
  /// units/s; cross() then names the links it crosses. REQUIRES: weight > 0, cap > 0.
  void add_flow(double weight, double cap);
  /// REQUIRES: after a first add_flow (the network's inner loop).
  void cross(std::uint32_t link)
  {
    XATTN_CHECK(link < link_weight_.size() && !weight_.empty(), "a flow crosses a link of the solve");
    links_.push_back(link);
    ++begin_.back();
    link_weight_[link] += weight_.back();
  }
  std::size_t flows() const { return weight_.size(); }
  std::size_t links() const { return capacity_.size(); }

  /// Every flow's rate, in flow order.
  const std::vector<double>& solve();
  /// What `link` offers these flows (add_link, set_capacity).
  double capacity(std::uint32_t link) const { return capacity_[link]; }
  /// After solve(): the rates on `link`, summed.
  double load(std::uint32_t link) const { return capacity_[link] - left_[link]; }
  /// After solve(): the highest rate per unit of weight on `link` of a flow below its cap (within
  /// kAtCap of it), or -1 where every flow on it is at its cap.
  double top(std::uint32_t link) const { return top_[link]; }
  /// A flow within this share of its cap is at its cap.
  static constexpr double kAtCap = 1e-9;
  static bool below_cap(double rate, double cap) { return rate < cap * (1 - kAtCap); }

private:
  std::vector<double> capacity_, weight_, cap_;
  std::vector<double> ceiling_;                 ///< cap / weight: the level at which each flow reaches its cap
  std::vector<std::uint32_t> begin_{0}, links_; ///< flow i crosses links_[begin_[i] .. begin_[i+1])
  std::vector<double> link_weight_;             ///< by link: the weights of the flows crossing it, summed
  // The lowest of the flows' ceilings (the set only grows between clears).
  double lowest_ceiling_ = std::numeric_limits<double>::infinity();
  // Scratch.
  std::vector<double> rate_, left_, wsum_, top_;
  std::vector<double> share_;             ///< by link: the level at which it fills, this round
  std::vector<std::uint32_t> live_, hot_; ///< unfrozen flows, links they use
  std::vector<char> full_;
};

} // namespace xattn::sim::engine
