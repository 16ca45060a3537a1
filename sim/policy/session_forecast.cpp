#include "sim/policy/policy.hpp"

namespace xattn::sim::policy
{
namespace
{
// The predicate with the later turns of the request's session added to its reuse: an agent's or
// a conversation's next turn reads much of this turn's context again, on the same requester
// (Need::session_reuse: how far the sessions seen so far went past this one's turns, how much
// of a turn the next one read again, online).
class SessionForecastPolicy final : public Policy
{
public:
  Primitive decide(const Need& n) override
  {
    return sim::decide(n.price(), n.expected_reuse() + n.session_reuse()).choice;
  }
};
} // namespace

PolicyInfo info_session_forecast()
{
  return {"session-forecast",
          "the predicate with the later turns of the request's session forecast from the sessions seen so far "
          "(how far they went, how much of a turn the next one read again)",
          false, [](const Params&) { return std::unique_ptr<Policy>(new SessionForecastPolicy); }};
}

} // namespace xattn::sim::policy
