#include "sim/engine/iteration_steps.hpp"

#include "sim/core/fault.hpp"

#include <algorithm>
#include <bit>
#include <span>

namespace xattn::sim::engine
{
using namespace iteration;

CallCost NeedView::price() const
{
  const Scenario& sc = sim_.scenario();
  CallCost c = price_call(sc.model, sc.profile, shape_, sim_.path_cost(in_.gpus[0], holder_));
  // A splice or re-prefill starts when the requester's GPU has done the ones queued before it
  // (still running from earlier steps, or planned in this one): that wait, once per step, is
  // this call's (one layer's) share of it.
  const double backlog = (std::max(0.0, in_.own[0].free_at() - now()) + queued_) / sc.model.layers;
  c.fetch.splice += Seconds(backlog);
  c.local.prefill += Seconds(backlog);
  return c;
}

policy::Load NeedView::load() const
{
  const auto copies = std::count_if(planned_.begin(), planned_.end(),
                                    [this](const Move& m) { return m.holder == holder_index_ && !m.prefill; });
  return sim_.load_around(in_, holder_, shape_.rows, shape_.tokens, static_cast<int>(copies));
}

double NeedView::expected_reuse() const
{
  return sim_.reuse_estimate(in_, q_, chunk_, false);
}

double NeedView::session_reuse() const
{
  return sim_.session_reuse(q_);
}

double NeedView::true_reuse() const
{
  return sim_.reuse_estimate(in_, q_, chunk_, true);
}

namespace iteration
{
// A request's need of one chunk this step: the tokens one layer attends there on average, its runs
// of contiguous blocks and the keys a fetch would move (each block, or the whole chunk).
struct ChunkNeed {
  std::uint64_t chunk;
  double tokens;
  int runs;
  std::vector<std::uint64_t> keys;
};

// What build() plans with, over the batch: its constants, the batch's one local kernel and its
// merges, and the buffers each request's planning reuses.
struct Scratch {
  bool sparse = false;
  double rows_q = 0;                                                 ///< a request's query rows on one rank
  double bt = 0;                                                     ///< tokens of a block
  double kv_all = 0;                                                 ///< a token's KV on one rank, all layers, B
  std::size_t words = 0;                                             ///< 64-bit words of a set of layers
  bool any_merge = false;                                            ///< some request of the batch merges partials
  double local_rows = 0, local_tokens_all = 0, local_token_rows = 0; // the batch's one local kernel
  double planned_serial = 0; ///< splices and re-prefills planned so far, one after another
  std::vector<std::uint64_t> selected;
  std::vector<std::uint32_t> layers_of;
  std::vector<ChunkNeed> needs;
  // Under selection, by need, the layers that selected any of its blocks (`words` each); by routed
  // holder of a request, the same over its needs, and its exchange: a holder gets the query of
  // the layers that selected a block it holds, not of every layer.
  std::vector<std::uint64_t> need_layers, holder_layers;
  std::vector<std::size_t> holder_exchange;
  std::vector<int> routed_holders; ///< the request's
  double local_tokens = 0;         ///< the request's tokens attended on the requester's GPU
};

} // namespace iteration

void IterationSteps::build()
{
  const ModelSpec& m = sc().model;
  Scratch s;
  s.sparse = sc().selection.sparse;
  s.rows_q = static_cast<double>(m.heads) / sc().tp;
  s.bt = static_cast<double>(sim.placed_corpus().block_tokens);
  s.kv_all = m.kv_per_token_on_rank(sc().tp).value() * m.layers;
  s.words = (static_cast<std::size_t>(m.layers) + 63) / 64;
  const bool step_mode = sc().granularity == Granularity::kStep;
  plan->rounds = step_mode ? 1 : m.layers;
  plan->scale = step_mode ? m.layers : 1.0;
  plan->start = now();
  take_batch(s.kv_all);
  plan->tokens = plan->head_rows = static_cast<double>(plan->batch.size());
  if (sc().prefill.enabled) plan_prefill();
  for (std::size_t i = 0; i < plan->batch.size(); ++i) {
    Simulation::Active* q = plan->batch[i];
    if (q->first_start < 0) q->first_start = plan->start;
    if (!plan->chunk.empty() && plan->chunk[i] > 0) continue; // prefilling: nothing to attend remotely yet
    if (s.sparse) plan_select(*q);
    gather_needs(*q, s);
    s.local_tokens = 0;
    s.routed_holders.clear();
    s.holder_layers.clear();
    s.holder_exchange.clear();
    for (std::size_t n = 0; n < s.needs.size(); ++n)
      plan_need(*q, n, s);
    close_request(s);
  }
  close_plan(s);
}

void IterationSteps::take_batch(double kv_all)
{
  // The batch in arrival order, up to max_batch and to the HBM left for its own KV (each request's
  // whole output at the model's served bytes, reserved while it decodes) beside a copy of the
  // index keys; one request always runs.
  Simulation::Instance& in = instance();
  const double own_hbm =
      sc().batch_hbm.value() > 0 ? std::max(1.0, (sc().batch_hbm - sim.placed_corpus().index_copy).value()) : 0.0;
  double own_kv = 0;
  for (auto& a : in.active) {
    if (static_cast<int>(plan->batch.size()) >= sc().max_batch) break;
    const double need = static_cast<double>(a->steps_total) * kv_all;
    if (own_hbm > 0 && !plan->batch.empty() && own_kv + need > own_hbm) {
      ++sim.counts().hbm_bound_steps;
      sim.counts().hbm_waiting += std::min<std::size_t>(in.active.size(), sc().max_batch) - plan->batch.size();
      break;
    }
    own_kv += need;
    plan->batch.push_back(a.get());
  }
}

void IterationSteps::gather_needs(Simulation::Active& q, Scratch& s)
{
  const ModelSpec& m = sc().model;
  s.needs.clear();
  s.need_layers.clear();
  if (!q.selector) {
    for (std::size_t i = 0; i < q.chunks.size(); ++i)
      s.needs.push_back({q.chunks[i], q.chunk_tokens[i], 1, {q.chunks[i]}});
    return;
  }
  // Each layer selects its own blocks: a need's tokens are what one layer attends on average,
  // its keys every block any layer selected (a fetch moves each with all of its layers).
  q.selector->select_layers(q.rng, m.layers, s.selected, s.layers_of);
  for (std::size_t i = 0; i < s.selected.size(); ++i) {
    const std::uint64_t b = s.selected[i];
    const std::uint64_t c = sim.corpus().chunk_of(b);
    const double tokens = s.bt * s.layers_of[i] / m.layers;
    auto it = std::find_if(s.needs.begin(), s.needs.end(), [c](const ChunkNeed& n) { return n.chunk == c; });
    if (it == s.needs.end()) {
      s.needs.push_back({c, tokens, 1, {b}});
      s.need_layers.resize(s.needs.size() * s.words, 0);
      it = s.needs.end() - 1;
    } else {
      it->tokens += tokens;
      ++it->runs;
      it->keys.push_back(b);
    }
    const std::span<const std::uint64_t> by = q.selector->layers_selecting(i);
    for (std::size_t w = 0; w < s.words; ++w)
      s.need_layers[static_cast<std::size_t>(it - s.needs.begin()) * s.words + w] |= by[w];
  }
}

void IterationSteps::route_need(const Simulation::Active& q, std::size_t need, int h, Scratch& s)
{
  const void* owner = sc().what_if.batching ? nullptr : &q;
  auto it = std::find_if(plan->exchanges.begin(), plan->exchanges.end(),
                         [&](const Exchange& e) { return e.holder == h && e.owner == owner; });
  if (it == plan->exchanges.end()) {
    it = plan->exchanges.emplace(plan->exchanges.end());
    it->holder = h;
    it->owner = owner;
  }
  auto seen = std::find(s.routed_holders.begin(), s.routed_holders.end(), h);
  if (seen == s.routed_holders.end()) {
    s.routed_holders.push_back(h);
    s.holder_exchange.push_back(static_cast<std::size_t>(it - plan->exchanges.begin()));
    s.holder_layers.resize(s.routed_holders.size() * s.words, 0);
    seen = s.routed_holders.end() - 1;
    ++it->requests;
    if (timeline()) it->served.push_back(q.id);
  }
  if (!s.need_layers.empty())
    for (std::size_t w = 0; w < s.words; ++w)
      s.holder_layers[static_cast<std::size_t>(seen - s.routed_holders.begin()) * s.words + w] |=
          s.need_layers[need * s.words + w];
  const double tokens = s.needs[need].tokens;
  it->tokens += tokens;
  it->token_rows += tokens * s.rows_q;
}

void IterationSteps::plan_need(Simulation::Active& q, std::size_t need, Scratch& s)
{
  Simulation::Instance& in = instance();
  const ChunkNeed& n = s.needs[need];
  const int h = sim.choose_holder(plan->inst, n.chunk);
  if (holder_gpu(h, 0) == in.gpus[0]) {
    s.local_tokens += n.tokens;
    ++sim.counts().decisions.same_gpu;
    return;
  }
  bool cached = true;
  for (std::uint64_t k : n.keys)
    cached = in.cache->touch(k) && cached;
  if (cached) {
    s.local_tokens += n.tokens;
    ++sim.counts().decisions.cached;
    ++q.cached;
    return;
  }
  // A selected block is re-prefilled with the tokens before it in its chunk (its run).
  double span = n.tokens;
  if (s.sparse) {
    std::int64_t last = 0;
    for (std::uint64_t k : n.keys)
      last = std::max(last, sim.corpus().place_in_chunk(k));
    span = static_cast<double>(last + 1) * s.bt;
  }
  const NeedView view{sim,
                      in,
                      q,
                      n.chunk,
                      {s.rows_q, n.tokens, 1, n.runs, s.sparse, sc().transport, sc().corpus.position_aligned, sc().tp,
                       span, 0, sc().selection.index_on_requester, s.sparse ? s.bt * n.runs : 0, sc().ep},
                      holder_gpu(h, 0),
                      s.planned_serial,
                      plan->moves,
                      h};
  // Only background fetches are ever in flight between steps: nothing to look up otherwise.
  const bool in_flight = !in.in_flight.empty() && std::any_of(n.keys.begin(), n.keys.end(), [&](std::uint64_t k) {
    return in.in_flight.count(k) != 0;
  });
  const Primitive choice = in_flight ? Primitive::kRoute : sim.policy().decide(view);
  if (choice != Primitive::kLocal) sim.count_read(plan->inst, n.chunk, h); // the holder serves it
  // The call goes to the holder this step (routed, or served there while its chunk is fetched).
  if (choice == Primitive::kRoute) {
    route_need(q, need, h, s);
    ++sim.counts().decisions.route;
    ++q.routed;
    return;
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
    route_need(q, need, h, s);
  else
    s.local_tokens += n.tokens;
  (prefill ? sim.counts().decisions.local : sim.counts().decisions.fetch) += 1;
  ++(prefill ? q.prefilled : q.fetched);
  auto dup = std::find_if(plan->moves.begin(), plan->moves.end(),
                          [&](const Move& mv) { return mv.keys.front() == n.keys.front() && mv.prefill == prefill; });
  if (dup != plan->moves.end()) { // another request of the batch already moves it
    if (timeline()) dup->served.push_back(q.id);
    return;
  }
  Move mv;
  mv.holder = h;
  mv.prefill = prefill;
  // A sparse re-prefill computes its run from the chunk's start (the blocks before it attended, not kept).
  mv.tokens = !s.sparse ? static_cast<double>(sc().corpus.chunk_tokens) : prefill ? span : s.bt * n.runs;
  mv.runs = n.runs;
  mv.keys = n.keys;
  mv.key_bytes = (s.sparse ? s.bt : static_cast<double>(sc().corpus.chunk_tokens)) * s.kv_all;
  mv.background = background;
  mv.ranks_left = sc().tp;
  if (sc().tp > 1) mv.shards.assign(sc().tp, 0);
  if (background) in.in_flight.insert(n.keys.begin(), n.keys.end());
  if (timeline()) mv.served.push_back(q.id);
  if (!mv.background) s.planned_serial += move_serial(mv);
  plan->moves.push_back(std::move(mv));
}

void IterationSteps::close_request(Scratch& s)
{
  const ModelSpec& m = sc().model;
  // Each routed holder's query rows: the request's, over the share of the layers that selected
  // a block it holds (every layer when the whole context is attended).
  for (std::size_t j = 0; j < s.routed_holders.size(); ++j) {
    double share = 1;
    if (!s.need_layers.empty()) {
      int selecting = 0;
      for (std::size_t w = 0; w < s.words; ++w)
        selecting += std::popcount(s.holder_layers[j * s.words + w]);
      share = static_cast<double>(selecting) / m.layers;
    }
    plan->exchanges[s.holder_exchange[j]].rows += s.rows_q * share;
  }
  if (s.local_tokens > 0) {
    s.local_rows += s.rows_q;
    s.local_tokens_all += s.local_tokens;
    s.local_token_rows += s.local_tokens * s.rows_q;
  }
  const double partials =
      static_cast<double>(s.routed_holders.size()) + (s.local_tokens > 0 && !s.routed_holders.empty() ? 1 : 0);
  if (!s.routed_holders.empty()) {
    s.any_merge = true;
    plan->merge_work += merge_rows_time(m, sc().profile, partials, s.rows_q).value();
  }
}

void IterationSteps::close_plan(const Scratch& s)
{
  const ModelSpec& m = sc().model;
  const calibrate::Profile& p = sc().profile;
  // One attention launch and one merge launch per iteration for the whole batch; under selection,
  // the indexer's scan of the context on the requester's own GPU first. With micro-batches, each
  // launches its own over its share of the batch (DeepSeek balances the attention between them).
  const double mb = sc().micro_batches;
  if (s.local_tokens_all > 0)
    plan->local_work =
        mb *
        attention_kernel(m, p, 1, s.local_rows / mb, s.local_tokens_all / mb, s.local_token_rows / mb).time().value();
  if (plan->local_scan_tokens > 0)
    plan->local_work +=
        mb * index_scan_kernel(m, p, plan->local_scan_queries / mb, plan->local_scan_tokens / mb).time().value();
  if (s.any_merge) plan->merge_work += mb * merge_time(m, p, 0, 0).value();

  double round_bound = 0, serial = 0, select_bound = 0;
  for (const Select& sel : plan->selects)
    select_bound = std::max(select_bound, plan->scale * price(sel, 0).idle().value());
  for (const Exchange& e : plan->exchanges)
    round_bound = std::max(round_bound, exchange_idle(e));
  for (const Move& mv : plan->moves) {
    if (mv.background) continue; // the step does not wait for it
    round_bound = std::max(round_bound, move_idle(mv));
    serial += move_serial(mv);
  }
  round_bound = std::max(round_bound, serial); // splices and re-prefills run one after another
  round_bound += select_bound + plan->scale * (plan->local_work + plan->merge_work);
  plan->lower_bound = plan->rounds * round_bound + step_other();
  for (int r = 0; r < plan->rounds; ++r) // the model's own layers (engine.step full)
    plan->lower_bound += model_work(r);
  if (XATTN_FAULT(kStepTooShort)) plan->exchanges.clear(), plan->moves.clear();
}

void IterationSteps::plan_select(const Simulation::Active& q)
{
  if (sc().selection.index_on_requester) { // its own copy of the context's index keys, scanned here
    plan->local_scan_queries += 1;
    for (double tokens : q.chunk_tokens)
      plan->local_scan_tokens += tokens;
    return;
  }
  thread_local std::vector<std::pair<int, double>> on; // holder, the request's context tokens there
  on.clear();
  for (std::size_t i = 0; i < q.chunks.size(); ++i) {
    const int h = sim.choose_holder(plan->inst, q.chunks[i]);
    auto it = std::find_if(on.begin(), on.end(), [h](const std::pair<int, double>& e) { return e.first == h; });
    if (it == on.end())
      on.emplace_back(h, q.chunk_tokens[i]);
    else
      it->second += q.chunk_tokens[i];
  }
  const double topk = sc().model.index.topk;
  for (const std::pair<int, double>& e : on) {
    const int h = e.first;
    if (holder_gpu(h, 0) == instance().gpus[0]) { // scanned by the requester's own indexer
      plan->local_scan_queries += 1;
      plan->local_scan_tokens += e.second;
      continue;
    }
    auto s = std::find_if(plan->selects.begin(), plan->selects.end(), [h](const Select& x) { return x.holder == h; });
    if (s == plan->selects.end()) {
      s = plan->selects.emplace(plan->selects.end());
      s->holder = h;
    }
    s->decoded += 1;
    s->tokens += e.second;
    s->candidates += std::min(topk, e.second);
    if (timeline()) s->served.push_back(q.id);
  }
}

} // namespace xattn::sim::engine
