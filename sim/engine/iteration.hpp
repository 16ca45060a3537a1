// One decode iteration of a requester instance: plan (which chunks each request of the batch
// attends, and how the policy serves each one), then run it on the network, the holders' compute
// and the requester's own delays, then advance every request of the batch by one token.
#pragma once

#include "sim/engine/simulation.hpp"

namespace xattn::sim::engine
{

struct IterationRunner {
  static void start(Simulation& sim, int inst);
};

} // namespace xattn::sim::engine
