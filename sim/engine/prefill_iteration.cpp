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
    // DeepEP's normal kernels, as prefill runs them: GPU r's tokens reach each peer of its node
    // over NVLink, an even share of their experts_per_token for each (pairs(r)); another node once
    // per token that has an expert there, over RDMA to the GPU at r's place among that node's
    // (relay(r, node)), which forwards each of its node's peers their pairs over NVLink. The
    // results come back the same ways: a node's results for r's tokens summed on the relay, then
    // sent once.
    const topo::Topology& topo = *sc_.topology;
    const auto gpu = [this, x](int r) { return prefill_instances_[x->shares[r].inst]->gpus[0]; };
    std::vector<int> nodes;             // the group's nodes, in order of their first GPU
    std::vector<std::vector<int>> on;   // by node: its GPUs of the group, in order
    std::vector<int> node(n), place(n); // by GPU: its node's index and its place there
    for (int r = 0; r < n; ++r) {
      const int id = topo.node_of(gpu(r));
      auto it = std::find(nodes.begin(), nodes.end(), id);
      if (it == nodes.end()) {
        nodes.push_back(id);
        on.emplace_back();
        it = nodes.end() - 1;
      }
      node[r] = static_cast<int>(it - nodes.begin());
      place[r] = static_cast<int>(on[node[r]].size());
      on[node[r]].push_back(r);
    }
    const auto relay = [on](int r_place, int nd) { return on[nd][r_place % on[nd].size()]; };
    const auto pairs = [this, x](int r) {
      return x->shares[r].tokens * sc_.model.experts_per_token / sc_.prefill.pool_ep;
    };
    // The tokens of GPU r that have an expert on node nd: the chance that one of a token's k
    // distinct experts of E is among that node's e is 1 - C(E - e, k) / C(E, k).
    const auto reaching = [this, x, on](int r, int nd) {
      const double E = sc_.model.experts, k = sc_.model.experts_per_token;
      const double e = E / sc_.prefill.pool_ep * static_cast<double>(on[nd].size());
      double none = 1;
      for (int i = 0; i < static_cast<int>(k); ++i)
        none *= std::max(0.0, (E - e - i) / (E - i));
      return x->shares[r].tokens * (1 - none);
    };
    auto relay_left = std::make_shared<std::vector<int>>(static_cast<std::size_t>(n) * nodes.size(), 0);
    const auto back = [x, end](int r) {
      if (--x->pending[r] == 0 && --x->left == 0) end();
    };
    // A result of r's tokens reached the relay of node nd; with the node's last, it goes to r.
    const auto at_relay = [relay_left, relay, reaching, send, back, place, nodes](int r, int nd) {
      if (--(*relay_left)[static_cast<std::size_t>(r) * nodes.size() + nd] > 0) return;
      send(relay(place[r], nd), r, reaching(r, nd), EpOp::kCombine, [back, r] { back(r); });
    };
    const auto experts = [this, x, send, pairs, back, at_relay, relay, node, place](int t) {
      compute_on(x->shares[t].inst, x->experts, [x, t, send, pairs, back, at_relay, relay, node, place] {
        for (int r = 0; r < static_cast<int>(x->shares.size()); ++r) {
          if (r == t || pairs(r) <= 0) continue;
          if (node[r] == node[t]) {
            send(t, r, pairs(r), EpOp::kCombine, [back, r] { back(r); });
            continue;
          }
          const int g = relay(place[r], node[t]);
          if (g == t)
            at_relay(r, node[t]);
          else
            send(t, g, pairs(r), EpOp::kCombine, [at_relay, r, nd = node[t]] { at_relay(r, nd); });
        }
        back(t);
      });
    };
    const int nodes_n = static_cast<int>(nodes.size());
    for (int r = 0; r < n; ++r) {
      if (pairs(r) <= 0) continue;
      for (int t = 0; t < n; ++t)
        if (t != r) ++x->waiting[t];
      for (int nd = 0; nd < nodes_n; ++nd)
        if (nd != node[r]) {
          ++x->pending[r];
          (*relay_left)[static_cast<std::size_t>(r) * nodes.size() + nd] = static_cast<int>(on[nd].size());
        } else {
          x->pending[r] += static_cast<int>(on[nd].size()) - 1;
        }
    }
    const auto arrived = [x, experts](int t) {
      if (--x->waiting[t] == 0) experts(t);
    };
    for (int r = 0; r < n; ++r) {
      if (pairs(r) <= 0) continue;
      for (int t : on[node[r]])
        if (t != r) send(r, t, pairs(r), EpOp::kDispatch, [arrived, t] { arrived(t); });
      for (int nd = 0; nd < nodes_n; ++nd) {
        if (nd == node[r]) continue;
        const int g = relay(place[r], nd);
        send(r, g, reaching(r, nd), EpOp::kDispatch, [send, pairs, arrived, on, r, g, nd] {
          for (int t : on[nd])
            if (t != g) send(g, t, pairs(r), EpOp::kDispatch, [arrived, t] { arrived(t); });
          arrived(g);
        });
      }
    }
    for (int t = 0; t < n; ++t)
      if (x->waiting[t] == 0) experts(t);
  });
}

} // namespace xattn::sim::engine
