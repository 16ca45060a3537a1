#include "sim/engine/iteration_steps.hpp"
#include "sim/engine/moe.hpp"
#include "sim/engine/stop.hpp"

#include "sim/core/check.hpp"
#include "sim/core/fault.hpp"
#include "sim/core/memory.hpp"

#include <algorithm>
#include <functional>
#include <memory>

namespace xattn::sim::engine
{
using namespace iteration;

void IterationSteps::run_round()
{
  if (sc().micro_batches > 1) plan->round_begun = now(); // for calls_s
  if (plan->selects.empty()) {
    run_calls();
    return;
  }
  // The selection first: the indexer queries to every holder of the batch's context, their scans,
  // the candidates back; the calls once all of them answered.
  plan->selecting = static_cast<int>(plan->selects.size()) * sc().tp;
  plan->select_prices.resize(plan->selects.size() * sc().tp);
  for (int op = 0; op < static_cast<int>(plan->selects.size()); ++op)
    for (int k = 0; k < sc().tp; ++k)
      launch_select(op, k);
}

void IterationSteps::launch_select(int op, int rank)
{
  const Select& s = plan->selects[op];
  const topo::GpuId me = instance().gpus[rank], them = holder_gpu(s.holder, rank);
  ExchangePrice& x = plan->select_prices[op * sc().tp + rank];
  x = price(s, rank);
  const double L = plan->scale;
  const double start = stamp(timeline());
  IterationSteps self = *this;
  send(me, them, x.query * L, x.query_flow, (x.after_query + x.kernel.launch) * L, sc().transport,
       [self, op, rank, start]() mutable {
         const ExchangePrice& x = self.plan->select_prices[op * self.sc().tp + rank];
         const topo::GpuId them = self.holder_gpu(self.plan->selects[op].holder, rank);
         self.holder_compute(them).submit(
             (x.kernel.work * self.plan->scale).value(), x.kernel.share, [self, op, rank, start]() mutable {
               const ExchangePrice& x = self.plan->select_prices[op * self.sc().tp + rank];
               const double L = self.plan->scale;
               const topo::GpuId me = self.instance().gpus[rank],
                                 them = self.holder_gpu(self.plan->selects[op].holder, rank);
               self.send(them, me, x.answer * L, x.answer_flow, x.after_answer * L, self.sc().transport,
                         [self, op, rank, start]() mutable {
                           if (Timeline* tl = self.timeline(); tl != nullptr) {
                             const ExchangePrice& x = self.plan->select_prices[op * self.sc().tp + rank];
                             const Select& sel = self.plan->selects[op];
                             tl->leg(Leg::kIndex,
                                     {self.plan->iteration, self.instance().gpus[rank],
                                      self.holder_gpu(sel.holder, rank), op, &sel.served},
                                     start, now(), ((x.query + x.answer) * self.plan->scale).value());
                           }
                           XATTN_CHECK(self.plan->selecting > 0, "a selection of an iteration completed twice");
                           if (--self.plan->selecting == 0) self.run_calls();
                         });
             });
       });
}

void IterationSteps::run_calls()
{
  // The iteration's own operations first (counted outstanding), then, once, the background fetches
  // with all of their layers.
  const auto exchanges = static_cast<int>(plan->exchanges.size());
  const auto moves = static_cast<int>(plan->moves.size());
  plan->exchange_prices.resize(plan->exchanges.size() * sc().tp);
  for (int op = 0; op < exchanges + moves; ++op) {
    if (op >= exchanges && plan->moves[op - exchanges].background) continue;
    for (int k = 0; k < sc().tp; ++k) {
      ++plan->outstanding;
      if (op < exchanges)
        launch_exchange(op, k);
      else
        launch_move(op - exchanges, k, plan->scale);
    }
  }
  if (plan->round == 0)
    for (int op = 0; op < moves; ++op)
      if (plan->moves[op].background)
        for (int k = 0; k < sc().tp; ++k)
          launch_move(op, k, sc().model.layers);
  if (plan->outstanding == 0) round_done();
}

void IterationSteps::send(topo::GpuId src, topo::GpuId dst, Bytes bytes, const Flow& f, Seconds tail,
                          core::Transport transport, Callback done) const
{
  if (bytes.value() <= 0) {
    after(tail.value(), std::move(done));
    return;
  }
  Network& net = sim.network();
  const double leave = sim.posting().leave(src, dst, transport, now());
  if (leave <= now()) {
    net.transfer(src, dst, bytes.value(), f, tail.value(), std::move(done));
    return;
  }
  at(leave, [&net, src, dst, b = bytes.value(), f, t = tail.value(), d = std::move(done)]() mutable {
    net.transfer(src, dst, b, f, t, std::move(d));
  });
}

CallRef IterationSteps::call_ref(int op, int rank) const
{
  const auto exchanges = static_cast<int>(plan->exchanges.size());
  const bool routed = op < exchanges;
  const int h = routed ? plan->exchanges[op].holder : plan->moves[op - exchanges].holder;
  return {plan->iteration, instance().gpus[rank], holder_gpu(h, rank), op,
          routed ? &plan->exchanges[op].served : &plan->moves[op - exchanges].served};
}

void IterationSteps::launch_exchange(int op, int rank)
{
  const Exchange& e = plan->exchanges[op];
  const topo::GpuId me = instance().gpus[rank], them = holder_gpu(e.holder, rank);
  XATTN_CHECK(sim.holders().index_of_gpu[them] >= 0, "an exchange goes to a GPU that holds no chunk");
  ExchangePrice& x = plan->exchange_prices[op * sc().tp + rank];
  x = price(e, rank);
  const double L = plan->scale;
  const double start = stamp(timeline());
  IterationSteps self = *this;
  // Query out (its fixed delays and the kernel's launch fused into the same event), the holder's
  // kernel, answer back. Each step reads the call's price from the plan.
  send(me, them, x.query * L, x.query_flow, (x.after_query + x.kernel.launch) * L, sc().transport,
       [self, op, rank, start]() mutable {
         const ExchangePrice& x = self.plan->exchange_prices[op * self.sc().tp + rank];
         const double L = self.plan->scale;
         const topo::GpuId them = self.holder_gpu(self.plan->exchanges[op].holder, rank);
         ComputeUnit& gpu = self.holder_compute(them);
         Timeline* tl = self.timeline();
         const double arrived = stamp(tl);
         int lane = 0;
         if (tl != nullptr) {
           const CallRef c = self.call_ref(op, rank);
           const double probed = arrived - (x.kernel.launch * L).value();
           tl->leg(Leg::kQuery, c, start, probed - (x.after_query * L).value(), (x.query * L).value());
           tl->leg(Leg::kProbe, c, probed - (x.after_query * L).value(), probed);
           lane = tl->holder_begin(Leg::kKernel, c);
           tl->queue(Leg::kKernel, them, gpu.running() + 1);
         }
         gpu.submit((x.kernel.work * L).value(), x.kernel.share, [self, op, rank, start, arrived, lane]() mutable {
           const ExchangePrice& x = self.plan->exchange_prices[op * self.sc().tp + rank];
           const double L = self.plan->scale;
           const topo::GpuId me = self.instance().gpus[rank],
                             them = self.holder_gpu(self.plan->exchanges[op].holder, rank);
           Timeline* tl = self.timeline();
           const double computed = stamp(tl);
           if (tl != nullptr) {
             tl->holder_end(Leg::kKernel, self.call_ref(op, rank), lane, arrived);
             tl->queue(Leg::kKernel, them, self.holder_compute(them).running());
           }
           self.send(them, me, x.answer * L, x.answer_flow, x.after_answer * L, self.sc().transport,
                     [self, op, rank, start, computed]() mutable {
                       if (XATTN_FAULT(kLostAnswer)) return;
                       if (Timeline* tl = self.timeline(); tl != nullptr) {
                         const ExchangePrice& x = self.plan->exchange_prices[op * self.sc().tp + rank];
                         const CallRef c = self.call_ref(op, rank);
                         tl->leg(Leg::kAnswer, c, computed, now(), (x.answer * self.plan->scale).value());
                         tl->call(Primitive::kRoute, c, start, ((x.query + x.answer) * self.plan->scale).value());
                       }
                       self.op_done();
                     });
         });
       });
}

void IterationSteps::launch_move(int op, int rank, double L)
{
  const Move& mv = plan->moves[op];
  IterationSteps self = *this;
  Timeline* tl = timeline();
  const double start = stamp(tl);
  // The requester's GPU runs its splices and re-prefills one after another (own_compute.hpp).
  if (mv.prefill) {
    static bool overlap = false; // the fault, from its pass on: every re-prefill starts at once
    overlap = overlap || XATTN_FAULT(kPrefillOverlap);
    OwnCompute& gpu = instance().own[rank];
    const double begin = overlap ? now() : gpu.next_start();
    auto done = [self, tl, op, rank, start, begin]() mutable {
      if (tl != nullptr) {
        const CallRef c = self.call_ref(self.move_op(op), rank);
        tl->leg(Leg::kPrefill, c, begin, now());
        tl->call(Primitive::kLocal, c, start, 0);
      }
      self.move_done(op);
    };
    if (overlap)
      gpu.run_unqueued(prefill_round(mv), std::move(done));
    else
      gpu.run(prefill_round(mv), std::move(done));
    return;
  }
  const topo::GpuId me = instance().gpus[rank], them = holder_gpu(mv.holder, rank);
  const MovePrice x = price(mv, rank);
  XATTN_CHECK(sim.holders().index_of_gpu[them] >= 0, "a chunk is fetched from a GPU that holds none");
  StreamPool* pool = sim.holders().streams[sim.holders().index_of_gpu[them]].get();
  pool->acquire([=]() mutable {
    const double granted = stamp(tl);
    const int lane = tl != nullptr ? tl->holder_begin(Leg::kCopy, self.call_ref(self.move_op(op), rank)) : 0;
    if (tl != nullptr) tl->queue(Leg::kCopy, them, pool->waiting());
    // The copy stream is free when the bytes have moved; the splice follows on the requester,
    // one splice at a time per GPU (one per contiguous run, summed).
    self.send(them, me, x.bytes * L, x.chunk_flow, Seconds(0), self.sc().transport, [=]() mutable {
      pool->release();
      const double copied = stamp(tl);
      if (tl != nullptr) {
        tl->holder_end(Leg::kCopy, self.call_ref(self.move_op(op), rank), lane, granted, (x.bytes * L).value());
        tl->leg(Leg::kProbe, self.call_ref(self.move_op(op), rank), copied, copied + (x.after_chunk * L).value());
      }
      after((x.after_chunk * L).value(), [=]() mutable {
        // One rank, or GQA's KV heads split over the ranks: the rank fetched all it needs.
        if (self.sc().tp == 1 || !self.sc().model.mla()) {
          self.splice(op, rank, x.splice * L, start, x.bytes * L);
          return;
        }
        // Under tensor parallelism each rank fetched a tp-th of the latent from its holder rank
        // (every NIC of the node at work, each byte once over the scale-out fabric) and forwards
        // it to its peers over NVLink: MLA's one latent head is needed whole on every rank.
        for (int to = 0; to < self.sc().tp; ++to) {
          if (to == rank) continue;
          const MovePrice y = self.forward_price(self.plan->moves[op], rank, to);
          self.send(me, self.instance().gpus[to], y.bytes * L, y.chunk_flow, y.after_chunk * L, core::Transport::kGpu,
                    [=]() mutable { self.shard_landed(op, to, x.splice * L, start, x.bytes * L); });
        }
        self.shard_landed(op, rank, x.splice * L, start, x.bytes * L);
      });
    });
  });
  if (tl != nullptr) tl->queue(Leg::kCopy, them, pool->waiting());
}

void IterationSteps::shard_landed(int op, int rank, Seconds work, double start, Bytes bytes)
{
  int& shards = plan->moves[op].shards[rank];
  if (++shards < sc().tp) return;
  shards = 0; // the next round's (or a background fetch's) shards count afresh
  splice(op, rank, work, start, bytes);
}

void IterationSteps::splice(int op, int rank, Seconds work, double start, Bytes bytes)
{
  OwnCompute& gpu = instance().own[rank];
  const double begin = gpu.next_start();
  IterationSteps self = *this;
  Timeline* tl = timeline();
  gpu.run(work.value(), [self, tl, op, rank, start, begin, bytes]() mutable {
    if (tl != nullptr) {
      const CallRef c = self.call_ref(self.move_op(op), rank);
      tl->leg(Leg::kSplice, c, begin, now());
      tl->call(Primitive::kFetch, c, start, bytes.value());
    }
    self.move_done(op);
  });
}

void IterationSteps::move_done(int op)
{
  Move& mv = plan->moves[op];
  if (!mv.background) {
    op_done();
    return;
  }
  if (--mv.ranks_left > 0) return;
  // Landed on every GPU of the requester: its calls attend it locally from the next step.
  Simulation::Instance& in = instance();
  for (std::uint64_t k : mv.keys) {
    in.in_flight.erase(k);
    in.cache->insert(k, mv.key_bytes);
  }
}

void IterationSteps::op_done()
{
  XATTN_CHECK(plan->outstanding > 0, "an operation of an iteration completed twice");
  if (--plan->outstanding == 0) round_done();
}

void IterationSteps::round_done()
{
  const bool last = plan->round + 1 >= plan->rounds;
  const double gemm = model_work(plan->round);
  plan->gemm_s += gemm;
  double tail = plan->scale * (plan->local_work + plan->merge_work) + gemm + (last ? step_other() : 0.0);
  if (XATTN_FAULT(kEventInPast)) tail = -1e-6;
  if (sc().micro_batches > 1) {
    plan->calls_s += now() - plan->round_begun;
    pipeline_round(tail, gemm);
    return;
  }
  // The tail's kernels queue behind a background fetch's splice still running on the GPU (the
  // iteration's own moves have ended by now).
  IterationSteps self = *this;
  const double begin = OwnCompute::together_start(instance().own); // for the timeline
  const bool moe = sc().grouped() && round_moe_layers(plan->round) > 0;
  OwnCompute::run_together(instance().own, tail, [self, begin, gemm, moe]() mutable {
    if (Timeline* tl = self.timeline(); tl != nullptr && !self.plan->batch.empty()) // an idle GPU has no step
      for (topo::GpuId g : self.instance().gpus)
        tl->tail(g, self.plan->iteration, begin, self.plan->scale * self.plan->local_work,
                 self.plan->scale * self.plan->merge_work, gemm);
    if (moe) {
      self.plan->moe_arrived = now();
      MoePhase::arrive(self.sim, self);
    } else
      self.next_round();
  });
}

void IterationSteps::moe_done()
{
  plan->moe_s += now() - plan->moe_arrived;
  if (Timeline* tl = timeline(); tl != nullptr && !plan->batch.empty()) // an idle GPU has no step
    tl->moe(instance().gpus[0], plan->iteration, plan->moe_arrived);
  next_round();
}

void IterationSteps::next_round()
{
  if (++plan->round < plan->rounds)
    run_round();
  else
    finish();
}

void IterationSteps::finish()
{
  // A stop leaves here, between steps, with every figure consistent (stop.hpp).
  throw_if_stopped();
  core::memory_guard().tick();
  Simulation::Instance& in = instance();
  for (const Move& mv : plan->moves)
    if (!mv.background)
      for (std::uint64_t k : mv.keys)
        in.cache->insert(k, mv.key_bytes);
  const double t = now();
  const double step = t - plan->start;
  in.step_s += step;
  // A shared transfer may end a little early: both solvers stop at 1e-9 to 1e-10 of a rate, and a
  // double dates a step at the horizon to 1.2e-6 of 100 us (scenario.hpp). 1e-5 is above both.
  if (step < plan->lower_bound * (1 - 1e-5) - 1e-12) {
    ++sim.counts().invariant_violations;
    if (sim.counts().problems.size() < 10)
      sim.counts().problems.push_back(invariant_problem(kStepBounds, "a step lasted " + std::to_string(step) +
                                                                         " s, below its idle closed form " +
                                                                         std::to_string(plan->lower_bound) + " s"));
  }
  if (Timeline* tl = timeline(); tl != nullptr && !plan->batch.empty()) {
    std::vector<std::uint64_t> ids;
    std::vector<std::int64_t> steps;
    for (const Simulation::Active* q : plan->batch) {
      ids.push_back(q->id);
      steps.push_back(q->steps_done);
    }
    for (topo::GpuId g : in.gpus)
      tl->step(g, plan->iteration, plan->start, ids, steps);
  }
  if (!plan->batch.empty() && sc().grouped()) { // a GPU with tokens of its own
    if (plan->ep_received) sim.counts().ep_dispatch.push_back(static_cast<float>(plan->ep_dispatch_s));
    sim.counts().ep_combine.push_back(static_cast<float>(plan->ep_combine_s));
  }
  for (std::size_t i = 0; i < plan->batch.size(); ++i) {
    Simulation::Active* q = plan->batch[i];
    if (!plan->chunk.empty() && plan->chunk[i] > 0) { // a prefill chunk: a token only once the prompt is done
      ++sim.counts().prefill.chunks;
      q->prefill_left -= plan->chunk[i];
      q->prefill_before += plan->chunk[i];
      if (q->prefill_left > 0) continue;
    }
    if (t < q->last_end) {
      ++sim.counts().invariant_violations;
      sim.counts().problems.push_back(
          invariant_problem(kStepBounds, "step times of request " + std::to_string(q->id) + " went backwards"));
    }
    if (q->steps_done > 0) sim.counts().itl.push_back(static_cast<float>(t - q->last_end));
    q->last_end = t;
    if (q->steps_done == 0) q->first_token = t;
    ++q->steps_done;
    q->sum_step += step;
    q->max_step = std::max(q->max_step, step);
    sim.counts().step_latency.push_back(static_cast<float>(step));
    sim.counts().split_gemm += plan->gemm_s;
    sim.counts().split_moe += plan->moe_s;
    ++sim.counts().steps;
    sim.load().token(t);
  }
  // Finished requests leave (keeping the others' arrival order).
  for (auto it = in.active.begin(); it != in.active.end();) {
    if ((*it)->steps_done >= (*it)->steps_total) {
      sim.record_finished(**it, t);
      it = in.active.erase(it);
    } else {
      ++it;
    }
  }
  if (sc().grouped())
    sim.group_member_done(plan->inst);
  else
    sim.start_iteration(plan->inst);
}

std::shared_ptr<Plan> IterationRunner::plan(Simulation& sim, int inst)
{
  // A GPU of an expert-parallel group steps with the others even with nothing to decode: its
  // experts serve their tokens.
  XATTN_CHECK(inst >= 0 && inst < static_cast<int>(sim.instances().size()) &&
              (!sim.instances()[inst]->active.empty() || sim.instances()[inst]->group >= 0));
  IterationSteps it{sim, std::make_shared<Plan>()};
  it.plan->inst = inst;
  it.plan->iteration = sim.counts().iterations;
  it.build();
  return it.plan;
}

void IterationRunner::run(Simulation& sim, std::shared_ptr<Plan> plan)
{
  IterationSteps{sim, std::move(plan)}.run_round();
}

void IterationRunner::start(Simulation& sim, int inst)
{
  run(sim, plan(sim, inst));
}

} // namespace xattn::sim::engine
