// Max-min fair sharing with per-flow caps, solved over time for a set of flows that start
// together and share links only among themselves: the same allocation SimGrid's max-min solver
// computes (each flow bounded by its cap, every link's capacity shared by progressive filling),
// with rates recomputed as flows finish. The network fuses such an isolated group into timers.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace xattn::sim::engine
{

/// One flow's rate over time: segments (until, rate) from the start, the last ending when the
/// flow's last byte moves.
using Schedule = std::vector<std::pair<double, double>>;

/// The solver, with its buffers kept from one solve to the next (the network solves millions of
/// small groups): links and flows are added flat, then schedule() solves them.
class MaxMinSolver
{
public:
  /// Forgets every link and flow.
  void clear();
  /// Adds a link of `capacity` B/s; returns its index.
  std::uint32_t add_link(double capacity);
  /// Adds a flow of `bytes` capped at `cap` B/s; cross() then names the links it crosses.
  /// REQUIRES: bytes > 0, cap > 0.
  void add_flow(double bytes, double cap);
  void cross(std::uint32_t link);
  std::size_t flows() const { return bytes_.size(); }

  /// Rates of the active flows at one instant (max-min with caps); inactive flows get 0.
  const std::vector<double>& rates(const std::vector<char>& active);
  /// Every flow's schedule from time `start`, re-solving whenever a flow finishes. `out` is
  /// resized to flows(); each schedule is overwritten (its storage reused).
  void schedule(double start, std::vector<Schedule>& out);

private:
  std::vector<double> capacity_, bytes_, cap_;
  std::vector<std::uint32_t> begin_{0}, links_; ///< flow i crosses links_[begin_[i] .. begin_[i+1])
  // Scratch.
  std::vector<double> rate_, left_, remaining_;
  std::vector<int> users_;
  std::vector<std::uint32_t> live_, hot_; ///< unfrozen flows, links they use
  std::vector<char> saturated_, active_;
};

/// Bytes a flow has moved by time `t` along its schedule (started at `start`).
double moved_by(const Schedule& s, double start, double t);

} // namespace xattn::sim::engine
