#include "sim/engine/layout.hpp"
#include "sim/core/yaml.hpp"

#include "sim/core/units.hpp"
#include "sim/model/serving.hpp"
#include "topologies/topology.hpp"

#include <string>

namespace xattn::sim::engine
{

std::string tp_beside_dp_problem(int tp)
{
  return "tensor parallelism (tp = " + std::to_string(tp) +
         ") splits every expert over its ranks: set dp_attention: 1 and ep: 1 with it (data-parallel attention and "
         "expert parallelism are the other layout)";
}

std::string ep_split_problem(int ep, int dp, const std::string& group)
{
  return "the routed experts split over 1 GPU or over every GPU of the " + group +
         " (dp_attention = " + std::to_string(dp) + "), not " + std::to_string(ep);
}

std::string experts_split_problem(const ModelSpec& m, int ep)
{
  if (!m.moe())
    return ep == 1 ? "" : "model '" + m.name + "' has no routed experts to split: ep is 1 for a dense model";
  if (m.experts % ep == 0) return "";
  return "the model's " + std::to_string(m.experts) + " experts do not split over ep = " + std::to_string(ep);
}

namespace
{

// Tensor parallelism in the full step: one batch over the tp ranks of a node, every weight split
// over them (sim/model/serving.hpp), its all-reduces priced by the profile.
void check_tensor_parallel(const Scenario& sc, core::Section& top, core::Section& inst)
{
  if (sc.dp_attention != 1 || sc.ep != 1) inst.error("tp", tp_beside_dp_problem(sc.tp));
  const calibrate::Profile& p = sc.profile;
  if (!p.name.empty() && (p.tp_all_reduce_latency.value() <= 0 || p.tp_all_reduce_bus.value() <= 0))
    top.error("profile", "profile '" + p.name +
                             "' gives no tensor_parallel.all_reduce_latency and all_reduce_bus_bandwidth, which "
                             "the full step needs for tp > 1");
  if (!sc.topology) return;
  for (std::size_t first = 0; first + sc.tp <= sc.requesters.size(); first += sc.tp)
    for (int k = 1; k < sc.tp; ++k)
      if (sc.topology->fabric_class(sc.requesters[first], sc.requesters[first + k]) != core::FabricClass::kNvlink) {
        inst.error("tp", "the tp = " + std::to_string(sc.tp) + " ranks of requester GPU " +
                             sc.topology->gpu_name(sc.requesters[first]) +
                             " are not all on its NVLink: tensor parallelism's all-reduces stay inside a node");
        return;
      }
}

// What a requester GPU's HBM holds beside `weights` and the cache budget: its batch's own KV
// (Scenario::batch_hbm; 0 without the profile's gpu section, or when nothing is left).
core::Bytes hbm_left(const Scenario& sc, core::Bytes weights)
{
  const calibrate::GpuSpec& g = sc.profile.gpu;
  const core::Bytes taken = weights + sc.cache_budget;
  return g.given() && taken < g.hbm_capacity ? g.hbm_capacity - taken : core::Bytes(0);
}

// Draws need an expert-parallel group whose GPUs split the experts' copies evenly.
void check_expert_routing(const Scenario& sc, core::Section& inst)
{
  const ExpertRoutingConfig& c = sc.expert_routing;
  if (c.redundant_experts > 0 && c.mode != ExpertRouting::kBalanced)
    inst.error("redundant_experts", "extra expert copies are placed by expert_routing: balanced; set it, or leave "
                                    "redundant_experts out");
  if (c.mode == ExpertRouting::kExpected) return;
  if (!sc.full_step || sc.ep <= 1) {
    inst.error("expert_routing", "experts drawn per token travel between the GPUs of an expert-parallel group: "
                                 "set engine.step: full and ep > 1 with it");
    return;
  }
  if (sc.model.moe() && sc.model.experts_per_token > 0 && (sc.model.experts + c.redundant_experts) % sc.ep != 0)
    inst.error("redundant_experts", "the model's " + std::to_string(sc.model.experts) + " experts and " +
                                        std::to_string(c.redundant_experts) +
                                        " extra copies do not split over ep = " + std::to_string(sc.ep));
}

} // namespace

void check_layout(Scenario& sc, core::Section& top, core::Section& inst, core::Section& eng)
{
  sc.full_step = eng.choice("step") == "full";
  sc.dp_attention = inst.count("dp_attention");
  sc.ep = inst.count("ep");
  sc.expert_routing = {expert_routing_from(inst.choice("expert_routing")), inst.number("expert_skew"),
                       inst.count("redundant_experts")};
  check_expert_routing(sc, inst);
  sc.micro_batches = inst.count("micro_batches");
  if (sc.micro_batches > 1 && (!sc.full_step || sc.ep <= 1 || sc.granularity != Granularity::kLayer))
    inst.error("micro_batches", "two micro-batches overlap each layer's all-to-all with the other's compute: set "
                                "engine.step: full, engine.granularity: layer and ep > 1 with them");
  const calibrate::GpuSpec& g = sc.profile.gpu;
  sc.batch_hbm = hbm_left(sc, core::Bytes(0)); // attention only: no weights priced, the cache's leftover
  if (!sc.full_step) {
    for (auto [key, value] : {std::pair{"dp_attention", sc.dp_attention}, std::pair{"ep", sc.ep}})
      if (value > 1) inst.error(key, "a layout for the whole model's step: set engine.step: full with it");
    return;
  }
  if (sc.dp_attention <= 0 || sc.ep <= 0 || sc.model.layers <= 0) return; // already reported
  if (std::string missing = missing_for_serving(sc.model); !missing.empty()) top.error("model", missing);
  if (sc.tp > 1) check_tensor_parallel(sc, top, inst);
  if (!sc.requesters.empty() && sc.requesters.size() % static_cast<std::size_t>(sc.dp_attention) != 0)
    inst.error("dp_attention",
               std::to_string(sc.requesters.size()) +
                   " requester GPUs do not split into instances of dp_attention = " + std::to_string(sc.dp_attention));
  if (sc.ep != 1 && sc.ep != sc.dp_attention) inst.error("ep", ep_split_problem(sc.ep, sc.dp_attention, "instance"));
  if (std::string problem = experts_split_problem(sc.model, sc.ep); !problem.empty()) inst.error("ep", problem);
  if (sc.profile.name.empty()) return; // the profile's own error stands
  if (!g.given() || g.hbm_capacity.value() <= 0) {
    top.error("profile", "profile '" + sc.profile.name +
                             "' gives no gpu.hbm_capacity (and gpu section), which the full step needs to place "
                             "the weights");
    return;
  }
  const core::Bytes weights = weights_per_gpu(sc.model, {.tp = sc.tp,
                                                         .dp_attention = sc.dp_attention,
                                                         .ep = sc.ep,
                                                         .redundant_experts = sc.expert_routing.redundant_experts});
  const bool tensor = sc.tp > 1;
  sc.batch_hbm = hbm_left(sc, weights);
  if (weights + sc.cache_budget > g.hbm_capacity)
    inst.error(tensor ? "tp" : "ep",
               "model '" + sc.model.name + "' puts " + core::format_bytes(weights) + " of weights on each GPU at " +
                   (tensor ? "tp = " + std::to_string(sc.tp) : "ep = " + std::to_string(sc.ep)) +
                   "; with engine.cache_budget " + core::format_bytes(sc.cache_budget) +
                   " that exceeds gpu.hbm_capacity " + core::format_bytes(g.hbm_capacity) + " of profile '" +
                   sc.profile.name + "': " +
                   (tensor ? "a GPU with more HBM or data-parallel attention with expert parallelism over more GPUs"
                           : "raise dp_attention and ep together (more GPUs per instance)") +
                   " or lower the cache budget");
}

} // namespace xattn::sim::engine
