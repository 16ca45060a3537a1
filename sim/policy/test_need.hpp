// For policy tests: a need whose prices, load and session forecast a test sets by hand, with no
// other reuse and nothing of an engine behind it.
#pragma once

#include "sim/policy/policy.hpp"

#include <cstdint>

namespace xattn::sim::policy::test
{

class PricedNeed final : public Need
{
public:
  PricedNeed(int inst, std::uint64_t chunk, const CallCost& prices, const Load& load = {}, double session_reuse = 0)
      : inst_(inst), chunk_(chunk), prices_(prices), load_(load), session_reuse_(session_reuse)
  {
  }
  int instance() const override { return inst_; }
  std::uint64_t chunk() const override { return chunk_; }
  CallCost price() const override { return prices_; }
  double expected_reuse() const override { return 0; }
  double session_reuse() const override { return session_reuse_; }
  double true_reuse() const override { return 0; }
  Load load() const override { return load_; }

private:
  int inst_;
  std::uint64_t chunk_;
  CallCost prices_;
  Load load_;
  double session_reuse_;
};

} // namespace xattn::sim::policy::test
