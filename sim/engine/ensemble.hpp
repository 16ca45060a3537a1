// `xattn run --ensemble N`: N members of a scenario, each with a profile drawn from the profile's
// uncertainty (calibrate/uncertainty.hpp) and its own seed, and the spread of their headline
// figures. What the spread means and leaves out: docs/confidence.md.
#pragma once

#include "sim/engine/figures.hpp"
#include "sim/engine/result.hpp"
#include "sim/engine/scenario.hpp"

#include <span>
#include <string>
#include <utility>
#include <vector>

namespace xattn::sim::engine
{

/// The members: member k has seed sc.seed + 1 + k and a profile drawn with normals from a
/// generator seeded by sc.seed (deterministic). A profile without uncertainties is kept as is.
std::vector<Scenario> ensemble_members(const Scenario& sc, int n);

/// The spread of each of `spread` (those of figures.hpp used for kSpread) over the members'
/// results, per policy.
/// REQUIRES: every member ran the same policies, in the same order.
Ensemble summarise_ensemble(const std::vector<std::vector<std::pair<std::string, PolicyResult>>>& members,
                            bool profile_drawn, std::span<const FigureInfo> spread = figures());

/// The ensemble's lines under the comparison table: per policy, the median and the 5-95% range of
/// step mean, step p99 and request p50 (with few members, min to max); then a note for each figure
/// whose members split (p95 over 3x p5, or the base run 25% outside their range), with the members'
/// values and the decision count that moved with them.
std::string ensemble_table(const RunResult& result);

} // namespace xattn::sim::engine
