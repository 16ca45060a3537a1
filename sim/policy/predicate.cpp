#include "sim/policy/policy.hpp"

namespace xattn::sim::policy
{
namespace
{
// The paper's predicate with an online reuse estimate: the cheapest primitive over this call and
// the later calls expected to attend the same tokens.
class PredicatePolicy final : public Policy
{
public:
  Primitive decide(const Need& n) override { return sim::decide(n.price(), n.expected_reuse()).choice; }
};
} // namespace

PolicyInfo info_predicate()
{
  return {"predicate", "the closed-form predicate with an online reuse estimate (finished requests' mean length)",
          false, [](const Params&) { return std::unique_ptr<Policy>(new PredicatePolicy); }};
}

} // namespace xattn::sim::policy
