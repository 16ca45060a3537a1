#include "sim/engine/maxmin.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace xattn::sim::engine {

std::vector<double> maxmin_rates(const std::vector<FlowSpec>& flows, const std::vector<double>& capacity,
                                 const std::vector<bool>& active)
{
  const std::size_t n = flows.size();
  std::vector<double> rate(n, 0.0);
  std::vector<bool> frozen(n, false);
  std::vector<double> left = capacity; // capacity not yet given to frozen flows
  std::vector<int> users(capacity.size(), 0);
  std::size_t unfrozen = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!active[i]) {
      frozen[i] = true;
      continue;
    }
    ++unfrozen;
    for (std::uint32_t l : flows[i].links)
      ++users[l];
  }
  // Progressive filling: every unfrozen flow rises together to the next limit (a link's fair
  // share or a flow's cap); the flows that hit it freeze there.
  while (unfrozen > 0) {
    double level = std::numeric_limits<double>::infinity();
    for (std::size_t l = 0; l < capacity.size(); ++l)
      if (users[l] > 0)
        level = std::min(level, left[l] / users[l]);
    for (std::size_t i = 0; i < n; ++i)
      if (!frozen[i])
        level = std::min(level, flows[i].cap);
    const double eps = 1e-12 * level;
    std::vector<bool> saturated(capacity.size(), false);
    for (std::size_t l = 0; l < capacity.size(); ++l)
      saturated[l] = users[l] > 0 && left[l] / users[l] <= level + eps;
    for (std::size_t i = 0; i < n; ++i) {
      if (frozen[i])
        continue;
      bool stop = flows[i].cap <= level + eps;
      for (std::uint32_t l : flows[i].links)
        stop = stop || saturated[l];
      if (!stop)
        continue;
      frozen[i] = true;
      rate[i]   = level;
      --unfrozen;
      for (std::uint32_t l : flows[i].links) {
        left[l] -= level;
        --users[l];
      }
    }
  }
  return rate;
}

std::vector<Schedule> maxmin_schedule(const std::vector<FlowSpec>& flows, const std::vector<double>& capacity, double start)
{
  const std::size_t n = flows.size();
  std::vector<Schedule> out(n);
  std::vector<double> remaining(n);
  std::vector<bool> active(n, true);
  for (std::size_t i = 0; i < n; ++i)
    remaining[i] = flows[i].bytes;
  double t          = start;
  std::size_t alive = n;
  while (alive > 0) {
    std::vector<double> rate = maxmin_rates(flows, capacity, active);
    double dt = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < n; ++i)
      if (active[i])
        dt = std::min(dt, remaining[i] / rate[i]);
    const double next = t + dt;
    for (std::size_t i = 0; i < n; ++i) {
      if (!active[i])
        continue;
      out[i].emplace_back(next, rate[i]);
      remaining[i] -= rate[i] * dt;
      // The flow that set dt, and any that finish within rounding of it, are done.
      if (remaining[i] <= 1e-9 * flows[i].bytes) {
        active[i] = false;
        --alive;
      }
    }
    t = next;
  }
  return out;
}

double moved_by(const Schedule& s, double start, double t)
{
  double moved = 0, from = start;
  for (const auto& [until, rate] : s) {
    if (t <= from)
      break;
    moved += rate * (std::min(t, until) - from);
    from = until;
  }
  return moved;
}

} // namespace xattn::sim::engine
