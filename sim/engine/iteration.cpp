#include "sim/engine/iteration.hpp"

#include "sim/engine/clock.hpp"
#include "sim/engine/state.hpp"

#include <algorithm>
#include <memory>

namespace xattn::sim::engine {
namespace {

struct Exchange {
  int holder        = 0;
  const void* owner = nullptr; ///< the request, when batching is off
  double rows = 0, tokens = 0, token_rows = 0, decoded = 0;
  int requests = 0;
};

struct Move {
  int holder   = 0;
  bool prefill = false;
  double tokens = 0; ///< moved or re-prefilled
  int runs      = 1;
  std::vector<std::uint64_t> keys; ///< cache entries it fills
  double key_bytes = 0;            ///< bytes of each entry (all layers)
};

struct Plan {
  int inst = 0;
  double start = 0;
  int round = 0, rounds = 1;
  double scale = 1; ///< layers per exchange (step granularity: all of them)
  std::vector<Simulation::Active*> batch;
  std::vector<Exchange> exchanges;
  std::vector<Move> moves;
  double local_work = 0; ///< requester attention per layer, s
  double merge_work = 0; ///< requester merge per layer, s
  double lower_bound = 0; ///< the iteration's idle closed-form duration, s
  int outstanding = 0;
};

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
  void launch_exchange(const Exchange& e, int rank);
  void launch_move(const Move& m, int rank);
  double exchange_idle(const Exchange& e);
  /// What a leg on `path` adds to the probe: the path's latency beyond the probe's measured path.
  double leg_latency(const topo::Path& path) const
  {
    return sim::leg_latency(sc().profile, {path.fabric, path.bottleneck, path.latency}).value();
  }
  double move_idle(const Move& m);
  double exchange_work(const Exchange& e) const
  {
    const calibrate::Profile& p = sc().profile;
    const double fixed = p.kernel_fixed.value() * (sc().what_if.compute_amortisation ? 1.0 : e.requests);
    return fixed + p.kernel_per_token.value() * e.tokens + p.kernel_per_token_row.value() * e.token_rows;
  }
  double query_bytes(const Exchange& e) const
  {
    const ModelSpec& m = sc().model;
    double b           = m.query_row().value() * e.rows;
    if (sc().selection.sparse)
      b += m.index_query_per_token().value() * e.decoded / sc().tp;
    return b;
  }
  double answer_bytes(const Exchange& e) const { return sc().model.output_row().value() * e.rows; }
};

void IterationSteps::build()
{
  Simulation::Instance& in = instance();
  const ModelSpec& m       = sc().model;
  const calibrate::Profile& p = sc().profile;
  const bool sparse        = sc().selection.sparse;
  const double rows_q      = static_cast<double>(m.heads) / sc().tp;
  const double bt          = static_cast<double>(sim.plan_.block_tokens);
  const double latent_all  = m.latent_per_token().value() * m.layers;
  const bool step_mode     = sc().granularity == Granularity::kStep;
  plan->rounds             = step_mode ? 1 : m.layers;
  plan->scale              = step_mode ? m.layers : 1.0;
  plan->start              = now();

  for (auto& a : in.active) {
    if (static_cast<int>(plan->batch.size()) >= sc().max_batch)
      break;
    plan->batch.push_back(a.get());
  }
  bool any_local = false, any_merge = false;
  std::vector<std::uint64_t> selected;
  struct Need {
    std::uint64_t chunk;
    double tokens;
    int runs;
    std::vector<std::uint64_t> keys;
  };
  std::vector<Need> needs;
  for (Simulation::Active* q : plan->batch) {
    if (q->first_start < 0)
      q->first_start = plan->start;
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
      Primitive choice = Primitive::kRoute;
      switch (sim.policy_) {
        case PolicyKind::kRoute:
          choice = Primitive::kRoute;
          break;
        case PolicyKind::kFetch:
          choice = Primitive::kFetch;
          break;
        case PolicyKind::kLocal:
          choice = Primitive::kLocal;
          break;
        case PolicyKind::kPredicate:
        case PolicyKind::kOracle: {
          CallShape s{rows_q, n.tokens, 1, n.runs, sparse, sc().transport};
          CallCost c   = price_call(m, p, s, sim.path_cost(in.gpus[0], holder_gpu(h, 0)));
          double reuse = sim.reuse_estimate(in, *q, n.chunk, sim.policy_ == PolicyKind::kOracle);
          choice       = decide(c, reuse).choice;
          break;
        }
      }
      if (choice == Primitive::kRoute) {
        const void* owner = sc().what_if.batching ? nullptr : q;
        auto it = std::find_if(plan->exchanges.begin(), plan->exchanges.end(),
                               [&](const Exchange& e) { return e.holder == h && e.owner == owner; });
        if (it == plan->exchanges.end()) {
          plan->exchanges.push_back({h, owner});
          it = plan->exchanges.end() - 1;
        }
        if (std::find(routed_holders.begin(), routed_holders.end(), h) == routed_holders.end()) {
          routed_holders.push_back(h);
          it->rows += rows_q;
          it->decoded += 1;
          ++it->requests;
        }
        it->tokens += n.tokens;
        it->token_rows += n.tokens * rows_q;
        ++sim.decisions_route_;
        ++q->routed;
        continue;
      }
      // Fetch and local fill the cache; both attend locally this step.
      local_tokens += n.tokens;
      const bool prefill = choice == Primitive::kLocal;
      (prefill ? sim.decisions_local_ : sim.decisions_fetch_) += 1;
      ++(prefill ? q->prefilled : q->fetched);
      auto dup = std::find_if(plan->moves.begin(), plan->moves.end(),
                              [&](const Move& mv) { return mv.keys.front() == n.keys.front() && mv.prefill == prefill; });
      if (dup != plan->moves.end())
        continue; // another request of the batch already moves it
      Move mv;
      mv.holder    = h;
      mv.prefill   = prefill;
      mv.tokens    = sparse ? n.tokens : static_cast<double>(sc().corpus.chunk_tokens);
      mv.runs      = n.runs;
      mv.keys      = n.keys;
      mv.key_bytes = (sparse ? bt : static_cast<double>(sc().corpus.chunk_tokens)) * latent_all;
      plan->moves.push_back(std::move(mv));
    }
    if (local_tokens > 0) {
      any_local = true;
      plan->local_work += p.kernel_per_token.value() * local_tokens + p.kernel_per_token_row.value() * local_tokens * rows_q;
    }
    const double partials = static_cast<double>(routed_holders.size()) + (local_tokens > 0 && !routed_holders.empty() ? 1 : 0);
    if (!routed_holders.empty()) {
      any_merge = true;
      plan->merge_work += p.merge_per_row.value() * partials * rows_q;
    }
  }
  if (any_local)
    plan->local_work += p.kernel_fixed.value();
  if (any_merge)
    plan->merge_work += p.merge_fixed.value();

  double round_bound = 0, splices = 0;
  for (const Exchange& e : plan->exchanges)
    round_bound = std::max(round_bound, exchange_idle(e));
  for (const Move& mv : plan->moves) {
    round_bound = std::max(round_bound, move_idle(mv));
    if (!mv.prefill)
      splices += plan->scale * p.splice_time(mv.runs, mv.tokens).value();
  }
  round_bound = std::max(round_bound, splices); // splices run one after another
  round_bound += plan->scale * (plan->local_work + plan->merge_work);
  plan->lower_bound = plan->rounds * round_bound + p.step_other.value();
}

double IterationSteps::exchange_idle(const Exchange& e)
{
  const calibrate::Profile& p = sc().profile;
  const topo::GpuId me = instance().gpus[0], them = holder_gpu(e.holder, 0);
  const topo::Path& out = sim.net_->path(me, them);
  const topo::Path& back = sim.net_->path(them, me);
  const double probe = p.fabric(out.fabric).probe(sc().transport).value();
  double t = query_bytes(e) / sim.net_->alone_rate(me, them, p.route_blocks) + probe + leg_latency(out) +
             p.host_overhead.value() + exchange_work(e) + answer_bytes(e) / sim.net_->alone_rate(them, me, p.route_blocks) +
             leg_latency(back) + (sc().what_if.collapsed_response ? 0.0 : probe);
  return plan->scale * t;
}

double IterationSteps::move_idle(const Move& mv)
{
  const calibrate::Profile& p = sc().profile;
  const ModelSpec& m          = sc().model;
  if (mv.prefill)
    return p.prefill_time(mv.tokens).value() / plan->rounds;
  const topo::GpuId me = instance().gpus[0], them = holder_gpu(mv.holder, 0);
  const topo::Path& path = sim.net_->path(them, me);
  const double probe     = p.fabric(path.fabric).probe(sc().transport).value();
  double t = m.latent_per_token().value() * mv.tokens / sim.net_->alone_rate(them, me, p.fetch_blocks) + probe +
             leg_latency(path) + p.host_overhead.value() + p.splice_time(mv.runs, mv.tokens).value();
  if (sc().selection.sparse)
    t += probe + 2 * leg_latency(path); // the block-id round trip before the gather
  return plan->scale * t;
}

void IterationSteps::run_round()
{
  for (const Exchange& e : plan->exchanges)
    for (int k = 0; k < sc().tp; ++k) {
      ++plan->outstanding;
      launch_exchange(e, k);
    }
  for (const Move& mv : plan->moves)
    for (int k = 0; k < sc().tp; ++k) {
      ++plan->outstanding;
      launch_move(mv, k);
    }
  if (plan->outstanding == 0)
    round_done();
}

void IterationSteps::launch_exchange(const Exchange& e, int rank)
{
  const calibrate::Profile& p = sc().profile;
  const topo::GpuId me = instance().gpus[rank], them = holder_gpu(e.holder, rank);
  const topo::Path& out  = sim.net_->path(me, them);
  const double L         = plan->scale;
  const double probe     = p.fabric(out.fabric).probe(sc().transport).value();
  const double after_query = L * (probe + leg_latency(out) + p.host_overhead.value());
  const double after_answer =
      L * (leg_latency(sim.net_->path(them, me)) + (sc().what_if.collapsed_response ? 0.0 : probe));
  const double work   = L * exchange_work(e);
  const double answer = L * answer_bytes(e);
  ComputeUnit* gpu    = sim.holder_compute_[sim.holder_index_of_gpu_[them]].get();
  Network* net        = sim.net_.get();
  IterationSteps self = *this;
  const int blocks    = p.route_blocks;
  // Query out (its fixed delays fused into the same event), the holder's kernel, answer back.
  net->transfer(me, them, L * query_bytes(e), blocks, after_query, [=]() mutable {
    gpu->submit(work, [=]() mutable { net->transfer(them, me, answer, blocks, after_answer, [=]() mutable { self.op_done(); }); });
  });
}

void IterationSteps::launch_move(const Move& mv, int rank)
{
  IterationSteps self = *this;
  if (mv.prefill) {
    after(sc().profile.prefill_time(mv.tokens).value() / plan->rounds, [self]() mutable { self.op_done(); });
    return;
  }
  const calibrate::Profile& p = sc().profile;
  const topo::GpuId me = instance().gpus[rank], them = holder_gpu(mv.holder, rank);
  const topo::Path& path = sim.net_->path(them, me);
  const double L         = plan->scale;
  const double probe     = p.fabric(path.fabric).probe(sc().transport).value();
  double tail            = probe + leg_latency(path) + p.host_overhead.value();
  if (sc().selection.sparse)
    tail += probe + 2 * leg_latency(path); // the block-id round trip before the gather
  tail *= L;
  const double splice = L * p.splice_time(mv.runs, mv.tokens).value();
  const double bytes  = L * sc().model.latent_per_token().value() * mv.tokens;
  StreamPool* pool    = sim.holder_streams_[sim.holder_index_of_gpu_[them]].get();
  Network* net        = sim.net_.get();
  double* free_at     = &instance().splice_free_at[rank];
  const int blocks    = p.fetch_blocks;
  pool->acquire([=]() mutable {
    // The copy stream is free when the bytes have moved; the splice follows on the requester,
    // one splice at a time per GPU (DESIGN.md §3.1: one per contiguous run, summed).
    net->transfer(them, me, bytes, blocks, 0.0, [=]() mutable {
      pool->release();
      after(tail, [=]() mutable {
        const double start = std::max(now(), *free_at);
        *free_at           = start + splice;
        after(*free_at - now(), [=]() mutable { self.op_done(); });
      });
    });
  });
}

void IterationSteps::op_done()
{
  if (--plan->outstanding == 0)
    round_done();
}

void IterationSteps::round_done()
{
  const bool last = plan->round + 1 >= plan->rounds;
  double tail     = plan->scale * (plan->local_work + plan->merge_work) + (last ? sc().profile.step_other.value() : 0.0);
  IterationSteps self = *this;
  after(tail, [self]() mutable {
    if (++self.plan->round < self.plan->rounds)
      self.run_round();
    else
      self.finish();
  });
}

void IterationSteps::finish()
{
  Simulation::Instance& in = instance();
  for (const Move& mv : plan->moves)
    for (std::uint64_t k : mv.keys)
      in.cache->insert(k, mv.key_bytes);
  const double t    = now();
  const double step = t - plan->start;
  // SimGrid solves max-min to a relative precision of 1e-5 (maxmin/precision): a shared transfer
  // may end that much early.
  if (step < plan->lower_bound * (1 - 1e-5) - 1e-12) {
    ++sim.invariant_violations_;
    if (sim.problems_.size() < 10)
      sim.problems_.push_back("a step lasted " + std::to_string(step) + " s, below its idle closed form " +
                              std::to_string(plan->lower_bound) + " s");
  }
  for (Simulation::Active* q : plan->batch) {
    if (t < q->last_end) {
      ++sim.invariant_violations_;
      sim.problems_.push_back("step times of request " + std::to_string(q->id) + " went backwards");
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
  IterationSteps it{sim, std::make_shared<Plan>()};
  it.plan->inst = inst;
  it.build();
  it.run_round();
}

} // namespace xattn::sim::engine
