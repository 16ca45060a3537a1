#include "sim/policy/policy.hpp"

namespace xattn::sim::policy
{
namespace
{
class FetchPolicy final : public Policy
{
public:
  Primitive decide(const Need&) override { return Primitive::kFetch; }
};
} // namespace

PolicyInfo info_fetch()
{
  return {.name = "fetch",
          .summary = "always fetch: the chunk (or the selected blocks) comes to the requester and stays cached",
          .make = [](const Params&) { return std::unique_ptr<Policy>(new FetchPolicy); },
          .routes = false,
          .recomputes = false};
}

} // namespace xattn::sim::policy
