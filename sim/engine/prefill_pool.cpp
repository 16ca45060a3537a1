#include "sim/engine/prefill_pool.hpp"
#include "sim/core/yaml.hpp"

#include "sim/model/serving.hpp"
#include "topologies/topology.hpp"

#include <algorithm>
#include <string>

namespace xattn::sim::engine
{

void read_prefill_pool(Scenario& sc, core::Section& inst, core::Section& pf)
{
  PrefillSpec& p = sc.prefill;
  p.handoff_by_layer = pf.choice("handoff") == "layer";
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
  for (std::size_t first = 0; first < p.pool.size(); first += static_cast<std::size_t>(p.pool_tp))
    for (int k = 1; k < p.pool_tp; ++k)
      if (sc.topology->fabric_class(p.pool[first], p.pool[first + k]) != core::FabricClass::kNvlink) {
        pool.error("tp", "the tp = " + tp + " ranks of prefill GPU " + sc.topology->gpu_name(p.pool[first]) +
                             " are not all on its NVLink: tensor parallelism's all-reduces stay inside a node");
        return;
      }
  const calibrate::GpuSpec& g = sc.profile.gpu;
  if (g.given() && missing_serving_keys(sc.model).empty()) {
    const core::Bytes weights = weights_per_gpu(sc.model, {.tp = p.pool_tp});
    if (weights > g.hbm_capacity)
      pool.error("tp", "model '" + sc.model.name + "' over tp = " + tp + " is " + core::format_bytes(weights) +
                           " of weights per GPU, more than the gpu.hbm_capacity of profile '" + sc.profile.name +
                           "' (" + core::format_bytes(g.hbm_capacity) + ")");
  }
}

} // namespace xattn::sim::engine
