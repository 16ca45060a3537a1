// The request stream a scenario asks for: the trace (or generator), overlaid `copies` times with
// sessions and agents kept apart and the corpus shared, time-compressed by `time_scale`, cut at
// `max_requests`, output lengths capped at `max_output_tokens` (a recorded trace loads a large cluster lightly:
// docs/architecture.md).
#pragma once

#include "sim/engine/scenario.hpp"
#include "workloads/request.hpp"

#include <memory>

namespace xattn::sim::engine
{

/// Opens the scenario's stream afresh (each simulation process reads its own).
std::unique_ptr<workloads::RequestSource> open_workload(const Scenario& sc);

} // namespace xattn::sim::engine
