// Expert parallelism in the engine (engine.step full, ep > 1): the GPUs of one serving instance
// step together, and after each round's attention and dense layers their MoE layers' dispatch
// and combine move on the network, with each GPU's routed experts in between. Internal to
// sim/engine.
#pragma once

#include "sim/engine/expert_draws.hpp"
#include "sim/engine/iteration_steps.hpp"

#include <memory>
#include <vector>

namespace xattn::sim::engine
{

struct Simulation::Group {
  std::vector<int> members;                              ///< instances (one GPU each), in order
  std::vector<std::shared_ptr<iteration::Plan>> arrived; ///< by member: its step, once at this round's MoE layers
  int arrivals = 0;
  int done = 0;                       ///< members that ended this step
  std::unique_ptr<ExpertDraws> draws; ///< instances.expert_routing drawn; null: expected shares
};

struct MoePhase {
  /// Member `s` reached the MoE layers of its round; the last to arrive starts the phase.
  static void arrive(Simulation& sim, IterationSteps s);

private:
  struct Exchange;
  using ExchangePtr = std::shared_ptr<Exchange>;
  /// GPU r's tokens have one more of their results back (all of them: its round goes on).
  static void result_back(const ExchangePtr& x, int r);
  /// One message of the round's MoE layers from GPU r to GPU t, carrying GPU `owner`'s pairs.
  static void message(const ExchangePtr& x, int r, int t, int owner, EpOp op, Callback then);
  /// GPU t's experts, once every dispatch to it arrived (`received`: some did).
  static void compute(const ExchangePtr& x, int t, bool received);
};

} // namespace xattn::sim::engine
