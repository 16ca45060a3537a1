// The simulation's per-request and per-requester state (internal to sim/engine).
#pragma once

#include "sim/engine/own_compute.hpp"
#include "sim/engine/simulation.hpp"
#include "workloads/rng.hpp"

#include <algorithm>
#include <deque>
#include <memory>
#include <unordered_set>

namespace xattn::sim::engine
{

/// A request being decoded.
struct Simulation::Active {
  Active(const workloads::Request& r, const Scenario& sc, workloads::Corpus& corpus,
         const std::vector<std::uint64_t>& hot)
      : id(r.id), session(r.session), agent(r.agent), blocks(r.blocks), rng(workloads::Rng::derive(sc.seed, r.id))
  {
    arrival = r.arrival.value();
    steps_total = r.output_tokens;
    const std::int64_t per_chunk = corpus.blocks_per_chunk();
    const double bt = static_cast<double>(r.block_tokens);
    for (std::uint64_t b : blocks) {
      const std::uint64_t c = corpus.chunk_of(b);
      if (!chunks.empty() && chunks.back() == c)
        chunk_tokens.back() += bt;
      else {
        auto it = std::find(chunks.begin(), chunks.end(), c);
        if (it == chunks.end()) {
          chunks.push_back(c);
          chunk_tokens.push_back(bt);
        } else {
          chunk_tokens[static_cast<std::size_t>(it - chunks.begin())] += bt;
        }
      }
    }
    (void)per_chunk;
    sorted_chunks = chunks;
    std::sort(sorted_chunks.begin(), sorted_chunks.end());
    if (sc.selection.sparse && !blocks.empty()) {
      auto is_hot = [&corpus, &hot](std::uint64_t b) {
        auto c = corpus.find(b);
        return c && std::binary_search(hot.begin(), hot.end(), *c);
      };
      selector = std::make_unique<workloads::Selector>(sc.selection, std::span<const std::uint64_t>(blocks),
                                                       r.block_tokens, is_hot);
      select_probability =
          std::min(1.0, selector->expected_union(sc.model.layers) / static_cast<double>(blocks.size()));
    }
  }

  std::uint64_t id, session, agent;
  std::vector<std::uint64_t> blocks;             ///< context (the selector reads it)
  std::vector<std::uint64_t> chunks;             ///< distinct chunks, in context order
  std::vector<double> chunk_tokens;              ///< the request's tokens in each of them
  std::vector<std::uint64_t> sorted_chunks;      ///< for membership tests
  std::unique_ptr<workloads::Selector> selector; ///< sparse selection; null when dense
  double select_probability = 1.0;               ///< chance a context block is selected in a step (by any layer)
  workloads::Rng rng;
  std::int64_t steps_total = 0, steps_done = 0;
  double arrival = 0, first_start = -1, last_end = 0, sum_step = 0, max_step = 0;
  double first_token = -1; ///< when its first step ended (TPOT counts the steps after it)
  // prefill.enabled: its prompt tokens still to prefill, and those already in its KV (its blocks
  // prefilled before it came, then its own chunks so far): a chunk attends them.
  double prefill_left = 0, prefill_before = 0;
  double readback_s = 0;     ///< chunks its prompt found in the host tier, read back before its first prefill chunk
  int handoff_pending = 0;   ///< instances.prefill: pieces of its KV on their way to its requester instance
  double prefilled_at = 0;   ///< instances.prefill: when its prefill ended
  double pool_prefilled = 0; ///< instances.prefill: its tokens prefilled in the pool (what it hands off)
  int home = 0;
  std::uint64_t routed = 0, fetched = 0, prefilled = 0, cached = 0;
};

/// instances.prefill: a prefill instance (pool_tp GPUs prefilling in lockstep); its prompts until
/// their prefill ends, in arrival order.
struct Simulation::PrefillInstance {
  std::vector<topo::GpuId> gpus;
  std::deque<std::unique_ptr<Active>> queue;
  double queued_tokens = 0; ///< prompt tokens left to prefill
  int group = 0;            ///< its data-parallel group (instances.prefill.dp_attention)
};

/// Prefill instances that iterate together (one alone unless instances.prefill.dp_attention > 1).
struct Simulation::PrefillGroup {
  std::vector<int> members; ///< prefill instances, in order
  bool busy = false;
};

/// A requester instance (tp GPUs decoding in lockstep).
struct Simulation::Instance {
  int index = 0;
  std::vector<topo::GpuId> gpus;
  std::deque<std::unique_ptr<Active>> active; ///< arrival order
  std::unique_ptr<LruCache> cache;            ///< moved KV, one GPU's worth (each rank holds the full latent)
  bool busy = false;
  int group = -1;             ///< its expert-parallel group (engine.step full, ep > 1); -1: steps alone
  double host_readback_s = 0; ///< prefill.host_capacity: one chunk read back from its host tier
  int incoming = 0;           ///< instances.prefill: its requests still prefilling or handed off
  std::unordered_set<std::uint64_t> in_flight; ///< cache keys fetched in the background, not landed yet
  std::vector<OwnCompute> own; ///< per rank: its GPU's own kernels (tails, experts, splices, re-prefills)
  double step_s = 0;           ///< its iterations' durations, summed
};

} // namespace xattn::sim::engine
