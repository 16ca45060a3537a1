// instances.prefill: a pool of prefill instances beside the requester instances (disaggregated
// serving, xPyD), read and checked with the scenario. Internal to sim/engine (the scenario loader).
#pragma once

#include "sim/engine/scenario.hpp"

namespace xattn::sim::engine
{

/// Reads instances.prefill and prefill.handoff into sc.prefill and reports, at their keys, a pool
/// that cannot serve: without prefill.enabled, on GPUs that are requesters or holders, GPUs that
/// do not split into instances of its tp or whose ranks are not on one NVLink, heads or KV heads
/// that do not split over its tp, weights that do not fit in the profile's gpu.hbm_capacity.
void read_prefill_pool(Scenario& sc, core::Section& inst, core::Section& pf);

/// With a prefill pool that hands every request's KV off whole to its requester instance: fails (bad
/// input, at instances.prefill) when the workload's longest request (its prompt and output) does
/// not fit in the HBM a requester GPU has for its batch's KV (Scenario::batch_hbm). Reads the
/// whole workload once.
void check_decode_room(const Scenario& sc);

} // namespace xattn::sim::engine
