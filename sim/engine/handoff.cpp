// Disaggregated prefill (instances.prefill; sim/engine/README.md, "Disaggregated prefill"): a
// prompt is prefilled on an instance of the prefill pool, in iterations of prefill chunks under
// the token budget (prefill_iteration.cpp), and its KV handed off to its requester instance over
// the network, as real flows sharing links with everything else; it decodes there once the last
// of it landed.
#include "sim/engine/network.hpp"
#include "sim/engine/state.hpp"
#include "sim/model/pricing.hpp"

#include <algorithm>
#include <utility>

namespace xattn::sim::engine
{

void Simulation::make_prefill_pool()
{
  const PrefillSpec& p = sc_.prefill;
  prefill_groups_.resize(static_cast<std::size_t>(p.pool_groups()));
  for (int i = 0; i < p.pool_instances(); ++i) {
    auto in = std::make_unique<PrefillInstance>();
    in->gpus.assign(p.pool.begin() + i * p.pool_tp, p.pool.begin() + (i + 1) * p.pool_tp);
    in->group = i / p.pool_dp;
    prefill_groups_[static_cast<std::size_t>(in->group)].members.push_back(i);
    prefill_instances_.push_back(std::move(in));
  }
}

int Simulation::pick_prefill_instance() const
{
  // The instance with the fewest prompt tokens left to prefill; ties to the lowest index.
  int p = 0;
  for (int i = 1; i < static_cast<int>(prefill_instances_.size()); ++i)
    if (prefill_instances_[i]->queued_tokens < prefill_instances_[p]->queued_tokens) p = i;
  return p;
}

void Simulation::to_prefill_pool(std::unique_ptr<Active> a, int p)
{
  PrefillInstance& in = *prefill_instances_[p];
  ++instances_[a->home]->incoming;
  in.queued_tokens += a->prefill_left;
  in.queue.push_back(std::move(a));
  if (!prefill_groups_[static_cast<std::size_t>(in.group)].busy) start_prefill(in.group);
}

void Simulation::send_layers(Active* q, int p, double tokens, double work)
{
  // Layer by layer: each layer's KV leaves as its layer is computed, the iteration's layers one
  // after another. Layer granularity sends each layer's piece when its layer ends; step
  // granularity sends all of them as one flow, started so that alone on its path it ends when the
  // last layer's piece would (as late as the pipeline lets it, never before the first layer ends).
  const ModelSpec& m = sc_.model;
  const double L = m.layers;
  if (sc_.granularity == Granularity::kLayer) {
    for (int l = 0; l < m.layers; ++l)
      after(work * (l + 1) / L, [this, q, p, tokens] { send_kv(q, p, tokens, 1); });
    return;
  }
  // A layer's piece alone on the first rank's path takes `layer`, all of them L x layer.
  const MovePrice x =
      handoff_price(prefill_instances_[p]->gpus[0], instances_[q->home]->gpus[0], m.tokens_per_rank(tokens, sc_.tp));
  const double layer = (x.bytes / x.chunk_flow.rate).value();
  after(std::max(work / L, work + layer - L * layer), [this, q, p, tokens, L] { send_kv(q, p, tokens, L); });
}

void Simulation::end_prefill(int p, const std::vector<double>& chunks)
{
  PrefillInstance& in = *prefill_instances_[p];
  // The iteration's prompts are the queue's first ones (arrivals only join its back).
  std::size_t i = 0;
  for (auto it = in.queue.begin(); it != in.queue.end() && i < chunks.size(); ++i) {
    Active& q = **it;
    const double c = chunks[i];
    if (c > 0) {
      ++counts_.prefill.chunks;
      q.prefill_left -= c;
      q.prefill_before += c;
      q.pool_prefilled += c;
      in.queued_tokens -= c;
    }
    if (c <= 0 || q.prefill_left > 0) {
      ++it;
      continue;
    }
    // Its prefill ended: the KV it made leaves now (after the prefill; layer by layer it left with
    // each chunk). Blocks it found cached stay in the pools that hold them.
    if (sc_.prefill.handoff == Handoff::kAfter)
      send_kv(&q, p, sc_.prefill.handoff_tokens(q.pool_prefilled), sc_.model.layers);
    if (sc_.prefill.handoff != Handoff::kNone) ++counts_.prefill.handoffs;
    q.prefilled_at = now();
    const std::uint64_t id = q.id;
    handing_off_[id] = std::move(*it);
    it = in.queue.erase(it);
    land_if_whole(handing_off_[id].get());
  }
}

MovePrice Simulation::handoff_price(topo::GpuId src, topo::GpuId dst, double tokens)
{
  // A moved chunk's price; prompt-chained KV keeps its positions (nothing to splice). Each transfer
  // also pays the profile's per-transfer costs (kv_transfer: registration, post, completion).
  MovePrice x = price_move(sc_.model, sc_.profile, tokens, 1, path_cost(src, dst), {sc_.transport, true, true});
  x.after_chunk = x.after_chunk + sc_.profile.kv_transfer.total();
  return x;
}

void Simulation::send_kv(Active* a, int p, double tokens, double layers)
{
  const ModelSpec& m = sc_.model;
  const PrefillInstance& from = *prefill_instances_[p];
  const Instance& to = *instances_[a->home];
  const int tp = sc_.tp;
  // Each requester rank needs its share of every token (MLA: the whole latent, GQA: its KV
  // heads'); under MLA each fetches a tp-th of the tokens and forwards it to its peers over
  // NVLink, as a fetched chunk is split (sim/engine/iteration.cpp), from the prefill rank of its
  // index (modulo the pool's tp).
  const double share = m.tokens_per_rank(tokens, tp);
  for (int r = 0; r < tp; ++r) {
    const topo::GpuId src = from.gpus[static_cast<std::size_t>(r % sc_.prefill.pool_tp)], dst = to.gpus[r];
    const MovePrice x = handoff_price(src, dst, share);
    const Bytes bytes = x.bytes * layers;
    counts_.prefill.handoff_bytes += static_cast<std::uint64_t>(bytes.value());
    ++a->handoff_pending;
    net_->transfer(src, dst, bytes.value(), x.chunk_flow, x.after_chunk.value(), [this, a, r, share, layers, dst] {
      if (sc_.tp > 1 && sc_.model.mla())
        for (int k = 0; k < sc_.tp; ++k) {
          if (k == r) continue;
          const topo::GpuId peer = instances_[a->home]->gpus[k];
          const MovePrice y = handoff_price(dst, peer, share);
          ++a->handoff_pending;
          net_->transfer(dst, peer, (y.bytes * layers).value(), y.chunk_flow, y.after_chunk.value(),
                         [this, a] { piece_landed(a); });
        }
      piece_landed(a);
    });
  }
}

void Simulation::piece_landed(Active* a)
{
  XATTN_CHECK(a->handoff_pending > 0, "a piece of a hand-off lands twice");
  --a->handoff_pending;
  land_if_whole(a);
}

void Simulation::land_if_whole(Active* a)
{
  auto it = handing_off_.find(a->id);
  // Still prefilling (an earlier chunk's KV landed), or more of it on its way.
  if (it == handing_off_.end() || a->handoff_pending > 0) return;
  std::unique_ptr<Active> q = std::move(it->second);
  handing_off_.erase(it);
  --instances_[q->home]->incoming;
  if (sc_.prefill.handoff != Handoff::kNone) handoff_wait_.push_back(static_cast<float>(now() - q->prefilled_at));
  enqueue(std::move(q));
  start_idle_groups();
}

} // namespace xattn::sim::engine
