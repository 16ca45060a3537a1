#include "sim/policy/policy.hpp"

namespace xattn::sim::policy
{
namespace
{
// The predicate told each request's true remaining steps: what the closed form decides with a
// perfect reuse forecast. An offline bound for the deployable policies, not one itself.
class OraclePolicy final : public Policy
{
public:
  Primitive decide(const Need& n) override { return sim::decide(n.price(), n.true_reuse()).choice; }
};
} // namespace

PolicyInfo info_oracle()
{
  return {"oracle", "the predicate with each request's true remaining steps (offline: reads the trace's future)", true,
          [] { return std::unique_ptr<Policy>(new OraclePolicy); }};
}

} // namespace xattn::sim::policy
