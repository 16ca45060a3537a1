#include "sim/engine/iteration.hpp"

#include "sim/engine/clock.hpp"
#include "sim/engine/state.hpp"
#include "sim/engine/stop.hpp"

#include "sim/core/check.hpp"
#include "sim/core/fault.hpp"
#include "sim/core/memory.hpp"

#include <algorithm>
#include <functional>
#include <memory>

namespace xattn::sim::engine
{
namespace
{

struct Exchange {
  int holder = 0;
  const void* owner = nullptr; ///< the request, when batching is off
  double rows = 0, tokens = 0, token_rows = 0, decoded = 0;
  int requests = 0;
  std::vector<std::uint64_t> served; ///< ids of the requests it serves (kept for the timeline only)
};

struct Move {
  int holder = 0;
  bool prefill = false;
  double tokens = 0; ///< moved or re-prefilled (from the start of its chunk)
  int runs = 1;
  std::vector<std::uint64_t> keys;   ///< cache entries it fills
  double key_bytes = 0;              ///< bytes of each entry (all layers)
  std::vector<std::uint64_t> served; ///< ids of the requests it serves (kept for the timeline only)
  bool background = false;           ///< a fetch the iteration does not wait for (engine.fetch: background)
  int ranks_left = 0;                ///< background: the requester's GPUs it has not landed on yet
};

struct Plan {
  int inst = 0;
  std::uint64_t iteration = 0; ///< the simulation's count of iterations when this one started
  double start = 0;
  int round = 0, rounds = 1;
  double scale = 1; ///< layers per exchange (step granularity: all of them)
  std::vector<Simulation::Active*> batch;
  std::vector<Exchange> exchanges;
  std::vector<Move> moves;
  double local_work = 0;  ///< requester attention per layer, s
  double merge_work = 0;  ///< requester merge per layer, s
  double lower_bound = 0; ///< the iteration's idle closed-form duration, s
  int outstanding = 0;
};

// What the policy may read about one need: its closed-form price on its path and the reuse
// estimates. Priced only when the policy asks.
class NeedView final : public policy::Need
{
public:
  /// `queued`: the requester GPU's work already planned this step before a new splice or
  /// re-prefill could start (the iteration's own, serial), s.
  NeedView(Simulation& sim, const Simulation::Instance& in, const Simulation::Active& q, std::uint64_t chunk,
           CallShape shape, topo::GpuId holder, double queued)
      : sim_(sim), in_(in), q_(q), chunk_(chunk), shape_(shape), holder_(holder), queued_(queued)
  {
  }
  int instance() const override { return in_.index; }
  std::uint64_t chunk() const override { return chunk_; }
  CallCost price() const override;
  double expected_reuse() const override;
  double true_reuse() const override;

private:
  Simulation& sim_;
  const Simulation::Instance& in_;
  const Simulation::Active& q_;
  std::uint64_t chunk_;
  CallShape shape_;
  topo::GpuId holder_;
  double queued_;
};

// The time now when a timeline records it, else nothing read: without one, its hooks cost the
// branch on the pointer alone.
double stamp(const Timeline* tl)
{
  return tl != nullptr ? now() : 0.0;
}

} // namespace

struct IterationSteps {
  Simulation& sim;
  std::shared_ptr<Plan> plan;

  const Scenario& sc() const { return sim.sc_; }
  Simulation::Instance& instance() const { return *sim.instances_[plan->inst]; }
  topo::GpuId holder_gpu(int holder, int rank) const { return sc().holders[holder * sc().tp + rank]; }

  void build();
  void run_round();
  void op_done();
  void round_done();
  void finish();
  void launch_exchange(int op, int rank);
  /// Launches move `op` (counted from the first move) on `rank`, `L` layers' worth.
  void launch_move(int op, int rank, double L);
  /// Ends move `op` on one rank: the iteration's operation, or a background fetch's landing.
  void move_done(int op);
  Timeline* timeline() const { return sim.timeline_.get(); }
  /// Call `op` (the exchanges, then the moves) of rank `rank` as the timeline names it.
  CallRef call_ref(int op, int rank) const;
  /// Move `m`'s number among all of the iteration's calls.
  int move_op(int m) const { return static_cast<int>(plan->exchanges.size()) + m; }
  /// Moves `bytes` (none: only the tail passes) and calls `done` `tail` after the last byte.
  void send(topo::GpuId src, topo::GpuId dst, Bytes bytes, const Flow& f, Seconds tail, std::function<void()> done);
  Options options() const { return {sc().transport, sc().what_if.collapsed_response, sc().corpus.position_aligned}; }
  ExchangePrice price(const Exchange& e, int rank) const
  {
    const topo::GpuId me = instance().gpus[rank], them = holder_gpu(e.holder, rank);
    const ExchangeShape shape{e.rows,
                              e.decoded / sc().tp,
                              e.tokens,
                              e.token_rows,
                              sc().what_if.compute_amortisation ? 1.0 : static_cast<double>(e.requests),
                              sc().selection.sparse};
    return price_exchange(sc().model, sc().profile, shape, sim.net_->path_cost(me, them), sim.net_->path_cost(them, me),
                          options());
  }
  MovePrice price(const Move& mv, int rank) const
  {
    const topo::GpuId me = instance().gpus[rank], them = holder_gpu(mv.holder, rank);
    return price_move(sc().model, sc().profile, mv.tokens, mv.runs, sc().selection.sparse, 1.0 / sc().tp,
                      sim.net_->path_cost(them, me), sim.net_->path_cost(me, them), options());
  }
  double exchange_idle(const Exchange& e) const { return plan->scale * price(e, 0).idle().value(); }
  /// One round's share of a re-prefill, on one GPU of the requester.
  double prefill_round(const Move& mv) const
  {
    return prefill_time(sc().model, sc().profile, mv.tokens, 0, sc().tp).value() / plan->rounds;
  }
  double move_idle(const Move& mv) const
  {
    if (mv.prefill) return prefill_round(mv);
    return plan->scale * price(mv, 0).idle().value();
  }
  /// What a move keeps the requester's GPU busy with, one after another with its other moves.
  double move_serial(const Move& mv) const
  {
    return mv.prefill ? prefill_round(mv) : plan->scale * price(mv, 0).splice.value();
  }
};

CallCost NeedView::price() const
{
  const Scenario& sc = sim_.scenario();
  CallCost c = price_call(sc.model, sc.profile, shape_, sim_.path_cost(in_.gpus[0], holder_));
  // A splice or re-prefill starts when the requester's GPU has done the ones queued before it
  // (still running from earlier steps, or planned in this one): that wait, once per step, is
  // this call's (one layer's) share of it.
  const double backlog = (std::max(0.0, in_.compute_free_at[0] - now()) + queued_) / sc.model.layers;
  c.fetch.splice += Seconds(backlog);
  c.local.prefill += Seconds(backlog);
  return c;
}

double NeedView::expected_reuse() const
{
  return sim_.reuse_estimate(in_, q_, chunk_, false);
}

double NeedView::true_reuse() const
{
  return sim_.reuse_estimate(in_, q_, chunk_, true);
}

void IterationSteps::build()
{
  Simulation::Instance& in = instance();
  const ModelSpec& m = sc().model;
  const calibrate::Profile& p = sc().profile;
  const bool sparse = sc().selection.sparse;
  const double rows_q = static_cast<double>(m.heads) / sc().tp;
  const double bt = static_cast<double>(sim.plan_.block_tokens);
  const double latent_all = m.latent_per_token().value() * m.layers;
  const bool step_mode = sc().granularity == Granularity::kStep;
  plan->rounds = step_mode ? 1 : m.layers;
  plan->scale = step_mode ? m.layers : 1.0;
  plan->start = now();

  for (auto& a : in.active) {
    if (static_cast<int>(plan->batch.size()) >= sc().max_batch) break;
    plan->batch.push_back(a.get());
  }
  bool any_merge = false;
  double local_rows = 0, local_tokens_all = 0, local_token_rows = 0; // the batch's one local kernel
  std::vector<std::uint64_t> selected;
  struct Need {
    std::uint64_t chunk;
    double tokens;
    int runs;
    std::vector<std::uint64_t> keys;
  };
  std::vector<Need> needs;
  double planned_serial = 0; // splices and re-prefills planned so far, one after another
  for (Simulation::Active* q : plan->batch) {
    if (q->first_start < 0) q->first_start = plan->start;
    needs.clear();
    if (q->selector) {
      q->selector->select(q->rng, selected);
      for (std::uint64_t b : selected) {
        const std::uint64_t c = sim.corpus_->chunk_of(b);
        auto it = std::find_if(needs.begin(), needs.end(), [c](const Need& n) { return n.chunk == c; });
        if (it == needs.end())
          needs.push_back({c, bt, 1, {b}});
        else {
          it->tokens += bt;
          ++it->runs;
          it->keys.push_back(b);
        }
      }
    } else {
      for (std::size_t i = 0; i < q->chunks.size(); ++i)
        needs.push_back({q->chunks[i], q->chunk_tokens[i], 1, {q->chunks[i]}});
    }
    double local_tokens = 0;
    std::vector<int> routed_holders;
    for (Need& n : needs) {
      const int h = sim.choose_holder(plan->inst, n.chunk);
      if (holder_gpu(h, 0) == in.gpus[0]) {
        local_tokens += n.tokens;
        ++sim.same_gpu_;
        continue;
      }
      bool cached = true;
      for (std::uint64_t k : n.keys)
        cached = in.cache->touch(k) && cached;
      if (cached) {
        local_tokens += n.tokens;
        ++sim.cached_hits_;
        ++q->cached;
        continue;
      }
      // A selected block is re-prefilled with the tokens before it in its chunk (its run).
      double span = n.tokens;
      if (sparse) {
        std::int64_t last = 0;
        for (std::uint64_t k : n.keys)
          last = std::max(last, sim.corpus_->place_in_chunk(k));
        span = static_cast<double>(last + 1) * bt;
      }
      const NeedView view{
          sim,
          in,
          *q,
          n.chunk,
          {rows_q, n.tokens, 1, n.runs, sparse, sc().transport, sc().corpus.position_aligned, sc().tp, span},
          holder_gpu(h, 0),
          planned_serial};
      // The call goes to the holder this step (routed, or served there while its chunk is fetched).
      auto route = [&] {
        const void* owner = sc().what_if.batching ? nullptr : q;
        auto it = std::find_if(plan->exchanges.begin(), plan->exchanges.end(),
                               [&](const Exchange& e) { return e.holder == h && e.owner == owner; });
        if (it == plan->exchanges.end()) {
          it = plan->exchanges.emplace(plan->exchanges.end());
          it->holder = h;
          it->owner = owner;
        }
        if (std::find(routed_holders.begin(), routed_holders.end(), h) == routed_holders.end()) {
          routed_holders.push_back(h);
          it->rows += rows_q;
          it->decoded += 1;
          ++it->requests;
          if (timeline()) it->served.push_back(q->id);
        }
        it->tokens += n.tokens;
        it->token_rows += n.tokens * rows_q;
      };
      const bool in_flight =
          std::any_of(n.keys.begin(), n.keys.end(), [&](std::uint64_t k) { return in.in_flight.count(k) != 0; });
      const Primitive choice = in_flight ? Primitive::kRoute : sim.policy_->decide(view);
      if (choice == Primitive::kRoute) {
        route();
        ++sim.decisions_route_;
        ++q->routed;
        continue;
      }
      // Fetch and local fill the cache. Both attend locally this step, except a background fetch:
      // its call is routed until the chunk lands. A fetch that the closed form says lands before
      // a routed call would return is waited for, as a serving engine would.
      const bool prefill = choice == Primitive::kLocal;
      bool background = !prefill && !sc().fetch_blocking;
      if (background) {
        const CallCost c = view.price();
        background = c.fetch.total() > c.route.total();
      }
      if (background)
        route();
      else
        local_tokens += n.tokens;
      (prefill ? sim.decisions_local_ : sim.decisions_fetch_) += 1;
      ++(prefill ? q->prefilled : q->fetched);
      auto dup = std::find_if(plan->moves.begin(), plan->moves.end(), [&](const Move& mv) {
        return mv.keys.front() == n.keys.front() && mv.prefill == prefill;
      });
      if (dup != plan->moves.end()) { // another request of the batch already moves it
        if (timeline()) dup->served.push_back(q->id);
        continue;
      }
      Move mv;
      mv.holder = h;
      mv.prefill = prefill;
      // A sparse re-prefill computes its run from the chunk's start (the blocks before it attended, not kept).
      mv.tokens = !sparse ? static_cast<double>(sc().corpus.chunk_tokens) : prefill ? span : n.tokens;
      mv.runs = n.runs;
      mv.keys = n.keys;
      mv.key_bytes = (sparse ? bt : static_cast<double>(sc().corpus.chunk_tokens)) * latent_all;
      mv.background = background;
      mv.ranks_left = sc().tp;
      if (background) in.in_flight.insert(n.keys.begin(), n.keys.end());
      if (timeline()) mv.served.push_back(q->id);
      if (!mv.background) planned_serial += move_serial(mv);
      plan->moves.push_back(std::move(mv));
    }
    if (local_tokens > 0) {
      local_rows += rows_q;
      local_tokens_all += local_tokens;
      local_token_rows += local_tokens * rows_q;
    }
    const double partials =
        static_cast<double>(routed_holders.size()) + (local_tokens > 0 && !routed_holders.empty() ? 1 : 0);
    if (!routed_holders.empty()) {
      any_merge = true;
      plan->merge_work += merge_rows_time(m, p, partials, rows_q).value();
    }
  }
  // One attention launch and one merge launch per iteration for the whole batch.
  if (local_tokens_all > 0)
    plan->local_work = attention_kernel(m, p, 1, local_rows, local_tokens_all, local_token_rows).time().value();
  if (any_merge) plan->merge_work += merge_time(m, p, 0, 0).value();

  double round_bound = 0, serial = 0;
  for (const Exchange& e : plan->exchanges)
    round_bound = std::max(round_bound, exchange_idle(e));
  for (const Move& mv : plan->moves) {
    if (mv.background) continue; // the step does not wait for it
    round_bound = std::max(round_bound, move_idle(mv));
    serial += move_serial(mv);
  }
  round_bound = std::max(round_bound, serial); // splices and re-prefills run one after another
  round_bound += plan->scale * (plan->local_work + plan->merge_work);
  plan->lower_bound = plan->rounds * round_bound + p.step_other.value();
  if (XATTN_FAULT(kStepTooShort)) plan->exchanges.clear(), plan->moves.clear();
}

void IterationSteps::run_round()
{
  // The iteration's own operations first (counted outstanding), then, once, the background fetches
  // with all of their layers.
  const auto exchanges = static_cast<int>(plan->exchanges.size());
  const auto moves = static_cast<int>(plan->moves.size());
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
                          std::function<void()> done)
{
  if (bytes.value() > 0)
    sim.net_->transfer(src, dst, bytes.value(), f, tail.value(), std::move(done));
  else
    after(tail.value(), std::move(done));
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
  const ExchangePrice x = price(e, rank);
  const double L = plan->scale;
  XATTN_CHECK(sim.holder_index_of_gpu_[them] >= 0, "an exchange goes to a GPU that holds no chunk");
  ComputeUnit* gpu = sim.holder_compute_[sim.holder_index_of_gpu_[them]].get();
  IterationSteps self = *this;
  Timeline* tl = timeline();
  const double start = stamp(tl);
  // Query out (its fixed delays and the kernel's launch fused into the same event), the holder's
  // kernel, answer back.
  send(me, them, x.query * L, x.query_flow, (x.after_query + x.kernel.launch) * L, [=]() mutable {
    const double arrived = stamp(tl);
    int lane = 0;
    if (tl != nullptr) {
      const CallRef c = self.call_ref(op, rank);
      const double probed = arrived - (x.kernel.launch * L).value();
      tl->leg(Leg::kQuery, c, start, probed - (x.after_query * L).value(), (x.query * L).value());
      tl->leg(Leg::kProbe, c, probed - (x.after_query * L).value(), probed);
      lane = tl->holder_begin(Leg::kKernel, c);
      tl->queue(Leg::kKernel, them, gpu->running() + 1);
    }
    gpu->submit((x.kernel.work * L).value(), x.kernel.share, [=]() mutable {
      const double computed = stamp(tl);
      if (tl != nullptr) {
        tl->holder_end(Leg::kKernel, self.call_ref(op, rank), lane, arrived);
        tl->queue(Leg::kKernel, them, gpu->running());
      }
      self.send(them, me, x.answer * L, x.answer_flow, x.after_answer * L, [=]() mutable {
        if (XATTN_FAULT(kLostAnswer)) return;
        if (tl != nullptr) {
          const CallRef c = self.call_ref(op, rank);
          tl->leg(Leg::kAnswer, c, computed, now(), (x.answer * L).value());
          tl->call(Primitive::kRoute, c, start, ((x.query + x.answer) * L).value());
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
  // The requester's GPU runs its splices and re-prefills one after another.
  double* free_at = &instance().compute_free_at[rank];
  if (mv.prefill) {
    static bool overlap = false; // the fault, from its pass on: every re-prefill starts at once
    overlap = overlap || XATTN_FAULT(kPrefillOverlap);
    const double begin = overlap ? now() : std::max(now(), *free_at);
    *free_at = begin + prefill_round(mv);
    instance().compute_busy[rank] += *free_at - begin;
    after(*free_at - now(), [self, tl, op, rank, start, begin]() mutable {
      if (tl != nullptr) {
        const CallRef c = self.call_ref(self.move_op(op), rank);
        tl->leg(Leg::kPrefill, c, begin, now());
        tl->call(Primitive::kLocal, c, start, 0);
      }
      self.move_done(op);
    });
    return;
  }
  const topo::GpuId me = instance().gpus[rank], them = holder_gpu(mv.holder, rank);
  const MovePrice x = price(mv, rank);
  XATTN_CHECK(sim.holder_index_of_gpu_[them] >= 0, "a chunk is fetched from a GPU that holds none");
  StreamPool* pool = sim.holder_streams_[sim.holder_index_of_gpu_[them]].get();
  double* busy = &instance().compute_busy[rank];
  auto gather = [=]() mutable {
    if (tl != nullptr && x.index)
      tl->leg(Leg::kIndex, self.call_ref(self.move_op(op), rank), start, now(), ((x.index_query + x.ids) * L).value());
    pool->acquire([=]() mutable {
      const double granted = stamp(tl);
      const int lane = tl != nullptr ? tl->holder_begin(Leg::kCopy, self.call_ref(self.move_op(op), rank)) : 0;
      if (tl != nullptr) tl->queue(Leg::kCopy, them, pool->waiting());
      // The copy stream is free when the bytes have moved; the splice follows on the requester,
      // one splice at a time per GPU (one per contiguous run, summed).
      self.send(them, me, x.bytes * L, x.chunk_flow, Seconds(0), [=]() mutable {
        pool->release();
        const double copied = stamp(tl);
        if (tl != nullptr)
          tl->holder_end(Leg::kCopy, self.call_ref(self.move_op(op), rank), lane, granted, (x.bytes * L).value());
        after((x.after_chunk * L).value(), [=]() mutable {
          const double probed = now();
          const double begin = std::max(probed, *free_at);
          *free_at = begin + (x.splice * L).value();
          *busy += *free_at - begin;
          after(*free_at - now(), [=]() mutable {
            if (tl != nullptr) {
              const CallRef c = self.call_ref(self.move_op(op), rank);
              tl->leg(Leg::kProbe, c, copied, probed);
              tl->leg(Leg::kSplice, c, begin, now());
              tl->call(Primitive::kFetch, c, start, (x.bytes * L).value());
            }
            self.move_done(op);
          });
        });
      });
    });
    if (tl != nullptr) tl->queue(Leg::kCopy, them, pool->waiting());
  };
  if (!x.index) {
    gather();
    return;
  }
  // Under selection the block ids come first: the indexer query out, the ids back.
  send(me, them, x.index_query * L, x.index_query_flow, x.after_index_query * L,
       [=]() mutable { self.send(them, me, x.ids * L, x.ids_flow, x.after_ids * L, gather); });
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
  double tail = plan->scale * (plan->local_work + plan->merge_work) + (last ? sc().profile.step_other.value() : 0.0);
  if (XATTN_FAULT(kEventInPast)) tail = -1e-6;
  // The tail's kernels queue behind a background fetch's splice still running on the GPU (the
  // iteration's own moves have ended by now).
  Simulation::Instance& in = instance();
  const double t = now();
  double wait = 0;
  for (double free_at : in.compute_free_at)
    wait = std::max(wait, free_at - t);
  for (std::size_t k = 0; k < in.compute_free_at.size(); ++k) {
    in.compute_busy[k] += tail;
    in.compute_free_at[k] = std::max(in.compute_free_at[k], t + wait + tail);
  }
  IterationSteps self = *this;
  const double begin = timeline() != nullptr ? t + wait : 0.0;
  after(wait + tail, [self, begin]() mutable {
    if (Timeline* tl = self.timeline())
      for (topo::GpuId g : self.instance().gpus)
        tl->tail(g, self.plan->iteration, begin, self.plan->scale * self.plan->local_work,
                 self.plan->scale * self.plan->merge_work);
    if (++self.plan->round < self.plan->rounds)
      self.run_round();
    else
      self.finish();
  });
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
  // SimGrid solves max-min to a relative precision of 1e-5 (maxmin/precision): a shared transfer
  // may end that much early.
  if (step < plan->lower_bound * (1 - 1e-5) - 1e-12) {
    ++sim.invariant_violations_;
    if (sim.problems_.size() < 10)
      sim.problems_.push_back(invariant_problem(kStepBounds, "a step lasted " + std::to_string(step) +
                                                                 " s, below its idle closed form " +
                                                                 std::to_string(plan->lower_bound) + " s"));
  }
  if (Timeline* tl = timeline()) {
    std::vector<std::uint64_t> ids;
    std::vector<std::int64_t> steps;
    for (const Simulation::Active* q : plan->batch) {
      ids.push_back(q->id);
      steps.push_back(q->steps_done);
    }
    for (topo::GpuId g : in.gpus)
      tl->step(g, plan->iteration, plan->start, ids, steps);
  }
  for (Simulation::Active* q : plan->batch) {
    if (t < q->last_end) {
      ++sim.invariant_violations_;
      sim.problems_.push_back(
          invariant_problem(kStepBounds, "step times of request " + std::to_string(q->id) + " went backwards"));
    }
    q->last_end = t;
    ++q->steps_done;
    q->sum_step += step;
    q->max_step = std::max(q->max_step, step);
    sim.step_latency_.push_back(static_cast<float>(step));
    ++sim.steps_;
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
  sim.start_iteration(plan->inst);
}

void IterationRunner::start(Simulation& sim, int inst)
{
  XATTN_CHECK(inst >= 0 && inst < static_cast<int>(sim.instances_.size()) && !sim.instances_[inst]->active.empty());
  IterationSteps it{sim, std::make_shared<Plan>()};
  it.plan->inst = inst;
  it.plan->iteration = sim.iterations_;
  it.build();
  it.run_round();
}

} // namespace xattn::sim::engine
