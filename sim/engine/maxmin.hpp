// Weighted max-min fair sharing with per-flow caps, at one instant: the allocation SimGrid's lmm
// solver computes. Each flow has a weight w (the number of equal SimGrid flows it stands for: a
// transfer's thread blocks) and a cap; progressive filling raises every unfrozen flow to w x level
// until a link is full (its flows freeze at that level) or a flow reaches its cap. The network
// (network.hpp) solves, at each event, only the flows whose rates the event can change.
//
// Flows that cross the same links freeze together (on the same full link, at the same level), and
// a congested link's set is mostly such flows (dozens behind one NIC): the solver keeps them as one
// group, which each round reads once, and reads a group's flows one by one only where one of them
// reaches its cap first, and when the group freezes.
#pragma once

#include "sim/core/check.hpp"

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace xattn::sim::engine
{

/// The solver, with its buffers kept from one solve to the next (the network solves millions of
/// small sets): links, then flows with the links they cross, are added, then solve() gives every
/// flow's rate. More links and flows may be added after a solve, and capacities changed, and the
/// whole solved again (the network grows the set it re-solves).
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
  /// units/s, crossing `links`; returns its group: the flows added with the same links, in the same
  /// order. REQUIRES: weight > 0, cap > 0, each link < links().
  std::uint32_t add_flow(double weight, double cap, std::span<const std::uint32_t> links);
  std::size_t flows() const { return weight_.size(); }
  std::size_t links() const { return capacity_.size(); }
  std::size_t groups() const { return group_begin_.size() - 1; }
  /// The links a group's flows cross.
  std::span<const std::uint32_t> group_links(std::uint32_t group) const
  {
    return {group_links_.data() + group_begin_[group], group_begin_[group + 1] - group_begin_[group]};
  }
  /// A group's flows (in no particular order).
  std::span<const std::uint32_t> group_members(std::uint32_t group) const { return members_[group]; }

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
  std::vector<double> ceiling_; ///< by flow: cap / weight, the level at which it reaches its cap
  // Groups: the flows that cross the same links (in the same order).
  std::vector<std::uint32_t> group_begin_{0}, group_links_; ///< group g crosses group_links_[group_begin_[g] ..]
  // The groups by their links: a hash table whose slots are in use where their stamp is the set's
  // (clear() frees them all at once), and the group of the flow added last.
  struct Slot {
    std::uint32_t stamp = 0, group = 0;
  };
  std::vector<Slot> table_ = std::vector<Slot>(64);
  std::uint32_t stamp_ = 1, last_group_ = 0;
  bool crosses(std::uint32_t group, std::span<const std::uint32_t> links) const; ///< exactly these links
  /// The slot of the group with these links, or the free slot where it goes.
  std::size_t find(std::span<const std::uint32_t> links) const;
  void grow_table(); ///< doubles the table, keeping the set's groups
  /// A round of solve() at `level` freezes group `g`'s flows: all of them where it crosses a full
  /// link (`stop`), else those whose ceiling is within `tol`; returns the lowest ceiling left.
  double freeze(std::uint32_t g, bool stop, double level, double tol);
  std::vector<std::vector<std::uint32_t>> members_; ///< by group: its flows (storage kept from one clear() to the next)
  // Scratch.
  std::vector<double> rate_, left_, wsum_, top_;
  std::vector<double> share_;             ///< by link: the level at which it fills, this round
  std::vector<double> lowest_left_;       ///< by group: the lowest ceiling of its unfrozen flows
  std::vector<std::uint32_t> live_end_;   ///< by group: its unfrozen flows come first in members_, up to here
  std::vector<std::uint32_t> live_, hot_; ///< groups with unfrozen flows, links they use
  std::vector<char> full_;
};

} // namespace xattn::sim::engine
