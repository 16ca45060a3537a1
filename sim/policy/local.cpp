#include "sim/policy/policy.hpp"

namespace xattn::sim::policy
{
namespace
{
class LocalPolicy final : public Policy
{
public:
  Primitive decide(const Need&) override { return Primitive::kLocal; }
};
} // namespace

PolicyInfo info_local()
{
  return {.name = "local",
          .summary = "always recompute the chunk on the requester (re-prefill) and cache it",
          .make = [](const Params&) { return std::unique_ptr<Policy>(new LocalPolicy); },
          .routes = false};
}

} // namespace xattn::sim::policy
