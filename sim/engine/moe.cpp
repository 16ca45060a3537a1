#include "sim/engine/moe.hpp"

#include "sim/core/check.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <utility>

namespace xattn::sim::engine
{

void Simulation::start_group(int group)
{
  Group& g = *groups_[group];
  const bool any =
      std::any_of(g.members.begin(), g.members.end(), [this](int m) { return !instances_[m]->active.empty(); });
  if (!any) {
    for (int m : g.members)
      instances_[m]->busy = false;
    if (timeline_ && std::none_of(instances_.begin(), instances_.end(), [](const auto& i) { return i->busy; }))
      timeline_->idle();
    return;
  }
  if (timeline_) timeline_->busy();
  g.done = 0;
  for (int m : g.members) {
    instances_[m]->busy = true;
    if (!instances_[m]->active.empty()) ++counts_.iterations;
  }
  if (sc_.micro_batches == 1) {
    for (int m : g.members)
      IterationRunner::start(*this, m);
    return;
  }
  g.rounds.clear();
  g.plans.clear();
  for (int m : g.members)
    g.plans.push_back(IterationRunner::plan(*this, m));
  for (const std::shared_ptr<iteration::Plan>& plan : g.plans)
    IterationRunner::run(*this, plan);
}

void Simulation::group_member_done(int inst)
{
  Group& g = *groups_[instances_[inst]->group];
  XATTN_CHECK(g.done < static_cast<int>(g.members.size()), "a GPU of an expert-parallel group ended a step twice");
  if (++g.done == static_cast<int>(g.members.size())) start_group(instances_[inst]->group);
}

// GPU r's tokens have all of their results back (or one more did).
void MoePhase::result_back(const ExchangePtr& x, int r, int k)
{
  int& pending = x->pending[x->at(k, r)];
  XATTN_CHECK(pending > 0, "an MoE layer's results came back twice");
  if (--pending > 0) return;
  iteration::Plan& plan = *x->members[r].plan;
  if (!plan.batch.empty()) plan.ep_combine_s += now() - x->experts_end[x->at(k, r)];
  if (x->parts == 1)
    x->members[r].moe_done();
  else
    x->members[r].part_done(k, x->round);
}

// One message of the round's MoE layers from GPU r to GPU t, carrying GPU `owner`'s pairs.
// DeepEP's low-latency kernels write each token to each of its experts on its own: a message
// moves as many streams as it carries token-expert pairs of one layer (at least one), so that a
// GPU pair with more of them takes more of a shared link, and the pairs of a link's bottleneck
// end together.
void MoePhase::message(const ExchangePtr& x, int r, int t, int owner, EpOp op, Callback then)
{
  send(x, r, t, x->pairs_of(owner, owner == r ? t : r) / x->parts, op, std::move(then));
}

void MoePhase::send(const ExchangePtr& x, int r, int t, double pairs, EpOp op, Callback then)
{
  // The normal kernels move a GPU pair's tokens in bulk chunks: one stream (pairs >= 0).
  const int streams = x->nodes ? 1 : std::max(1, static_cast<int>(pairs + 0.5));
  Simulation& sim = *x->sim;
  sim.send_ep(sim.instances()[x->members[r].plan->inst]->gpus[0], sim.instances()[x->members[t].plan->inst]->gpus[0],
              pairs, x->layers, streams, op, std::move(then));
}

void Simulation::send_ep(topo::GpuId from, topo::GpuId to, double pairs, double layers, int streams, EpOp op,
                         Callback then)
{
  const Bytes per_layer = (op == EpOp::kDispatch ? dispatch_bytes(sc_.model) : combine_bytes(sc_.model)) * pairs;
  EpPrice e = price_ep(sc_.profile, path_cost(from, to), per_layer, op);
  e.flow.streams = streams;
  net_->transfer(from, to, (per_layer * layers).value(), e.flow, (e.after * layers).value(), std::move(then));
}

// GPU t's experts (one micro-batch) run once every dispatch to it arrived, after what its GPU
// already queued; then each token's outputs go back to its GPU.
void MoePhase::compute(const ExchangePtr& x, int t, int k)
{
  Simulation::Instance& in = *x->sim->instances()[x->members[t].plan->inst];
  in.own[0].run(x->work_of(k, t), [x, t, k]() {
    x->experts_end[x->at(k, t)] = now();
    combine(x, t, k);
  });
}

// The results of micro-batch k's tokens on GPU t's experts back to each peer they came from:
// directly, or (prefill) within t's node directly and to another node's GPU through the relay of
// t's node, which sums them and sends them on once a token.
void MoePhase::combine(const ExchangePtr& x, int t, int k)
{
  for (int r = 0; r < x->n; ++r) {
    if (r == t || x->pairs_of(r, t) <= 0) continue;
    if (!x->nodes || x->nodes->node[r] == x->nodes->node[t]) {
      message(x, t, r, r, EpOp::kCombine, [x, r, k]() { result_back(x, r, k); });
      continue;
    }
    const int nd = x->nodes->node[t], g = x->nodes->relay(r, nd);
    if (g == t)
      at_relay(x, r, nd, k);
    else
      message(x, t, g, r, EpOp::kCombine, [x, r, nd, k]() { at_relay(x, r, nd, k); });
  }
  result_back(x, t, k);
}

void MoePhase::at_relay(const ExchangePtr& x, int r, int nd, int k)
{
  if (--x->relay_left[x->relay_at(k, r, nd)] > 0) return;
  send(x, x->nodes->relay(r, nd), r, x->reaching(r, nd), EpOp::kCombine, [x, r, k]() { result_back(x, r, k); });
}

// Sends GPU r's dispatch of micro-batch k to every peer its tokens go to: directly, or (prefill,
// DeepEP's normal kernels) within its node directly and to another node once a token with an
// expert there, to the relay, which forwards each of its node's GPUs their pairs.
void MoePhase::dispatch(const ExchangePtr& x, int r, int k)
{
  for (int t = 0; t < x->n; ++t)
    if (t != r && x->pairs_of(r, t) > 0) {
      x->left[x->at(k, t)] = now();
      if (!x->nodes || x->nodes->node[r] == x->nodes->node[t])
        message(x, r, t, r, EpOp::kDispatch, [x, t, k]() { landed(x, t, k); });
    }
  if (!x->nodes) return;
  for (int nd = 0; nd < x->nodes->nodes(); ++nd) {
    if (nd == x->nodes->node[r] || x->relay_left[x->relay_at(k, r, nd)] == 0) continue;
    const int g = x->nodes->relay(r, nd);
    send(x, r, g, x->reaching(r, nd), EpOp::kDispatch, [x, r, g, nd, k]() {
      for (int t : x->nodes->on[nd])
        if (t != g && x->pairs_of(r, t) > 0)
          send(x, g, t, x->pairs_of(r, t) / x->parts, EpOp::kDispatch, [x, t, k]() { landed(x, t, k); });
      if (x->pairs_of(r, g) > 0) landed(x, g, k);
    });
  }
}

void MoePhase::landed(const ExchangePtr& x, int t, int k)
{
  if (--x->incoming[x->at(k, t)] > 0) return;
  iteration::Plan& plan = *x->members[t].plan;
  plan.ep_dispatch_s += now() - x->left[x->at(k, t)];
  plan.ep_received = true;
  if (x->parts == 1)
    compute(x, t, k);
  else
    x->members[t].kernel_ready(x->round * 4 + 2 + k); // moe_pipeline.cpp: its experts, in its program's turn
}

MoePhase::ExchangePtr MoePhase::make(Simulation& sim, Simulation::Group& g, std::vector<IterationSteps> members,
                                     int round)
{
  auto x = std::make_shared<Exchange>();
  x->sim = &sim;
  x->members = std::move(members);
  const Scenario& sc = sim.scenario();
  const ModelSpec& m = sc.model;
  const int n = x->n = static_cast<int>(x->members.size());
  x->round = round;
  x->layers = x->members[0].round_moe_layers(x->round);
  const int parts = x->parts = sc.micro_batches;
  std::vector<int> tokens(n);
  for (int r = 0; r < n; ++r)
    tokens[r] = static_cast<int>(std::lround(x->members[r].plan->tokens)); // decodes and prefill chunks
  x->pairs.assign(static_cast<std::size_t>(n) * n, 0.0);
  x->work.assign(static_cast<std::size_t>(parts) * n, 0.0);
  if (g.draws != nullptr) {
    // Each token's experts drawn, per layer: each GPU pair carries its own count, and each GPU's
    // experts run the pairs it received, each micro-batch's apart.
    for (int k = 0; k < parts; ++k) {
      std::vector<int> share(n);
      for (int r = 0; r < n; ++r)
        share[r] = tokens[r] / parts + (k < tokens[r] % parts ? 1 : 0);
      ExpertRound drawn = g.draws->draw(share, x->layers, [&](double pairs, double experts) {
        return expert_gemm_time(m, sc.profile, pairs, experts).value();
      });
      for (std::size_t i = 0; i < x->pairs.size(); ++i)
        x->pairs[i] += drawn.pairs[i];
      for (int t = 0; t < n; ++t)
        x->work[x->at(k, t)] = drawn.work[t];
    }
    for (double& p : x->pairs) // a message carries the round's layers, each its mean share
      p /= std::max(1, x->layers);
    for (int r = 0; r < n; ++r)
      x->pairs[static_cast<std::size_t>(r) * n + r] = 0; // a GPU's own experts need no message
  } else {
    // Each token goes to experts_per_token experts spread evenly over the ep GPUs: a GPU sends each
    // peer its tokens x experts_per_token / ep token-expert pairs, and keeps its own share local.
    double group_tokens = 0;
    for (int r = 0; r < n; ++r) {
      for (int t = 0; t < n; ++t)
        if (t != r)
          x->pairs[static_cast<std::size_t>(r) * n + t] = static_cast<double>(tokens[r]) * m.experts_per_token / sc.ep;
      group_tokens += tokens[r];
    }
    // Each micro-batch's experts read their weights again.
    std::fill(x->work.begin(), x->work.end(),
              x->layers * expert_time(m, sc.profile, sc.ep, group_tokens / parts).value());
  }
  x->tokens.assign(tokens.begin(), tokens.end());
  // A round that prefills moves its tokens as DeepEP's normal kernels do (ep_nodes.hpp).
  const bool prefilling = std::any_of(x->members.begin(), x->members.end(), [](const IterationSteps& s) {
    return std::any_of(s.plan->chunk.begin(), s.plan->chunk.end(), [](double c) { return c > 0; });
  });
  if (prefilling) {
    std::vector<topo::GpuId> gpus;
    for (const IterationSteps& s : x->members)
      gpus.push_back(sim.instances()[s.plan->inst]->gpus[0]);
    x->nodes.emplace(*sc.topology, gpus);
  }
  const int nodes = x->nodes ? x->nodes->nodes() : 0;
  const std::size_t cells = static_cast<std::size_t>(parts) * n;
  x->incoming.assign(cells, 0);
  x->pending.assign(cells, 1);
  x->left.assign(cells, now());
  x->experts_end.assign(cells, 0);
  x->relay_left.assign(cells * nodes, 0);
  for (int k = 0; k < parts; ++k)
    for (int r = 0; r < n; ++r)
      for (int t = 0; t < n; ++t) {
        if (x->pairs_of(r, t) <= 0) continue;
        ++x->incoming[x->at(k, t)];
        if (!x->nodes || x->nodes->node[r] == x->nodes->node[t])
          ++x->pending[x->at(k, r)];
        else if (x->relay_left[x->relay_at(k, r, x->nodes->node[t])]++ == 0)
          ++x->pending[x->at(k, r)]; // once a node: its relay's sum
      }
  return x;
}

void MoePhase::arrive(Simulation& sim, IterationSteps s)
{
  Simulation::Group& g = *sim.groups()[sim.instances()[s.plan->inst]->group];
  g.arrived.resize(g.members.size());
  const auto at = static_cast<std::size_t>(s.plan->inst - g.members.front());
  XATTN_CHECK(g.arrived[at] == nullptr, "a GPU reached its group's MoE layers twice");
  g.arrived[at] = s.plan;
  if (++g.arrivals < static_cast<int>(g.members.size())) return;
  g.arrivals = 0;
  std::vector<IterationSteps> members;
  for (std::shared_ptr<iteration::Plan>& plan : g.arrived)
    members.push_back(IterationSteps{sim, std::exchange(plan, nullptr)});
  for (const IterationSteps& it : members)
    XATTN_CHECK(it.plan->round == members[0].plan->round, "the GPUs of a group reached different rounds");
  const int round = members[0].plan->round;
  const ExchangePtr x = make(sim, g, std::move(members), round);
  for (int r = 0; r < x->n; ++r)
    dispatch(x, r, 0);
  for (int t = 0; t < x->n; ++t)
    if (x->incoming[t] == 0) compute(x, t, 0);
}

} // namespace xattn::sim::engine
