// A prefill group's iteration (instances.prefill; sim/engine/README.md, "Disaggregated prefill"):
// each of its instances takes its prompts' chunks in arrival order under its own token budget, as
// vLLM's scheduler does with nothing to decode, and prices each as a whole prefill on the pool's
// layout. A group of one instance ends its iteration with its chunks. A data-parallel group with
// its routed experts split over its GPUs (ep = dp_attention) runs its attention and dense layers
// apart, then the MoE layers together: each GPU's tokens go to their experts' GPUs (dispatch),
// every GPU runs its experts over the group's tokens, and the results come back (combine), all the
// iteration's MoE layers at once (as the decode step's exchange at step granularity), as flows on
// the network; the iteration ends when every GPU has its results back. Under prefill.handoff none a
// prefill GPU is a holder too, and its iterations share it with the calls it serves.
#include "sim/engine/network.hpp"
#include "sim/engine/state.hpp"
#include "sim/model/prefill.hpp"
#include "sim/model/pricing.hpp"

#include <algorithm>
#include <memory>
#include <utility>

namespace xattn::sim::engine
{
namespace
{
// What one prefill instance of the group runs this iteration.
struct Share {
  int inst = 0;
  std::vector<double> chunks; ///< by its queue's first prompts
  double tokens = 0;          ///< new tokens over its chunks
  double work = 0;            ///< its compute, s (with an exchange: all but the routed experts)
};

// The iteration's MoE layers across the group: what is still outstanding.
struct Exchange {
  std::vector<Share> shares;
  double experts = 0;       ///< each GPU's routed experts over the group's tokens, every MoE layer, s
  std::vector<int> waiting; ///< per GPU: dispatches to it not arrived
  std::vector<int> pending; ///< per GPU: results of its tokens not back (each peer's combine, its own experts)
  int left = 0;             ///< GPUs whose results are not all back
};
} // namespace

void Simulation::compute_on(int p, double work, Callback done)
{
  if (!sc_.prefill.kept_in_pool()) {
    after(work, std::move(done));
    return;
  }
  // Its GPUs are holders too (prefill.handoff none): the iteration fills each of them and shares it
  // with the calls they serve, as any kernel does (compute.hpp).
  const std::vector<topo::GpuId>& gpus = prefill_instances_[p]->gpus;
  auto left = std::make_shared<int>(static_cast<int>(gpus.size()));
  auto then = std::make_shared<Callback>(std::move(done));
  for (topo::GpuId gpu : gpus)
    holder_compute_[static_cast<std::size_t>(holder_index_of_gpu_[gpu])]->submit(work, 1.0, [left, then] {
      if (--*left == 0) (*then)();
    });
}

void Simulation::start_prefill(int g)
{
  PrefillGroup& group = prefill_groups_[static_cast<std::size_t>(g)];
  const bool any = std::any_of(group.members.begin(), group.members.end(),
                               [this](int p) { return !prefill_instances_[p]->queue.empty(); });
  group.busy = any;
  if (!any) return;
  const PrefillSpec& ps = sc_.prefill;
  const ModelSpec& m = sc_.model;
  const calibrate::Profile& prof = sc_.profile;
  const Layout layout{.tp = ps.pool_tp, .dp_attention = ps.pool_dp, .ep = ps.pool_ep};
  const bool exchange = ps.pool_ep > 1 && m.moe() && !prof.measured.prefill;
  auto x = std::make_shared<Exchange>();
  double group_tokens = 0;
  for (int p : group.members) {
    Share s{.inst = p, .chunks = {}, .tokens = 0, .work = 0};
    double budget = static_cast<double>(ps.max_num_batched_tokens);
    for (auto& q : prefill_instances_[p]->queue) {
      const double c = std::min(q->prefill_left, budget);
      s.chunks.push_back(c);
      if (c <= 0) continue;
      budget -= c;
      s.tokens += c;
    }
    group_tokens += s.tokens;
    x->shares.push_back(std::move(s));
  }
  for (Share& s : x->shares) {
    auto& queue = prefill_instances_[s.inst]->queue;
    for (std::size_t i = 0; i < s.chunks.size(); ++i) {
      const double c = s.chunks[i];
      if (c <= 0) continue;
      Active& q = *queue[i];
      s.work += std::exchange(q.readback_s, 0.0);
      const PrefillChunk chunk{
          .tokens = c, .before = q.prefill_before, .group_tokens = 0, .ends_prompt = c >= q.prefill_left};
      if (prof.measured.prefill) {
        s.work += c / prof.prefill_tokens_per_s;
        continue;
      }
      const PrefillPrice price = prefill_price(m, prof, layout, chunk);
      s.work += (price.total() - (exchange ? price.experts : Seconds(0))).value();
    }
    // The chunk that ends the prompt carries its last block whole and the first decoded token's
    // slot; its KV leaves with its attention layers.
    if (ps.handoff == Handoff::kLayer)
      for (std::size_t i = 0; i < s.chunks.size(); ++i)
        if (s.chunks[i] > 0) {
          Active* q = queue[i].get();
          const double moved = s.chunks[i] < q->prefill_left
                                   ? s.chunks[i]
                                   : ps.handoff_tokens(q->pool_prefilled + s.chunks[i]) - q->pool_prefilled;
          send_layers(q, s.inst, moved, s.work);
        }
  }
  const auto end = [this, g, x] {
    for (const Share& s : x->shares)
      end_prefill(s.inst, s.chunks);
    start_prefill(g);
  };
  // Every instance's part of the iteration, then `then` (once).
  const auto all = [this, x](Callback then) {
    auto left = std::make_shared<int>(static_cast<int>(x->shares.size()));
    auto last = std::make_shared<Callback>(std::move(then));
    for (const Share& s : x->shares)
      compute_on(s.inst, s.work, [left, last] {
        if (--*left == 0) (*last)();
      });
  };
  if (!exchange || group_tokens <= 0) {
    // Alone, or a data-parallel group without an exchange: its instances iterate in step.
    all(end);
    return;
  }
  x->experts = (expert_time(m, prof, ps.pool_ep, group_tokens) * static_cast<double>(m.moe_layers())).value();
  all([this, x, end] {
    const int n = static_cast<int>(x->shares.size());
    const double layers = sc_.model.moe_layers();
    x->waiting.assign(n, 0);
    x->pending.assign(n, 1);
    x->left = n;
    // One MoE layer's message from GPU r to GPU t carrying `pairs` token-expert pairs, all the
    // iteration's MoE layers at once.
    const auto send = [this, x, layers](int r, int t, double pairs, EpOp op, Callback then) {
      const topo::GpuId from = prefill_instances_[x->shares[r].inst]->gpus[0];
      const topo::GpuId to = prefill_instances_[x->shares[t].inst]->gpus[0];
      const Bytes per_layer = (op == EpOp::kDispatch ? dispatch_bytes(sc_.model) : combine_bytes(sc_.model)) * pairs;
      const EpPrice e = price_ep(sc_.profile, path_cost(from, to), per_layer, op);
      net_->transfer(from, to, (per_layer * layers).value(), e.flow, (e.after * layers).value(), std::move(then));
    };
    // GPU r's tokens go to each peer's experts in an even share of their experts_per_token.
    const auto pairs = [this, x](int r) {
      return x->shares[r].tokens * sc_.model.experts_per_token / sc_.prefill.pool_ep;
    };
    const auto back = [x, end](int r) {
      if (--x->pending[r] == 0 && --x->left == 0) end();
    };
    const auto experts = [this, x, send, pairs, back](int t) {
      compute_on(x->shares[t].inst, x->experts, [x, t, send, pairs, back] {
        for (int r = 0; r < static_cast<int>(x->shares.size()); ++r)
          if (r != t && pairs(r) > 0) send(t, r, pairs(r), EpOp::kCombine, [back, r] { back(r); });
        back(t);
      });
    };
    for (int r = 0; r < n; ++r)
      for (int t = 0; t < n; ++t)
        if (r != t && pairs(r) > 0) ++x->waiting[t], ++x->pending[r];
    for (int r = 0; r < n; ++r)
      for (int t = 0; t < n; ++t)
        if (r != t && pairs(r) > 0)
          send(r, t, pairs(r), EpOp::kDispatch, [x, t, experts] {
            if (--x->waiting[t] == 0) experts(t);
          });
    for (int t = 0; t < n; ++t)
      if (x->waiting[t] == 0) experts(t);
  });
}

} // namespace xattn::sim::engine
