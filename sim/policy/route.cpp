#include "sim/policy/policy.hpp"

namespace xattn::sim::policy
{
namespace
{
class RoutePolicy final : public Policy
{
public:
  Primitive decide(const Need&) override { return Primitive::kRoute; }
};
} // namespace

PolicyInfo info_route()
{
  return {.name = "route",
          .summary = "always route: the query rows go to the holder, the partials come back",
          .make = [](const Params&) { return std::unique_ptr<Policy>(new RoutePolicy); },
          .recomputes = false};
}

} // namespace xattn::sim::policy
