// A prefill group's iteration (instances.prefill; sim/engine/README.md, "Disaggregated prefill"):
// each of its instances takes its prompts' chunks in arrival order under its own token budget, as
// vLLM's scheduler does with nothing to decode, and prices each as a whole prefill on the pool's
// layout. A group of one instance ends its iteration with its chunks. A data-parallel group with
// its routed experts split over its GPUs (ep = dp_attention) runs its attention and dense layers
// apart, then the MoE layers together: each GPU's tokens go to their experts' GPUs (dispatch, as
// DeepEP's normal kernels: across nodes once a token and node, then over NVLink), every GPU runs
// its experts over the group's tokens, and the results come back (combine), all the iteration's
// MoE layers at once (as the decode step's exchange at step granularity), as flows on the
// network; the iteration ends when every GPU has its results back. Under prefill.handoff none a
// prefill GPU is a holder too, and its iterations share it with the calls it serves.
#include "sim/engine/ep_nodes.hpp"
#include "sim/engine/network.hpp"
#include "sim/engine/state.hpp"
#include "sim/model/prefill.hpp"
#include "sim/model/pricing.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

namespace xattn::sim::engine
{
// A prefill group's iteration: what each instance runs, and with an exchange the MoE layers'
// state, which every callback of the exchange reads from here (it captures this and a GPU's
// index, nothing more).
struct PrefillExchange {
  using Ptr = std::shared_ptr<PrefillExchange>;
  // What one prefill instance of the group runs this iteration.
  struct Share {
    int inst = 0;
    std::vector<double> chunks; ///< by its queue's first prompts
    double tokens = 0;          ///< new tokens over its chunks
    double work = 0;            ///< its compute, s (with an exchange: all but the routed experts)
  };
  Simulation* sim = nullptr;
  std::vector<Share> shares;
  Callback end;              ///< once every GPU has its results back
  double experts = 0;        ///< each GPU's routed experts over the group's tokens, every MoE layer, s
  std::vector<int> waiting;  ///< per GPU: dispatches to it not arrived
  std::vector<int> pending;  ///< per GPU: results of its tokens not back (each peer's combine, its own experts)
  int left = 0;              ///< GPUs whose results are not all back
  std::optional<EpNodes> at; ///< the group's GPUs by node, once the exchange starts
  /// By [r * nodes + nd]: results of GPU r's tokens not yet on node nd's relay.
  std::vector<int> relay_left;

  int gpus() const { return static_cast<int>(shares.size()); }
  topo::GpuId gpu(int r) const { return sim->prefill_instances()[shares[r].inst]->gpus[0]; }
  /// Token-expert pairs of GPU r's tokens on each peer: an even share of their experts_per_token.
  double pairs(int r) const
  {
    return shares[r].tokens * sim->scenario().model.experts_per_token / sim->scenario().prefill.pool_ep;
  }
  /// GPU r's tokens with an expert on node nd.
  double reaching(int r, int nd) const
  {
    return at->reaching(sim->scenario().model, sim->scenario().prefill.pool_ep, shares[r].tokens, nd);
  }
  static void send(const Ptr& x, int r, int t, double pairs, EpOp op, Callback then)
  {
    // DeepEP's normal kernels move a GPU pair's tokens in bulk chunks: one stream.
    x->sim->send_ep(x->gpu(r), x->gpu(t), pairs, x->sim->scenario().model.moe_layers(), 1, op, std::move(then));
  }
  static void dispatch(const Ptr& x);
  static void arrived(const Ptr& x, int t);
  static void run_experts(const Ptr& x, int t);
  static void at_relay(const Ptr& x, int r, int nd);
  static void back(const Ptr& x, int r);
};

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
    holders_.compute[static_cast<std::size_t>(holders_.index_of_gpu[gpu])]->submit(work, 1.0, [left, then] {
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
  auto x = std::make_shared<PrefillExchange>();
  x->sim = this;
  double group_tokens = 0;
  for (int p : group.members) {
    PrefillExchange::Share s{.inst = p, .chunks = {}, .tokens = 0, .work = 0};
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
  for (PrefillExchange::Share& s : x->shares) {
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
  x->end = [this, g, x = x.get()] {
    for (const PrefillExchange::Share& s : x->shares)
      end_prefill(s.inst, s.chunks);
    start_prefill(g);
  };
  const bool moe = exchange && group_tokens > 0;
  if (moe) x->experts = (expert_time(m, prof, ps.pool_ep, group_tokens) * static_cast<double>(m.moe_layers())).value();
  // Every instance's part of the iteration; then the MoE layers together, or (alone, or a
  // data-parallel group without an exchange) the iteration's end.
  auto left = std::make_shared<int>(static_cast<int>(x->shares.size()));
  for (const PrefillExchange::Share& s : x->shares)
    compute_on(s.inst, s.work, [x, left, moe] {
      if (--*left > 0) return;
      if (moe)
        PrefillExchange::dispatch(x);
      else
        x->end();
    });
}

// DeepEP's normal kernels, as prefill runs them: GPU r's tokens reach each peer of its node over
// NVLink (pairs(r) each); another node once per token that has an expert there, over RDMA to the
// GPU at r's place among that node's (relay), which forwards each of its node's peers their pairs
// over NVLink. The results come back the same ways: a node's results for r's tokens summed on the
// relay, then sent once.
void PrefillExchange::dispatch(const Ptr& x)
{
  std::vector<topo::GpuId> gpus;
  for (int r = 0; r < x->gpus(); ++r)
    gpus.push_back(x->gpu(r));
  const EpNodes& at = x->at.emplace(*x->sim->scenario().topology, gpus);
  const int n = x->gpus(), nodes = at.nodes();
  x->waiting.assign(n, 0);
  x->pending.assign(n, 1);
  x->relay_left.assign(static_cast<std::size_t>(n) * nodes, 0);
  x->left = n;
  for (int r = 0; r < n; ++r) {
    if (x->pairs(r) <= 0) continue;
    for (int t = 0; t < n; ++t)
      if (t != r) ++x->waiting[t];
    for (int nd = 0; nd < nodes; ++nd)
      if (nd != at.node[r]) {
        ++x->pending[r];
        x->relay_left[static_cast<std::size_t>(r) * nodes + nd] = static_cast<int>(at.on[nd].size());
      } else {
        x->pending[r] += static_cast<int>(at.on[nd].size()) - 1;
      }
  }
  for (int r = 0; r < n; ++r) {
    if (x->pairs(r) <= 0) continue;
    for (int t : at.on[at.node[r]])
      if (t != r) send(x, r, t, x->pairs(r), EpOp::kDispatch, [x, t] { arrived(x, t); });
    for (int nd = 0; nd < nodes; ++nd) {
      if (nd == at.node[r]) continue;
      const int g = at.relay(r, nd);
      send(x, r, g, x->reaching(r, nd), EpOp::kDispatch, [x, r, g, nd] {
        for (int t : x->at->on[nd])
          if (t != g) send(x, g, t, x->pairs(r), EpOp::kDispatch, [x, t] { arrived(x, t); });
        arrived(x, g);
      });
    }
  }
  for (int t = 0; t < n; ++t)
    if (x->waiting[t] == 0) run_experts(x, t);
}

void PrefillExchange::arrived(const Ptr& x, int t)
{
  if (--x->waiting[t] == 0) run_experts(x, t);
}

// GPU t's experts over the group's tokens, then each token's results back to its GPU: directly
// within t's node, through the relay of t's node for another node's GPU.
void PrefillExchange::run_experts(const Ptr& x, int t)
{
  x->sim->compute_on(x->shares[t].inst, x->experts, [x, t] {
    for (int r = 0; r < x->gpus(); ++r) {
      if (r == t || x->pairs(r) <= 0) continue;
      if (x->at->node[r] == x->at->node[t]) {
        send(x, t, r, x->pairs(r), EpOp::kCombine, [x, r] { back(x, r); });
        continue;
      }
      const int g = x->at->relay(r, x->at->node[t]);
      if (g == t)
        at_relay(x, r, x->at->node[t]);
      else
        send(x, t, g, x->pairs(r), EpOp::kCombine, [x, r, nd = x->at->node[t]] { at_relay(x, r, nd); });
    }
    back(x, t);
  });
}

// A result of r's tokens reached the relay of node nd; with the node's last, it goes to r.
void PrefillExchange::at_relay(const Ptr& x, int r, int nd)
{
  if (--x->relay_left[static_cast<std::size_t>(r) * x->at->nodes() + nd] > 0) return;
  send(x, x->at->relay(r, nd), r, x->reaching(r, nd), EpOp::kCombine, [x, r] { back(x, r); });
}

void PrefillExchange::back(const Ptr& x, int r)
{
  if (--x->pending[r] == 0 && --x->left == 0) x->end();
}

} // namespace xattn::sim::engine
