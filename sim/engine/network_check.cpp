// The network's bookkeeping, stated once and checked (engine.check_solver): what every event of
// network.cpp and network_resolve.cpp keeps true between events.
#include "sim/engine/network.hpp"

#include "sim/core/check.hpp"

#include <cmath>
#include <vector>

namespace xattn::sim::engine
{

void Network::check_state(double t) const
{
  // Sums of rates drift by rounding: a link's within this share of its capacity of the exact sum.
  constexpr double kDrift = 1e-9;
  std::vector<double> capsum(resources_.size(), 0.0), used(resources_.size(), 0.0);
  std::vector<std::uint32_t> flows(resources_.size(), 0), unguarded_on(resources_.size(), 0);
  std::size_t moving = 0;
  for (std::uint32_t id = 0; id < transfers_.size(); ++id) {
    const Transfer& tr = transfers_[id];
    if (!tr.moving) continue;
    ++moving;
    const Fluid& f = fluid_[id];
    const auto route = resources(id);
    XATTN_CHECK(tr.slot.size() == route.size(), "a moving flow has a slot on each link of its route");
    // 1. A flow's rate is positive once placed, never above its cap, and its end is where its
    //    bytes left at its rate run out; the end heap holds it at that date or earlier.
    XATTN_CHECK(f.rate <= f.cap * (1 + kTight), "a flow runs above its cap");
    XATTN_CHECK(f.rate > 0 || !ends_.contains(id), "a flow without a rate has no end");
    if (f.rate > 0) {
      XATTN_CHECK(ends_.contains(id), "a moving flow with a rate has an end in the heap");
      XATTN_CHECK(ends_.date(id) <= f.end, "the end heap holds a flow's end or an earlier date");
      XATTN_CHECK(std::abs(f.end - (f.stamp + std::max(0.0, f.left) / f.rate)) <= 1e-9 * std::max(1.0, f.end),
                  "a flow's end is when its bytes left at its rate run out");
      XATTN_CHECK(f.stamp <= t, "a flow's bytes were counted in the past");
    }
    for (std::size_t k = 0; k < route.size(); ++k) {
      const std::uint32_t r = route[k];
      // 2. A flow sits on each link of its route at the slot it keeps, and its binding bits are
      //    the links of its route that can bind.
      XATTN_CHECK(tr.slot[k] < resources_[r].crossing.size() && resources_[r].crossing[tr.slot[k]].transfer == id &&
                      resources_[r].crossing[tr.slot[k]].hop == k,
                  "a flow's slot on a link names it");
      XATTN_CHECK(((f.binding >> k) & 1U) == (look_[r].binds ? 1U : 0U),
                  "a flow's binding bits are its links that can bind");
      capsum[r] += f.cap;
      used[r] += f.rate;
      ++flows[r];
    }
    for (std::uint32_t r : unguarded(id))
      ++unguarded_on[r];
  }
  XATTN_CHECK(moving == moving_, "the count of moving flows is theirs");
  for (std::uint32_t r = 0; r < resources_.size(); ++r) {
    const Resource& res = resources_[r];
    // 3. A link lists exactly the flows on it, sums their caps, and counts those that do not cross
    //    its guard; it can bind exactly when binds() says so from those.
    XATTN_CHECK(res.crossing.size() == flows[r], "a link lists the flows on it");
    XATTN_CHECK(std::abs(res.capsum - capsum[r]) <= kDrift * std::max(res.capacity, capsum[r]),
                "a link's sum of caps is its flows'");
    XATTN_CHECK(res.unguarded == unguarded_on[r], "a link counts its flows that do not cross its guard");
    XATTN_CHECK(look_[r].binds == binds(res), "a link can bind exactly when its caps can fill it");
    // 4. A link that can bind keeps the sum of its flows' rates, within its capacity; max-min
    //    fairness itself is check_rates()'s.
    if (!look_[r].binds) continue;
    XATTN_CHECK(std::abs(res.used - used[r]) <= kDrift * res.capacity * kResumEvery,
                "a binding link's sum of rates is its flows'");
    XATTN_CHECK(used[r] <= res.capacity * (1 + kTight), "a link carries no more than its capacity");
  }
}

} // namespace xattn::sim::engine
