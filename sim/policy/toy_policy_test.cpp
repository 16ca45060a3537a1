// A policy written the way policy.hpp says a new one is: its decision, its own parameter with a
// default, its PolicyInfo; made through make() as the scenario's policies and policy_variants make
// the registered ones. A test of the extension point, not of a shipped policy.
#include "sim/policy/policy.hpp"
#include "sim/policy/test_need.hpp"

#include <catch2/catch.hpp>

using namespace xattn;
using namespace xattn::sim::policy;

namespace
{
// Routes while the path to the holder is less busy than `max_busy`, else fetches.
class BusyPathPolicy final : public Policy
{
public:
  explicit BusyPathPolicy(double max_busy) : max_busy_(max_busy) {}
  sim::Primitive decide(const Need& need) override
  {
    return need.load().path_busy < max_busy_ ? sim::Primitive::kRoute : sim::Primitive::kFetch;
  }

private:
  double max_busy_;
};

const core::Schema kBusyPathParams{{.key = "max_busy",
                                    .def = "0.5",
                                    .meaning = "the path's busy share from which it fetches",
                                    .range = core::kShareRange}};

PolicyInfo info_busy_path()
{
  return {.name = "busy-path",
          .summary = "route while the path is quiet, else fetch",
          .make = [](const Params& p) { return std::unique_ptr<Policy>(new BusyPathPolicy(param(p, "max_busy"))); },
          .params = &kBusyPathParams,
          .recomputes = false};
}

sim::Primitive decide_at(Policy& p, double busy)
{
  Load load;
  load.path_busy = busy;
  return p.decide(test::PricedNeed(0, 7, sim::CallCost{}, load));
}
} // namespace

TEST_CASE("policy: a toy policy takes its parameter's default, or the value given, through make()")
{
  const PolicyInfo info = info_busy_path();
  std::unique_ptr<Policy> defaults = make(info);
  CHECK(decide_at(*defaults, 0.4) == sim::Primitive::kRoute);
  CHECK(decide_at(*defaults, 0.6) == sim::Primitive::kFetch); // the schema's default, 0.5
  std::unique_ptr<Policy> eager = make(info, {{"max_busy", 0.1}});
  CHECK(decide_at(*eager, 0.2) == sim::Primitive::kFetch);
  CHECK(decide_at(*eager, 0.05) == sim::Primitive::kRoute);
  // Not registered: the registry is policies.def's, and only a line there adds one.
  CHECK(find("busy-path") == nullptr);
  CHECK(find("route") != nullptr);
}
