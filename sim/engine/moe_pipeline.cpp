// Two micro-batches (instances.micro_batches 2), as DeepSeek serves. Each GPU runs one program, in
// order, each kernel once the one before it ended and what it waits for is there; per round
// (layer granularity: per layer):
//   1. the first half of the round's compute before its MoE layers (attention, GEMMs; its first
//      micro-batch), once the round's calls are done, which start once the last round's first
//      micro-batch had all of its results back; as it ends, that micro-batch's dispatch leaves;
//   2. the second half, once the last round's second micro-batch had its results back; then its
//      dispatch leaves;
//   3. the experts on the first micro-batch, once every peer's dispatch of it arrived; then its
//      combine leaves;
//   4. the experts on the second, likewise.
// A micro-batch's all-to-all thus runs beside the other's compute where the dependencies allow,
// and the GPU waits where it is longer: a layer lasts as long as its longest chain of kernels and
// messages, which the simulation finds rather than assumes. Internal to sim/engine.
#include "sim/engine/moe.hpp"

#include "sim/core/check.hpp"

#include <algorithm>
#include <memory>

namespace xattn::sim::engine
{
namespace
{
constexpr int kKernels = 4; ///< a round's kernels in the program: two halves, two micro-batches' experts
}

void IterationSteps::pipeline_round(double tail, double gemm)
{
  make_program();
  plan->tails_s += tail;
  // Each half of this round's compute: a kernel may start after the next round has begun (a
  // round without MoE layers ends with its first half).
  const auto at = static_cast<std::size_t>(plan->round);
  plan->half_tail[at] = tail / 2;
  plan->half_gemm[at] = gemm / 2;
  kernel_ready(plan->round * kKernels);
}

void IterationSteps::make_program()
{
  if (!plan->ready.empty()) return;
  plan->ready.assign(static_cast<std::size_t>(plan->rounds) * kKernels, 0);
  plan->ready[1] = 1; // no round before the first: its second half waits for nothing
  plan->half_tail.assign(static_cast<std::size_t>(plan->rounds), 0.0);
  plan->half_gemm.assign(static_cast<std::size_t>(plan->rounds), 0.0);
}

void IterationSteps::kernel_ready(int kernel)
{
  make_program();
  plan->ready[kernel] = 1;
  run_program();
}

void IterationSteps::run_program()
{
  const auto kernels = static_cast<int>(plan->ready.size());
  while (!plan->running && plan->next_kernel < kernels) {
    const int k = plan->next_kernel, round = k / kKernels, stage = k % kKernels;
    if (stage >= 2 && (!sc().grouped() || round_moe_layers(round) == 0)) { // no experts in this round
      ++plan->next_kernel;
      continue;
    }
    if (!plan->ready[k]) return;
    double work = plan->half_tail[static_cast<std::size_t>(round)];
    if (stage >= 2) {
      const MoePhase::Exchange& x = *sim.groups()[instance().group]->rounds[round];
      work = MoePhase::expert_work(x, plan->inst, stage - 2);
    }
    plan->running = true;
    IterationSteps self = *this;
    const double begin = OwnCompute::together_start(instance().own);
    OwnCompute::run_together(instance().own, work, [self, k, begin]() mutable { self.kernel_done(k, begin); });
    return;
  }
}

void IterationSteps::kernel_done(int kernel, double begin)
{
  plan->running = false;
  ++plan->next_kernel;
  const int round = kernel / kKernels, stage = kernel % kKernels;
  const bool moe = sc().grouped() && round_moe_layers(round) > 0;
  if (stage < 2) {
    if (Timeline* tl = timeline(); tl != nullptr && !plan->batch.empty()) // an idle GPU has no step
      for (topo::GpuId g : instance().gpus)
        tl->tail(g, plan->iteration, begin, plan->scale * plan->local_work / 2, plan->scale * plan->merge_work / 2,
                 plan->half_gemm[static_cast<std::size_t>(round)]);
    plan->part_sent[stage] = now();
    if (moe)
      MoePhase::part_ready(sim, *this, stage, round);
    else
      part_done(stage, round);
  } else {
    MoePhase::experts_done(sim, *this, stage - 2, round);
  }
  run_program();
}

void IterationSteps::part_done(int k, int round)
{
  if (Timeline* tl = timeline(); tl != nullptr && !plan->batch.empty() && round_moe_layers(round) > 0)
    tl->moe(instance().gpus[0], plan->iteration, plan->part_sent[k]);
  if (round + 1 >= plan->rounds) {
    XATTN_CHECK(plan->parts_left > 0, "a step's last micro-batch ended twice");
    if (--plan->parts_left > 0) return;
    // What the step waited for past its own compute and its calls: the MoE layers.
    plan->moe_s = std::max(0.0, now() - plan->start - plan->tails_s - plan->calls_s);
    finish();
    return;
  }
  if (k == 0)
    next_round(); // its calls, then its first half
  else
    kernel_ready((round + 1) * kKernels + 1);
}

void MoePhase::part_ready(Simulation& sim, const IterationSteps& s, int k, int round)
{
  Simulation::Group& g = *sim.groups()[sim.instances()[s.plan->inst]->group];
  if (g.rounds.size() <= static_cast<std::size_t>(round)) g.rounds.resize(round + 1);
  ExchangePtr& slot = g.rounds[round];
  if (slot == nullptr) {
    // The first member to send makes the round's exchange, from every member's step.
    std::vector<IterationSteps> members;
    for (const std::shared_ptr<iteration::Plan>& plan : g.plans) {
      XATTN_CHECK(plan != nullptr, "a member of an expert-parallel group has no step");
      members.push_back(IterationSteps{sim, plan});
    }
    const ExchangePtr made = slot = make(sim, g, std::move(members), round);
    for (int part = 0; part < made->parts; ++part) // nothing comes to these experts: they run in turn
      for (int t = 0; t < made->n; ++t)
        if (made->incoming[made->at(part, t)] == 0) made->members[t].kernel_ready(round * kKernels + 2 + part);
  }
  const ExchangePtr x = g.rounds[round];
  const int r = s.plan->inst - g.members.front();
  XATTN_CHECK(x->members[r].plan == s.plan, "a GPU sent another step's dispatch");
  dispatch(x, r, k);
}

double MoePhase::expert_work(const Exchange& x, int inst, int k)
{
  return x.work_of(k, inst - x.members.front().plan->inst);
}

void MoePhase::experts_done(Simulation& sim, const IterationSteps& s, int k, int round)
{
  const ExchangePtr x = sim.groups()[sim.instances()[s.plan->inst]->group]->rounds[round];
  const int t = s.plan->inst - x->members.front().plan->inst;
  x->experts_end[x->at(k, t)] = now();
  combine(x, t, k);
}

} // namespace xattn::sim::engine
