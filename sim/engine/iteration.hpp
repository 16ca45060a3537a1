// One decode iteration of a requester instance: plan (which chunks each request of the batch
// attends, and how the policy serves each one), then run it on the network, the holders' compute
// and the requester's own delays, then advance every request of the batch by one token.
#pragma once

#include "sim/engine/simulation.hpp"

#include <memory>

namespace xattn::sim::engine
{

namespace iteration
{
struct Plan;
}

struct IterationRunner {
  static void start(Simulation& sim, int inst);
  /// start() in its two halves: the step planned, then run. An expert-parallel group with two
  /// micro-batches plans every member's step before it runs any (each round's exchange reads them all).
  static std::shared_ptr<iteration::Plan> plan(Simulation& sim, int inst);
  static void run(Simulation& sim, std::shared_ptr<iteration::Plan> plan);
};

} // namespace xattn::sim::engine
