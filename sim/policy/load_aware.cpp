#include "sim/policy/policy.hpp"

#include <algorithm>

namespace xattn::sim::policy
{
namespace
{
// The predicate priced with what a live scheduler sees now (Need::load): a routed call's kernel
// runs as many times slower as its holder's running kernels leave it less than its share of the
// GPU; the transfers of a route or a fetch get what max-min sharing gives a newcomer on the
// busiest link of their path, the capacity left free or an equal share among its flows, the
// larger (1 / max(1 - busy, 1 / (flows + 1)) times their alone time); a fetch first waits its
// turn for the holder's copy streams, as many copies' time as are ahead of it per stream, each
// taken as long as its own.
class LoadAwarePolicy final : public Policy
{
public:
  Primitive decide(const Need& n) override
  {
    CallCost c = n.price();
    const Load l = n.load();
    c.route.compute = c.route.compute * l.route_slowdown;
    const double link = 1 / std::max(1 - l.path_busy, 1.0 / (l.path_flows + 1));
    c.route.transfer = c.route.transfer * link;
    c.route.ret = c.route.ret * link;
    c.fetch.transfer = c.fetch.transfer * (link + l.fetch_queue);
    return sim::decide(c, n.expected_reuse()).choice;
  }
};
} // namespace

PolicyInfo info_load_aware()
{
  return {"load-aware",
          "the predicate with the holder's running kernels and the path's busiest link as they are now "
          "(an online reuse estimate)",
          false, [](const Params&) { return std::unique_ptr<Policy>(new LoadAwarePolicy); }};
}

} // namespace xattn::sim::policy
