#include "sim/engine/prefill_pool.hpp"
#include "sim/core/yaml.hpp"

#include "sim/engine/layout.hpp"
#include "sim/engine/source.hpp"
#include "sim/model/serving.hpp"
#include "topologies/topology.hpp"

#include <algorithm>
#include <string>

namespace xattn::sim::engine
{

namespace
{
// instances.prefill.dp_attention and ep: data-parallel groups of prefill instances of one GPU, the
// routed experts over 1 or all of a group's GPUs. False where the pool cannot be laid out so.
bool read_pool_groups(Scenario& sc, core::Section& pool)
{
  PrefillSpec& p = sc.prefill;
  p.pool_dp = std::max(1, pool.count("dp_attention"));
  p.pool_ep = std::max(1, pool.count("ep"));
  if (p.pool_tp > 1 && (p.pool_dp > 1 || p.pool_ep > 1)) {
    pool.error("tp", tp_beside_dp_problem(p.pool_tp));
    return false;
  }
  if (p.pool_ep != 1 && p.pool_ep != p.pool_dp) {
    pool.error("ep", ep_split_problem(p.pool_ep, p.pool_dp, "group"));
    return false;
  }
  if (std::string problem = experts_split_problem(sc.model, p.pool_ep); !problem.empty()) {
    pool.error("ep", problem);
    return false;
  }
  if (p.pool_instances() % p.pool_dp != 0) {
    pool.error("dp_attention",
               std::to_string(p.pool_instances()) +
                   " prefill GPUs do not split into groups of dp_attention = " + std::to_string(p.pool_dp));
    return false;
  }
  return true;
}
} // namespace

void read_prefill_pool(Scenario& sc, core::Section& inst, core::Section& pf)
{
  PrefillSpec& p = sc.prefill;
  const std::string handoff = pf.choice("handoff");
  p.handoff = handoff == "none" ? Handoff::kNone : handoff == "after" ? Handoff::kAfter : Handoff::kLayer;
  p.block_tokens = pf.count("block_tokens");
  if (!inst.has("prefill")) return;
  core::Section pool = inst.section("prefill");
  if (!sc.prefill.enabled) {
    pool.error("gpus", "a prefill pool prefills the prompts: it needs prefill.enabled");
    return;
  }
  p.pool_tp = std::max(1, pool.count("tp"));
  if (!sc.topology) return;
  p.pool = parse_gpus(pool.strings("gpus"), *sc.topology, pool, "gpus");
  const std::string tp = std::to_string(p.pool_tp);
  if (p.pool.empty()) {
    pool.error("gpus", "a prefill pool needs GPUs");
    return;
  }
  for (topo::GpuId g : p.pool)
    if (std::count(sc.requesters.begin(), sc.requesters.end(), g) +
            std::count(sc.holders.begin(), sc.holders.end(), g) >
        0) {
      pool.error("gpus", "GPU " + sc.topology->gpu_name(g) +
                             " is a requester or a holder too: a prefill pool has GPUs of its own");
      return;
    }
  if (p.pool.size() % static_cast<std::size_t>(p.pool_tp) != 0) {
    pool.error("gpus", std::to_string(p.pool.size()) + " GPUs do not split into prefill instances of tp = " + tp);
    return;
  }
  if (std::string problem = heads_split_problem(sc.model, p.pool_tp); !problem.empty()) pool.error("tp", problem);
  if (!read_pool_groups(sc, pool)) return;
  for (std::size_t first = 0; first < p.pool.size(); first += static_cast<std::size_t>(p.pool_tp))
    for (int k = 1; k < p.pool_tp; ++k)
      if (sc.topology->fabric_class(p.pool[first], p.pool[first + k]) != core::FabricClass::kNvlink) {
        pool.error("tp", "the tp = " + tp + " ranks of prefill GPU " + sc.topology->gpu_name(p.pool[first]) +
                             " are not all on its NVLink: tensor parallelism's all-reduces stay inside a node");
        return;
      }
  // Kept where it was prefilled, a prompt's KV is called there as on a requester instance: rank
  // for rank, the same tensor parallelism.
  if (p.handoff == Handoff::kNone && p.pool_tp != sc.tp)
    pf.error("handoff", "none keeps each prompt's KV on its prefill instance, where the requester instances call it "
                        "rank for rank: instances.prefill.tp (" +
                            tp + ") must be instances.tp (" + std::to_string(sc.tp) + ")");
  const calibrate::GpuSpec& g = sc.profile.gpu;
  if (g.given() && missing_serving_keys(sc.model).empty()) {
    const core::Bytes weights =
        weights_per_gpu(sc.model, {.tp = p.pool_tp, .dp_attention = p.pool_dp, .ep = p.pool_ep});
    if (weights > g.hbm_capacity)
      pool.error(p.pool_ep > 1 ? "ep" : "tp", "model '" + sc.model.name + "' over " +
                                                  (p.pool_ep > 1 ? "ep = " + std::to_string(p.pool_ep) : "tp = " + tp) +
                                                  " is " + core::format_bytes(weights) +
                                                  " of weights per GPU, more than the gpu.hbm_capacity of profile '" +
                                                  sc.profile.name + "' (" + core::format_bytes(g.hbm_capacity) + ")");
  }
}

void check_decode_room(const Scenario& sc)
{
  if (!sc.prefill.disaggregated() || sc.prefill.kept_in_pool() || sc.batch_hbm.value() <= 0) return;
  auto src = open_workload(sc);
  workloads::Request r;
  std::int64_t longest = 0;
  std::uint64_t which = 0;
  while (src->next(r)) {
    const std::int64_t blocks = static_cast<std::int64_t>(r.blocks.size()) * r.block_tokens;
    const std::int64_t context = std::max(r.input_tokens, blocks) + r.output_tokens;
    if (context > longest) {
      longest = context;
      which = r.id;
    }
  }
  const core::Bytes need =
      sc.model.kv_per_token_on_rank(sc.tp) * (static_cast<double>(longest) * static_cast<double>(sc.model.layers));
  if (need > sc.batch_hbm)
    core::fail(sc.file, 0, 0, "instances.prefill",
               "request " + std::to_string(which) + " of the workload, " + std::to_string(longest) +
                   " tokens with its output, needs " + core::format_bytes(need) +
                   " of KV on each requester GPU it decodes on, more than the " + core::format_bytes(sc.batch_hbm) +
                   " its HBM has for a batch's KV beside the weights and engine.cache_budget: the KV handed off "
                   "must land whole (more requester GPUs per instance, instances.tp, split it)");
}

} // namespace xattn::sim::engine
