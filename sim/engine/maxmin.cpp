#include "sim/engine/maxmin.hpp"

#include "sim/core/check.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace xattn::sim::engine
{

void MaxMinSolver::clear()
{
  capacity_.clear();
  bytes_.clear();
  cap_.clear();
  begin_.assign(1, 0);
  links_.clear();
}

std::uint32_t MaxMinSolver::add_link(double capacity)
{
  capacity_.push_back(capacity);
  return static_cast<std::uint32_t>(capacity_.size() - 1);
}

void MaxMinSolver::add_flow(double bytes, double cap)
{
  XATTN_CHECK(bytes > 0 && cap > 0, "a flow has bytes to move and a positive cap");
  bytes_.push_back(bytes);
  cap_.push_back(cap);
  begin_.push_back(static_cast<std::uint32_t>(links_.size()));
}

void MaxMinSolver::cross(std::uint32_t link)
{
  links_.push_back(link);
  ++begin_.back();
}

const std::vector<double>& MaxMinSolver::rates(const std::vector<char>& active)
{
  const std::size_t n = flows(), m = capacity_.size();
  rate_.assign(n, 0.0);
  left_.assign(capacity_.begin(), capacity_.end()); // capacity not yet given to frozen flows
  users_.assign(m, 0);
  saturated_.resize(m);
  live_.clear(); // unfrozen flows, in index order
  for (std::size_t i = 0; i < n; ++i) {
    if (!active[i]) continue;
    live_.push_back(static_cast<std::uint32_t>(i));
    for (std::uint32_t k = begin_[i]; k < begin_[i + 1]; ++k)
      ++users_[links_[k]];
  }
  hot_.clear(); // links with unfrozen users
  for (std::size_t l = 0; l < m; ++l)
    if (users_[l] > 0) hot_.push_back(static_cast<std::uint32_t>(l));
  // Progressive filling: every unfrozen flow rises together to the next limit (a link's fair
  // share or a flow's cap); the flows that hit it freeze there.
  while (!live_.empty()) {
    double level = std::numeric_limits<double>::infinity();
    for (std::uint32_t l : hot_)
      level = std::min(level, left_[l] / users_[l]);
    for (std::uint32_t i : live_)
      level = std::min(level, cap_[i]);
    const double eps = 1e-12 * level;
    for (std::uint32_t l : hot_)
      saturated_[l] = left_[l] / users_[l] <= level + eps;
    std::size_t kept = 0;
    for (std::uint32_t i : live_) {
      bool stop = cap_[i] <= level + eps;
      for (std::uint32_t k = begin_[i]; k < begin_[i + 1] && !stop; ++k)
        stop = saturated_[links_[k]] != 0;
      if (!stop) {
        live_[kept++] = i;
        continue;
      }
      rate_[i] = level;
      for (std::uint32_t k = begin_[i]; k < begin_[i + 1]; ++k) {
        left_[links_[k]] -= level;
        --users_[links_[k]];
      }
    }
    live_.resize(kept);
    hot_.erase(std::remove_if(hot_.begin(), hot_.end(), [&](std::uint32_t l) { return users_[l] == 0; }), hot_.end());
  }
  return rate_;
}

void MaxMinSolver::schedule(double start, std::vector<Schedule>& out)
{
  const std::size_t n = flows();
  out.resize(n);
  for (Schedule& s : out) {
    s.clear();
    s.reserve(std::min<std::size_t>(n, 16)); // a segment per finishing flow at most
  }
  remaining_.assign(bytes_.begin(), bytes_.end());
  active_.assign(n, 1);
  double t = start;
  std::size_t alive = n;
  while (alive > 0) {
    const std::vector<double>& rate = rates(active_);
    double dt = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < n; ++i)
      if (active_[i]) dt = std::min(dt, remaining_[i] / rate[i]);
    XATTN_CHECK(std::isfinite(dt), "max-min: no active flow progresses");
    const double next = t + dt;
    for (std::size_t i = 0; i < n; ++i) {
      if (!active_[i]) continue;
      out[i].emplace_back(next, rate[i]);
      remaining_[i] -= rate[i] * dt;
      // The flow that set dt, and any that finish within rounding of it, are done.
      if (remaining_[i] <= 1e-9 * bytes_[i]) {
        active_[i] = 0;
        --alive;
      }
    }
    t = next;
  }
}

double moved_by(const Schedule& s, double start, double t)
{
  double moved = 0, from = start;
  for (const auto& [until, rate] : s) {
    if (t <= from) break;
    moved += rate * (std::min(t, until) - from);
    from = until;
  }
  return moved;
}

} // namespace xattn::sim::engine
