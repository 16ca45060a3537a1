// Reading a scenario's policies and policy variants (scenario_policies.cpp), a part of
// parse_scenario. Internal to sim/engine.
#pragma once

#include "sim/core/yaml.hpp"
#include "sim/engine/scenario.hpp"

namespace xattn::sim::engine
{

/// The policies compared (all of them by default) and the variants they may name, into `sc`;
/// checks what their pricing needs of the model. Problems go to `top`'s diagnostics.
void read_policies(Scenario& sc, core::Section& top);

} // namespace xattn::sim::engine
