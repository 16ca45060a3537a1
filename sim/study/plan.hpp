// `xattn plan PLAN.yaml`: the smallest configuration that meets a latency SLO. The plan file
// names a base scenario, the SLO (latency figures of one policy, each with its bound: p99 step
// latency <= 50ms, or p99 TTFT <= 2s and p99 TPOT <= 80ms),
// the size knob (a scenario key and its values, smallest first: holder GPUs, say) and the other
// knobs that may change (fabric, placement, policy...), tried in every combination, in file order.
//
// For each combination the size is bisected over its values (the SLO is assumed to improve with
// size; both ends are simulated first), running every probed point for real, for every seed (the
// SLO must hold for each, and the judged policy must keep up with the load: an overloaded run,
// engine/load.hpp, fails whatever its latencies). The answer is the smallest size over all combinations (ties: the
// earlier combination), shown with its figures and with the next smaller size of the same
// combination, which fails. Points run through the local sweep runner into a sweep folder, so an
// interrupted plan resumes and `xattn report` draws it.
#pragma once

#include "sim/study/local.hpp"
#include "sim/study/spec.hpp"

#include <optional>
#include <string>
#include <vector>

namespace xattn::sim::study
{

/// One bound of the SLO: a latency figure of the judged policy at most `max_s`.
struct SloBound {
  std::string metric; ///< "step_latency_s.p99" etc. (one used for engine::kBound, figures.hpp)
  double max_s = 0;
};

struct PlanSpec {
  std::string name, file, base, out;
  /// The SLO: slo.metric and slo.max first, then slo.also's bounds; every one must hold.
  std::vector<SloBound> slo;
  /// > 0: a configuration meets the SLO when at least this share of an ensemble's members (each
  /// with a profile drawn from the profile's uncertainty) meet it, over every seed.
  double confidence = 0;
  int draws = 16;            ///< ensemble members per point when `confidence` is set
  std::string policy;        ///< judged policy (when no `policy` knob)
  Axis size;                 ///< values smallest first
  std::vector<double> sizes; ///< size of each value (default 1..n)
  std::string size_label;
  std::vector<Axis> knobs; ///< alternatives; key "policy" chooses the judged policy
  std::vector<std::int64_t> seeds;
  int workers = 0;
};

const core::Schema& plan_schema();
PlanSpec load_plan(const std::string& path, const std::vector<std::string>& sets = {});

/// One simulated configuration, judged.
struct Evaluation {
  std::size_t combo = 0, index = 0;   ///< alternative combination, size index
  std::vector<std::string> point_ids; ///< one per seed
  std::vector<double> worst_s;        ///< per SLO bound, its figure worst over seeds (the point runs')
  double share = 1;                   ///< with confidence: the share of members meeting the SLO
  int members = 0;                    ///< with confidence: members judged (draws x seeds)
  bool meets = false;
  bool invariants_ok = true;
  bool overloaded = false; ///< the judged policy did not keep up with the load in some seed's run
  /// Non-empty: the configuration's data does not fit in its memory (core::FitError: the corpus on
  /// its holders, say), so it was refused before simulating; it fails, with no figure.
  std::string refused;
};

struct PlanResult {
  std::string dir;
  std::vector<std::vector<std::pair<std::string, std::string>>> combos; ///< knob key -> value
  std::vector<Evaluation> evaluations;                                  ///< in the order they were simulated
  std::optional<Evaluation> answer;
  std::optional<Evaluation> next_smaller; ///< same combination, one size down (fails)
  bool interrupted = false;
  int simulations = 0;
  double wall_s = 0;
};

PlanResult run_plan(const PlanSpec& spec, const std::string& out, int workers, bool progress);

/// The answer and its evidence in words (and the table of every evaluation).
std::string plan_text(const PlanSpec& spec, const PlanResult& r);
nlohmann::json plan_json(const PlanSpec& spec, const PlanResult& r);

} // namespace xattn::sim::study
