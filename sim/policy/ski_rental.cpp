#include "sim/policy/policy.hpp"

#include <unordered_map>
#include <utility>

namespace xattn::sim::policy
{
namespace
{

// Ski rental, deterministic. Routing a chunk is renting (r per step: the route's closed form);
// fetching it, or re-prefilling it, is buying (B: the cheaper of the two, after which the chunk
// sits in the requester's cache). A requester routes a chunk while the routing cost it has spent
// on it, this step's included, stays within a B (a: parameter `buy_at`); the step that
// would pass it buys instead.
//
// Bound (a = 1): per chunk and requester, never more than twice the offline optimum (which knows
// how many steps n will need the chunk). If it never buys, n r <= B and it paid n r, the optimum.
// If it buys at step k, it paid (k - 1) r <= B renting, then B; the optimum pays
// min(n r, B + ...) >= B since n >= k and k r > B. So ALG <= 2B <= 2 OPT (later cached steps cost
// the same to both). With another a the bound is 1 + max(a, 1 / a): buying early pays B where the
// optimum rented a B, buying late rents a B where the optimum bought once.
// It needs no forecast, only what it has spent: a serving engine can run it as is.
class SkiRentalPolicy final : public Policy
{
public:
  explicit SkiRentalPolicy(double buy_at) : buy_at_(buy_at) {}
  Primitive decide(const Need& n) override
  {
    const CallCost c = n.price();
    const Seconds rent = c.route.total();
    const bool local = c.local.total() < c.fetch.total();
    const Seconds buy = (local ? c.local.total() : c.fetch.total()) * buy_at_;
    auto key = std::make_pair(n.instance(), n.chunk());
    auto it = spent_.find(key);
    const Seconds so_far = it == spent_.end() ? Seconds(0) : it->second;
    if (so_far + rent > buy) {
      if (it != spent_.end()) spent_.erase(it); // bought: if the cache later drops it, renting starts again
      return local ? Primitive::kLocal : Primitive::kFetch;
    }
    spent_[key] = so_far + rent;
    return Primitive::kRoute;
  }

private:
  struct Hash {
    std::size_t operator()(const std::pair<int, std::uint64_t>& k) const
    {
      return std::hash<std::uint64_t>()(k.second * 0x9E3779B97F4A7C15ull ^ static_cast<std::uint64_t>(k.first));
    }
  };
  double buy_at_;
  std::unordered_map<std::pair<int, std::uint64_t>, Seconds, Hash> spent_;
};

const core::Schema kParams{
    {.key = "buy_at",
     .def = "1",
     .meaning = "route a chunk while the routing cost spent on it stays within this many times its buy cost (1: the "
                "classic rule, at most 2x the offline optimum; a: at most 1 + max(a, 1/a) times)",
     .check = core::Check::kPositive,
     .range = {0, 1000, "past 1000 times the buy cost it never buys: that is the route policy"}}};

} // namespace

PolicyInfo info_ski_rental()
{
  return {"ski-rental",
          "route a chunk while the routing cost spent on it stays within the cost of fetching (or re-prefilling) "
          "it, then fetch: no forecast, at most 2x the offline optimum per chunk",
          false, [](const Params& p) { return std::unique_ptr<Policy>(new SkiRentalPolicy(param(p, "buy_at"))); },
          &kParams};
}

} // namespace xattn::sim::policy
