// The inside of one decode iteration (iteration.hpp), shared by its planning (iteration_plan.cpp:
// what each request of the batch needs and how the policy serves it) and its running
// (iteration.cpp: the calls on the network, the holders' compute and the requester's clocks).
// Internal to sim/engine.
#pragma once

#include "sim/engine/clock.hpp"
#include "sim/engine/iteration.hpp"
#include "sim/engine/state.hpp"
#include "sim/model/pricing.hpp"
#include "sim/model/serving.hpp"

#include <array>
#include <functional>
#include <memory>
#include <vector>

namespace xattn::sim::engine
{
namespace iteration
{
struct Scratch; // what build() plans with (iteration_plan.cpp)

// The selection's first phase with one holder (DSA): the batch's indexer queries, scanned there.
struct Select {
  int holder = 0;
  double decoded = 0, tokens = 0, candidates = 0;
  std::vector<std::uint64_t> served; ///< ids of the requests it serves (kept for the timeline only)
};

struct Exchange {
  int holder = 0;
  const void* owner = nullptr; ///< the request, when batching is off
  double rows = 0, tokens = 0, token_rows = 0;
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
  /// Under tp > 1: the shards each rank of the requester has of it this round (its own, fetched
  /// from its holder rank, and its peers', forwarded over NVLink); tp entries, else none.
  std::vector<int> shards;
};

struct Plan {
  int inst = 0;
  std::uint64_t iteration = 0; ///< the simulation's count of iterations when this one started
  double start = 0;
  int round = 0, rounds = 1;
  double scale = 1; ///< layers per exchange (step granularity: all of them)
  std::vector<Simulation::Active*> batch;
  /// prefill.enabled: per batch member, the prompt tokens it prefills this iteration (0: it decodes).
  std::vector<double> chunk;
  double tokens = 0;           ///< the rows of the model's GEMMs: a token per decoding request, the chunks' tokens
  double head_rows = 0;        ///< the rows the output head runs for: the decodes and the prompts that end here
  double prefill_work = 0;     ///< the chunks' own compute outside the batch's GEMMs, over all layers, s
  std::vector<Select> selects; ///< the selection's first phase, before the exchanges and moves
  int selecting = 0;           ///< its operations still running
  std::vector<Exchange> exchanges;
  // This round's prices of the selects and the exchanges, by op x tp + rank: a call's
  // continuations read them here (their captures then stay small enough not to allocate).
  std::vector<ExchangePrice> select_prices, exchange_prices;
  std::vector<Move> moves;
  double local_scan_queries = 0, local_scan_tokens = 0; ///< the requester's own indexer scan (its GPU's chunks)
  double local_work = 0;                                ///< requester attention per layer, s
  double merge_work = 0;                                ///< requester merge per layer, s
  double lower_bound = 0;                               ///< the iteration's idle closed-form duration, s
  int outstanding = 0;
  // engine.step full: where the step went (summary step_split_s).
  double gemm_s = 0;      ///< the model's GEMMs and the element-wise kernels between them (and experts when ep
                          ///< is 1) on the requester's GPU, prefill chunks included
  double moe_s = 0;       ///< from reaching the MoE layers to their results back (waiting for the group included)
  double moe_arrived = 0; ///< when this round reached them
  double round_begun = 0; ///< instances.micro_batches 2: when this round's calls began
  double calls_s = 0;     ///< and the rounds' calls (selection, exchanges, moves), summed
  // instances.micro_batches 2 (moe_pipeline.cpp): the GPU's program of kernels, each round's two
  // halves of its compute and its two micro-batches' experts, run in order.
  std::vector<char> ready;                    ///< [round * 4 + kernel]: what the kernel waits for is there
  int next_kernel = 0;                        ///< the program's next kernel
  bool running = false;                       ///< a kernel of the program is on the GPU
  std::vector<double> half_tail;              ///< by round: its compute before its MoE layers, each half, s
  std::vector<double> half_gemm;              ///< by round: of which its GEMMs, each half, s
  double tails_s = 0;                         ///< the rounds' compute before their MoE layers, summed, s
  int parts_left = 2;                         ///< the last round's micro-batches whose results are not back
  std::array<double, 2> part_sent{};          ///< when each micro-batch of the round ended its compute
  double ep_dispatch_s = 0, ep_combine_s = 0; ///< this GPU's dispatch and combine, summed over its rounds
  bool ep_received = false;                   ///< tokens came to this GPU's experts from a peer
};

/// What the pricing reads of a scenario beside its model and profile.
inline Options pricing_options(const Scenario& sc)
{
  return {sc.transport, sc.what_if.collapsed_response, sc.corpus.position_aligned};
}

// What the policy may read about one need: its closed-form price on its path and the reuse
// estimates. Priced only when the policy asks.
class NeedView final : public policy::Need
{
public:
  /// `queued`: the requester GPU's work already planned this step before a new splice or
  /// re-prefill could start (the iteration's own, serial), s. `planned`: the moves this step has
  /// planned so far, and `holder_index` the holder instance of `holder` (load() counts the fetches
  /// from it among them: they ask for its copy streams at once).
  NeedView(Simulation& sim, const Simulation::Instance& in, const Simulation::Active& q, std::uint64_t chunk,
           CallShape shape, topo::GpuId holder, double queued, const std::vector<Move>& planned, int holder_index)
      : sim_(sim), in_(in), q_(q), chunk_(chunk), shape_(shape), holder_(holder), queued_(queued), planned_(planned),
        holder_index_(holder_index)
  {
  }
  int instance() const override { return in_.index; }
  std::uint64_t chunk() const override { return chunk_; }
  CallCost price() const override;
  double expected_reuse() const override;
  double session_reuse() const override;
  double true_reuse() const override;
  policy::Load load() const override;

private:
  Simulation& sim_;
  const Simulation::Instance& in_;
  const Simulation::Active& q_;
  std::uint64_t chunk_;
  CallShape shape_;
  topo::GpuId holder_;
  double queued_;
  const std::vector<Move>& planned_;
  int holder_index_;
};

// The time now when a timeline records it, else nothing read: without one, its hooks cost the
// branch on the pointer alone.
inline double stamp(const Timeline* tl)
{
  return tl != nullptr ? now() : 0.0;
}

} // namespace iteration

struct IterationSteps {
  Simulation& sim;
  std::shared_ptr<iteration::Plan> plan;

  const Scenario& sc() const { return sim.scenario(); }
  Simulation::Instance& instance() const { return *sim.instances()[plan->inst]; }
  topo::GpuId holder_gpu(int holder, int rank) const { return sim.holders().gpus[holder * sc().tp + rank]; }
  ComputeUnit& holder_compute(topo::GpuId gpu) const { return *sim.holders().compute[sim.holders().index_of_gpu[gpu]]; }

  void build();
  /// build()'s parts: the batch; each request's needs this step, how the policy serves each and
  /// its routed holders' query rows; then the batch's own kernels and the step's idle bound.
  void take_batch(double kv_all);
  void gather_needs(Simulation::Active& q, iteration::Scratch& s);
  void plan_need(Simulation::Active& q, std::size_t need, iteration::Scratch& s);
  /// The call of need `need` goes to holder `h` this step (routed, or served there while its chunk
  /// is fetched in the background).
  void route_need(const Simulation::Active& q, std::size_t need, int h, iteration::Scratch& s);
  void close_request(iteration::Scratch& s);
  void close_plan(const iteration::Scratch& s);
  /// Adds the selection's first phase of request `q` (sparse): every holder of its context.
  void plan_select(const Simulation::Active& q);
  void run_round();
  void launch_select(int op, int rank);
  /// The exchanges and moves of a round, once its selection (if any) is done.
  void run_calls();
  void op_done();
  void round_done();
  /// The round's MoE layers have their results back on this GPU.
  void moe_done();
  // instances.micro_batches 2 (moe_pipeline.cpp):
  /// The round's calls are done: its compute (`tail`, of which `gemm` GEMMs) joins the program.
  void pipeline_round(double tail, double gemm);
  /// The step's program, once (at its first round, or when a peer's exchange readies a kernel).
  void make_program();
  /// What kernel `kernel` of the program waits for is there; runs the program as far as it can.
  void kernel_ready(int kernel);
  /// Runs the program's next kernel if it may (one at a time, in order).
  void run_program();
  void kernel_done(int kernel, double begin);
  /// Micro-batch `k` of round `round` has its results back (without MoE layers: its compute ended).
  void part_done(int k, int round);
  /// After a round's tail (and its MoE layers' exchange when grouped): the next round, or finish.
  void next_round();
  void finish();
  /// The layers [first, last) round `r` runs.
  int round_first(int r) const { return plan->rounds == 1 ? 0 : r; }
  int round_last(int r) const { return plan->rounds == 1 ? sc().model.layers : r + 1; }
  /// MoE layers in round `r` (engine.step full).
  int round_moe_layers(int r) const
  {
    const ModelSpec& m = sc().model;
    return m.moe() ? std::max(0, round_last(r) - std::max(round_first(r), m.dense_layers)) : 0;
  }
  /// The profile's per-step compute outside attention: the attention-only step's stand-in for the
  /// rest of the model, which the full step prices itself.
  double step_other() const { return sc().full_step ? 0.0 : sc().profile.step_other.value(); }
  /// Round `r`'s model compute on each GPU of the requester outside attention (engine.step full):
  /// its layers' GEMMs, the routed experts too when every GPU holds them all or a tp-th of each
  /// (ep 1), and under tensor parallelism the ranks' all-reduces; with prefill chunks in the batch,
  /// their tokens as rows of the same GEMMs (one weight read for both) and the round's share of
  /// the chunks' own compute (with engine.step attention, all of the chunks' compute).
  double model_work(int r) const
  {
    const double layers_share = static_cast<double>(round_last(r) - round_first(r)) / sc().model.layers;
    const double prefill = plan->prefill_work * layers_share;
    if (!sc().full_step || plan->batch.empty()) return prefill;
    // Each micro-batch runs the GEMMs over its share of the rows: the weights are read once each.
    const int mb = sc().micro_batches;
    const double tokens = plan->tokens / mb;
    const ModelSpec& m = sc().model;
    const int tp = sc().tp;
    double t =
        mb * (dense_time(m, sc().profile, tokens, round_first(r), round_last(r), tp, plan->head_rows / mb).value() +
              tensor_parallel_time(m, sc().profile, tokens, round_first(r), round_last(r), tp).value());
    if (sc().ep == 1) t += round_moe_layers(r) * expert_time(m, sc().profile, 1, tokens, tp).value();
    return t + prefill;
  }
  /// prefill.enabled: the iteration's token budget over the batch (decodes first, then chunks in
  /// arrival order; a request left without a token waits) and the chunks' compute (prefill.cpp).
  void plan_prefill();
  void launch_exchange(int op, int rank);
  /// Launches move `op` (counted from the first move) on `rank`, `L` layers' worth.
  void launch_move(int op, int rank, double L);
  /// Under tp > 1: rank `rank` has one more shard of move `op`; with all of them, its splice of
  /// `work` (the rank's fetched shard was `bytes`).
  void shard_landed(int op, int rank, Seconds work, double start, Bytes bytes);
  /// The splice of move `op` on `rank`, `work` long (one at a time per GPU), then the move ends
  /// there; the timeline records the call with the `bytes` the rank fetched.
  void splice(int op, int rank, Seconds work, double start, Bytes bytes);
  /// Ends move `op` on one rank: the iteration's operation, or a background fetch's landing.
  void move_done(int op);
  Timeline* timeline() const { return sim.timeline(); }
  /// Call `op` (the exchanges, then the moves) of rank `rank` as the timeline names it.
  CallRef call_ref(int op, int rank) const;
  /// Move `m`'s number among all of the iteration's calls.
  int move_op(int m) const { return static_cast<int>(plan->exchanges.size()) + m; }
  /// Moves `bytes` (none: only the tail passes) and calls `done` `tail` after the last byte. A
  /// message leaves once its sender posted it through `transport` (posting.hpp).
  void send(topo::GpuId src, topo::GpuId dst, Bytes bytes, const Flow& f, Seconds tail, core::Transport transport,
            Callback done) const;
  Options options() const { return iteration::pricing_options(sc()); }
  ExchangePrice price(const iteration::Exchange& e, int rank) const
  {
    const topo::GpuId me = instance().gpus[rank], them = holder_gpu(e.holder, rank);
    const ExchangeShape shape{e.rows, e.tokens, e.token_rows,
                              sc().what_if.compute_amortisation ? 1.0 : static_cast<double>(e.requests),
                              sc().selection.sparse};
    return price_exchange(sc().model, sc().profile, shape, sim.network().path_cost(me, them),
                          sim.network().path_cost(them, me), options());
  }
  /// The tokens' worth of KV each rank fetches of `tokens` (ModelSpec::tokens_per_rank).
  double rank_share(double tokens) const { return sc().model.tokens_per_rank(tokens, sc().tp); }
  /// Rank `rank`'s part of move `mv` from its holder rank: the whole of it, or under tp > 1 its
  /// shard (rank_share; under MLA every rank splices all of the tokens).
  MovePrice price(const iteration::Move& mv, int rank) const
  {
    const topo::GpuId me = instance().gpus[rank], them = holder_gpu(mv.holder, rank);
    MovePrice x = price_move(sc().model, sc().profile, rank_share(mv.tokens), mv.runs,
                             sim.network().path_cost(them, me), options());
    if (sc().tp > 1 && sc().model.mla())
      x.splice = splice_time(sc().model, sc().profile, mv.runs, mv.tokens, options().aligned);
    return x;
  }
  /// A shard of move `mv` forwarded from rank `from` to rank `to` of the requester (NVLink; MLA).
  MovePrice forward_price(const iteration::Move& mv, int from, int to) const
  {
    return price_move(sc().model, sc().profile, rank_share(mv.tokens), mv.runs,
                      sim.network().path_cost(instance().gpus[from], instance().gpus[to]), options());
  }
  /// Every rank selects for the whole batch (the indexer is small: replicated, not split).
  ExchangePrice price(const iteration::Select& s, int rank) const
  {
    const topo::GpuId me = instance().gpus[rank], them = holder_gpu(s.holder, rank);
    return price_select(sc().model, sc().profile, {s.decoded, s.tokens, s.candidates},
                        sim.network().path_cost(me, them), sim.network().path_cost(them, me), options());
  }
  double exchange_idle(const iteration::Exchange& e) const { return plan->scale * price(e, 0).idle().value(); }
  /// One round's share of a re-prefill, on one GPU of the requester.
  double prefill_round(const iteration::Move& mv) const
  {
    return prefill_time(sc().model, sc().profile, mv.tokens, 0,
                        Layout{.tp = sc().tp, .dp_attention = sc().dp_attention, .ep = sc().ep})
               .value() /
           plan->rounds;
  }
  double move_idle(const iteration::Move& mv) const
  {
    if (mv.prefill) return prefill_round(mv);
    return plan->scale * price(mv, 0).idle().value();
  }
  /// What a move keeps the requester's GPU busy with, one after another with its other moves.
  double move_serial(const iteration::Move& mv) const
  {
    return mv.prefill ? prefill_round(mv) : plan->scale * price(mv, 0).splice.value();
  }
};

} // namespace xattn::sim::engine
