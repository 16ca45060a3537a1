// `xattn run --ensemble N`: N members of a scenario, each with a profile drawn from the profile's
// uncertainty (calibrate/uncertainty.hpp) and its own seed, and the spread of their headline
// figures. What the spread means and leaves out: docs/confidence.md.
#pragma once

#include "sim/engine/result.hpp"
#include "sim/engine/scenario.hpp"

#include <string>
#include <utility>
#include <vector>

namespace xattn::sim::engine
{

/// The members: member k has seed sc.seed + 1 + k and a profile drawn with normals from a
/// generator seeded by sc.seed (deterministic). A profile without uncertainties is kept as is.
std::vector<Scenario> ensemble_members(const Scenario& sc, int n);

/// The spread of each headline figure (kEnsembleFigures) over the members' results, per policy.
/// REQUIRES: every member ran the same policies, in the same order.
Ensemble summarise_ensemble(const std::vector<std::vector<std::pair<std::string, PolicyResult>>>& members,
                            bool profile_drawn);

} // namespace xattn::sim::engine
