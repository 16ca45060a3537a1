// `xattn predict --sweep VAR=FROM:TO`: the closed form along one variable (mq, ct, holders,
// reuse), and the exact points where the decision changes.
#pragma once

#include "sim/model/predict.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace xattn::sim
{

struct SweepSpec {
  std::string var; ///< mq | ct | holders | reuse
  double from = 0, to = 0;
};

/// Parses "VAR=FROM:TO" (throws core::InputError naming --sweep).
SweepSpec parse_sweep(std::string_view text);

struct Crossover {
  double at; ///< first value (integer variables) or the exact value (reuse) of the new decision
  Primitive before, after;
};

struct SweepResult {
  SweepSpec spec;
  std::vector<double> values;
  std::vector<Prediction> points;
  std::vector<Crossover> crossovers;
};

/// Evaluates the points (doubling for mq, ct and reuse; each integer for holders up to 64 steps)
/// and locates every change of decision by bisection between neighbouring points.
SweepResult sweep(const ModelSpec& m, const Profile& p, const PredictRequest& base, const SweepSpec& spec,
                  std::optional<PathCost> path = std::nullopt);

std::string to_table(const SweepResult& r);
nlohmann::json to_json(const SweepResult& r);

} // namespace xattn::sim
