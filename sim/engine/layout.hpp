// The serving step's layout (engine.step: full): data-parallel attention over dp_attention GPUs
// per instance, the routed experts over ep of them, and whether the model fits in HBM.
// Internal to sim/engine (the scenario loader).
#pragma once

#include "sim/engine/scenario.hpp"

namespace xattn::sim::engine
{

/// Reads engine.step, instances.dp_attention and instances.ep into `sc` and reports, at their keys,
/// a layout that cannot serve: a model without the serving dimensions, tp > 1 beside
/// dp_attention or ep > 1, across nodes or without the profile's all-reduce figures, requesters
/// that do not split into instances, experts that do not split over ep, weights and the cache that
/// do not fit in the profile's gpu.hbm_capacity.
void check_layout(Scenario& sc, core::Section& top, core::Section& inst, core::Section& eng);

/// Why tensor parallelism of `tp` ranks cannot sit beside data-parallel attention or expert
/// parallelism (the requester instances' layout and the prefill pool's alike).
std::string tp_beside_dp_problem(int tp);
/// Why the routed experts cannot split over `ep` of a group of `dp` GPUs (`group`: what the group is).
std::string ep_split_problem(int ep, int dp, const std::string& group);
/// Why a model's routed experts cannot split over `ep` GPUs (a dense model has none); "" when they can.
std::string experts_split_problem(const ModelSpec& m, int ep);

} // namespace xattn::sim::engine
