// Prefill on the decoding instances (scenario `prefill`; sim/engine/README.md, "Prefill"): what a
// prompt leaves to prefill when it arrives, and how an iteration's token budget splits between
// the batch's decodes and its prefill chunks, as vLLM's scheduler splits it.
#include "sim/model/prefill.hpp"
#include "sim/engine/iteration_steps.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

namespace xattn::sim::engine
{

void Simulation::make_kv_pool()
{
  const Scenario& sc = sc_;
  // A pool holds whole chunks, each with all of its layers, on each rank its share (MLA's one
  // latent head whole, GQA's KV heads split).
  const double chunk = chunk_kv(sc, false).value();
  const double capacity =
      sc.prefill.kv_capacity.value() > 0 ? std::max(1.0, std::floor(sc.prefill.kv_capacity.value() / chunk)) : 0.0;
  // With prefill.handoff none the prefill instances keep pools too (same tp, same HBM per GPU), no host tier.
  std::vector<std::uint64_t> host(sc.kv_pools(), 0);
  for (int i = 0; i < sc.requester_instances(); ++i)
    host[i] = host_tier_chunks(sc, i);
  kv_pool_ = std::make_unique<KvPool>(static_cast<int>(host.size()), static_cast<std::uint64_t>(capacity), host);
  if (sc.prefill.host_capacity.value() <= 0) return;
  // A chunk read back: every rank its share at once, each over its own PCIe link, the ranks under
  // one PCIe switch sharing its uplink to the host (topo::Topology::gpu_to_host); the path's
  // latencies once.
  for (auto& in : instances_) {
    std::map<topo::LinkId, int> sharing; // each host uplink: the instance's ranks behind it
    for (topo::GpuId g : in->gpus)
      ++sharing[sc.topology->gpu_to_host(g).back().link];
    double slowest = 0;
    for (topo::GpuId g : in->gpus) {
      const std::vector<topo::Hop> up = sc.topology->gpu_to_host(g);
      double latency = 0;
      for (const topo::Hop& h : up)
        latency += h.latency.value();
      const double rate = std::min(up.front().bandwidth.value(), up.back().bandwidth.value() / sharing[up.back().link]);
      slowest = std::max(slowest, latency + chunk / rate);
    }
    in->host_readback_s = slowest;
  }
}

void Simulation::admit_prompt(Active& a, const workloads::Request& r, int pool)
{
  // A block id is content: the first prompt that references it prefills it, and a later reference
  // finds it while a pool holds its chunk (its own instance's: free; another's: the policy serves
  // it as a cross-instance call), else prefills it again into its own pool. Pools hold whole
  // chunks: a new block of a chunk another pool holds is prefilled here, and the chunk kept here too.
  for (std::uint64_t c : a.chunks)
    kv_pool_->pin(c);
  KvPool::Counts& counts = kv_pool_->counts(pool);
  const double bt = static_cast<double>(r.block_tokens);
  double cached = 0, fresh = 0;
  thread_local std::vector<std::uint64_t> placed;   // chunks this prompt brought back: all of it prefilled
  thread_local std::vector<std::uint64_t> restored; // chunks this prompt read back from the host tier
  placed.clear();
  restored.clear();
  const auto in = [](const std::vector<std::uint64_t>& v, std::uint64_t c) {
    return std::find(v.begin(), v.end(), c) != v.end();
  };
  for (std::uint64_t b : r.blocks) {
    ++counts_.prefill.block_references;
    const std::uint64_t c = corpus_->chunk_of(b);
    const auto [first, fresh_block] = prefilled_blocks_.try_emplace(b, a.id);
    const bool seen = !fresh_block;
    // Once more in this prompt: found with the rest of it. Seen before: found where its chunk is,
    // unless this prompt had to bring the chunk back.
    const bool again = seen && first->second == a.id;
    int home = kv_pool_->home(c, pool);
    // Its own host tier before another instance's pool: read back over PCIe, then here.
    if (home != pool && kv_pool_->in_host(pool, c)) {
      kv_pool_->restore(pool, c);
      restored.push_back(c);
      a.readback_s += instances_[pool]->host_readback_s;
      home = pool;
    }
    if (again || (seen && home >= 0 && !in(placed, c))) {
      cached += bt;
      ++counts_.prefill.block_hits;
      ++(home != pool ? counts.remote_hits : in(restored, c) ? counts.host_hits : counts.local_hits);
      kv_pool_->use(home, c);
      continue;
    }
    fresh += bt;
    ++counts.misses;
    if (home != pool) kv_pool_->place(pool, c);
    if (home < 0) placed.push_back(c); // no pool held it: its blocks seen before are prefilled again too
  }
  const double tail = std::max(0.0, static_cast<double>(r.input_tokens) - bt * static_cast<double>(r.blocks.size()));
  a.prefill_before = cached;
  // A prompt found whole still computes its last token, whose logits make the first output token
  // (vLLM recomputes it on a full prefix-cache hit).
  a.prefill_left = std::max(1.0, fresh + tail);
  counts_.prefill.prefilled_tokens += static_cast<std::uint64_t>(a.prefill_left);
}

void IterationSteps::plan_prefill()
{
  std::vector<Simulation::Active*>& batch = plan->batch;
  double budget = static_cast<double>(sc().prefill.max_num_batched_tokens);
  for (const Simulation::Active* q : batch)
    if (q->prefill_left <= 0) budget -= 1; // a decode token each, first
  // Then the prompts' chunks in arrival order, each as much of its prompt as the budget has left;
  // a prompt that gets nothing waits for a later iteration.
  std::size_t kept = 0;
  plan->chunk.clear();
  for (Simulation::Active* q : batch) {
    double c = 0;
    if (q->prefill_left > 0) {
      c = std::min(q->prefill_left, budget);
      if (c <= 0) continue;
      budget -= c;
    }
    batch[kept++] = q;
    plan->chunk.push_back(c);
  }
  batch.resize(kept);

  const ModelSpec& m = sc().model;
  const calibrate::Profile& p = sc().profile;
  const Layout layout{.tp = sc().tp, .dp_attention = sc().dp_attention, .ep = sc().ep};
  // Under the full step a chunk's tokens are rows of the batch's GEMMs (model_work, in decode's
  // absorbed form) and the output head runs for a prompt the chunk ends; what the chunk adds
  // besides is its attention over its prompt so far. The attention-only step has no GEMMs for it
  // to ride (the whole price), and a profile's measured rate prices the whole of it.
  const bool rides = sc().full_step && !p.measured.prefill;
  plan->tokens = plan->head_rows = 0;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const double c = plan->chunk[i];
    if (c <= 0) { // a decode: a row and a head row
      plan->tokens += 1;
      plan->head_rows += 1;
      continue;
    }
    Simulation::Active& q = *batch[i];
    // Chunks found in the host tier are read back before the prompt's first chunk runs: the
    // iteration waits for them, as vLLM's forward pass waits for its KV connector's loads.
    plan->prefill_work += std::exchange(q.readback_s, 0.0);
    const PrefillChunk chunk{.tokens = c, .before = q.prefill_before, .ends_prompt = c >= q.prefill_left};
    if (p.measured.prefill) {
      plan->prefill_work += c / p.prefill_tokens_per_s;
    } else if (!rides) {
      plan->prefill_work += prefill_price(m, p, layout, chunk).total().value();
    } else {
      plan->tokens += c;
      plan->head_rows += chunk.ends_prompt ? 1 : 0;
      plan->prefill_work += prefill_attention(m, p, layout, chunk).total().value();
    }
  }
}

} // namespace xattn::sim::engine
