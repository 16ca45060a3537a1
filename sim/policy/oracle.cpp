#include "sim/policy/policy.hpp"

namespace xattn::sim::policy
{
namespace
{
// The predicate told the true future reads of the chunk on its requester: each live request's
// remaining steps and every step of the requests yet to arrive there (sim/engine/future.hpp).
// What the closed form decides with a perfect reuse forecast: an offline reference for the
// deployable policies. It is not a proven bound: it decides greedily, call by call, and knows
// neither the cache's evictions nor the contention its choices cause.
class OraclePolicy final : public Policy
{
public:
  Primitive decide(const Need& n) override { return sim::decide(n.price(), n.true_reuse()).choice; }
};
} // namespace

PolicyInfo info_oracle()
{
  return {"oracle", "the predicate with the true future reads of each chunk (offline: reads the trace's future)", true,
          [](const Params&) { return std::unique_ptr<Policy>(new OraclePolicy); }};
}

} // namespace xattn::sim::policy
