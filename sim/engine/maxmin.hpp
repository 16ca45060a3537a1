// Max-min fair sharing with per-flow caps, solved over time for a set of flows that start
// together and share links only among themselves: the same allocation SimGrid's max-min solver
// computes (each flow bounded by its cap, every link's capacity shared by progressive filling),
// with rates recomputed as flows finish. The network fuses such an isolated group into timers.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace xattn::sim::engine {

struct FlowSpec {
  double bytes = 0;                  ///< B
  double cap   = 0;                  ///< B/s, the flow's own bound
  std::vector<std::uint32_t> links;  ///< indices into the capacity vector
};

/// One flow's rate over time: segments (until, rate) from the start, the last ending when the
/// flow's last byte moves.
using Schedule = std::vector<std::pair<double, double>>;

/// Rates of the flows at one instant (max-min with caps). `active[i]` false: flow i takes none.
std::vector<double> maxmin_rates(const std::vector<FlowSpec>& flows, const std::vector<double>& capacity,
                                 const std::vector<bool>& active);

/// Every flow's schedule from time `start`, re-solving whenever a flow finishes.
std::vector<Schedule> maxmin_schedule(const std::vector<FlowSpec>& flows, const std::vector<double>& capacity, double start);

/// Bytes a flow has moved by time `t` along its schedule (started at `start`).
double moved_by(const Schedule& s, double start, double t);

} // namespace xattn::sim::engine
