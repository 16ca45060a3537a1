// Expert parallelism in the engine (engine.step full, ep > 1): the GPUs of one serving instance
// step together, and after each round's attention and dense layers their MoE layers' dispatch
// and combine move on the network, with each GPU's routed experts in between. Internal to
// sim/engine.
#pragma once

#include "sim/engine/ep_nodes.hpp"
#include "sim/engine/expert_draws.hpp"
#include "sim/engine/iteration_steps.hpp"

#include <memory>
#include <optional>
#include <vector>

namespace xattn::sim::engine
{

struct MoePhase {
  struct Exchange;
  using ExchangePtr = std::shared_ptr<Exchange>;
  /// Member `s` reached the MoE layers of its round; the last to arrive starts the phase.
  static void arrive(Simulation& sim, IterationSteps s);
  // instances.micro_batches 2 (moe_pipeline.cpp):
  /// Member `s` ended micro-batch `k`'s compute before round `round`'s MoE layers: its dispatch leaves.
  static void part_ready(Simulation& sim, const IterationSteps& s, int k, int round);
  /// Instance `inst`'s experts on micro-batch `k` of the round, s.
  static double expert_work(const Exchange& x, int inst, int k);
  /// Member `s`'s experts on micro-batch `k` of round `round` ended: its combine leaves.
  static void experts_done(Simulation& sim, const IterationSteps& s, int k, int round);

private:
  /// The round's exchange among `members`: who sends whom how many token-expert pairs, each GPU's
  /// experts, what each GPU waits for.
  static ExchangePtr make(Simulation& sim, Simulation::Group& g, std::vector<IterationSteps> members, int round);
  /// GPU r's dispatch of micro-batch k leaves for every peer its tokens go to.
  static void dispatch(const ExchangePtr& x, int r, int k);
  /// One more of what GPU t's experts wait for on micro-batch k is there (all of it: they run).
  static void landed(const ExchangePtr& x, int t, int k);
  /// GPU r's tokens of micro-batch k have one more of their results back (all of them: the round,
  /// or that micro-batch of it, goes on).
  static void result_back(const ExchangePtr& x, int r, int k);
  /// One message of the round's MoE layers from GPU r to GPU t, carrying GPU `owner`'s pairs: a
  /// dispatch (owner r) those with t, a combine (owner t, or on its way to t through a relay) those
  /// with r.
  static void message(const ExchangePtr& x, int r, int t, int owner, EpOp op, Callback then);
  /// One message of `pairs` token-expert pairs (or tokens) of the round's MoE layers from r to t.
  static void send(const ExchangePtr& x, int r, int t, double pairs, EpOp op, Callback then);
  /// A result of GPU r's tokens of micro-batch k reached node nd's relay; with the node's last,
  /// their sum goes on to r.
  static void at_relay(const ExchangePtr& x, int r, int nd, int k);
  /// One micro-batch: GPU t's experts, once every dispatch to it is there, then its combine.
  static void compute(const ExchangePtr& x, int t, int k);
  /// GPU t's experts on micro-batch k ended: the results go back.
  static void combine(const ExchangePtr& x, int t, int k);
};

// One round's MoE layers across a group: what is still outstanding. Every callback of the round
// holds it, and reads what it needs from it (a capture of a pointer and a GPU's index: no
// allocation per message).
struct MoePhase::Exchange {
  Simulation* sim = nullptr;
  std::vector<IterationSteps> members;
  int n = 0;                 ///< GPUs
  std::vector<double> pairs; ///< [r * n + t]: token-expert pairs of GPU r's tokens on GPU t's experts, a layer
  int layers = 0;            ///< MoE layers in the round
  int round = 0;             ///< the members' round
  /// instances.micro_batches: each GPU pair's tokens move in one message per micro-batch, each
  /// micro-batch's after its own compute (moe_pipeline.cpp).
  int parts = 1;
  std::vector<double> work; ///< [k * n + t]: GPU t's experts on micro-batch k, all of the round's layers, s
  double pairs_of(int r, int t) const { return pairs[static_cast<std::size_t>(r) * n + t]; }
  double work_of(int k, int t) const { return work[static_cast<std::size_t>(k) * n + t]; }
  std::size_t at(int k, int gpu) const { return static_cast<std::size_t>(k) * n + gpu; }
  // By [k * n + gpu]:
  std::vector<int> incoming;       ///< dispatches to it not arrived (and its own compute), before its experts run
  std::vector<int> pending;        ///< its tokens' results not back yet (combines, its own experts)
  std::vector<double> left;        ///< when the last dispatch to it left
  std::vector<double> experts_end; ///< when its experts ended
  std::vector<double> tokens;      ///< by GPU: its tokens this round (decodes and prefill chunks)
  /// A round that prefills: the group's GPUs by node (DeepEP's normal kernels); empty otherwise.
  std::optional<EpNodes> nodes;
  /// By [(k * n + r) * nodes + nd]: results of GPU r's tokens of micro-batch k not yet summed on
  /// node nd's relay (before they are: its GPUs that hold any of their experts).
  std::vector<int> relay_left;
  std::size_t relay_at(int k, int r, int nd) const { return at(k, r) * nodes->nodes() + nd; }
  /// GPU r's tokens of one micro-batch with an expert on node nd: sent there once each.
  double reaching(int r, int nd) const
  {
    return nodes->reaching(sim->scenario().model, sim->scenario().ep, tokens[r] / parts, nd);
  }
};

struct Simulation::Group {
  std::vector<int> members;                              ///< instances (one GPU each), in order
  std::vector<std::shared_ptr<iteration::Plan>> arrived; ///< by member: its step, once at this round's MoE layers
  int arrivals = 0;
  int done = 0;                       ///< members that ended this step
  std::unique_ptr<ExpertDraws> draws; ///< instances.expert_routing drawn; null: expected shares
  // instances.micro_batches 2: every member's step (by member), and each round's exchange, made
  // when its first member sends.
  std::vector<std::shared_ptr<iteration::Plan>> plans;
  std::vector<MoePhase::ExchangePtr> rounds;
};

} // namespace xattn::sim::engine
