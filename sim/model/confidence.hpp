// How sure a prediction is: the closed form evaluated over profiles drawn from the profile's own
// uncertainty (calibrate/uncertainty.hpp), each cost term and total as p5 / p50 / p95, the
// break-even reuse likewise, and the decision's stability: the share of draws that keep the
// decision the profile's own values give. Monte Carlo with a fixed seed: deterministic. What the
// intervals mean and leave out: docs/confidence.md.
#pragma once

#include "sim/model/predict.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace xattn::sim
{

struct Quantiles {
  double p5 = 0, p50 = 0, p95 = 0; ///< may be +infinity (a break-even that is never reached)
};
/// Nearest-rank quantiles of `v` (sorted in place). REQUIRES: v not empty.
Quantiles quantiles(std::vector<double>& v);

struct PredictionSpread {
  int draws = 0; ///< 0: the profile gives points only, nothing below is set
  /// Per primitive (route, fetch, local): each term by name (kBreakdownTerms) and "total".
  std::array<std::map<std::string, Quantiles>, 3> terms;
  Quantiles break_even;
  double stability = 1;                 ///< share of draws deciding as the point prediction does
  std::array<double, 3> share{1, 0, 0}; ///< share of draws choosing route, fetch, local
};

/// `draws` predictions over profiles drawn from `p`'s uncertainty (seeded by `seed`).
PredictionSpread predict_spread(const ModelSpec& m, const Profile& p, const PredictRequest& r,
                                std::optional<PathCost> path, int draws = 2000, std::uint64_t seed = 1);

/// Adds "interval" and "stability" (and "decision_share", "draws") to predict's JSON; null
/// intervals and a note when the profile gives points only.
void add_spread(nlohmann::json& j, const PredictionSpread& s);
/// The lines the human table adds.
std::string spread_table(const PredictionSpread& s, const Prediction& p);

} // namespace xattn::sim
