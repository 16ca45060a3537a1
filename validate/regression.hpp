// Scenario regression checks: every example scenario's key outputs against expected values with
// tolerances, stored in validate/regression/<scenario name>.yaml:
//
//   scenario: scenarios/quickstart.yaml       # relative to the expected file's folder's ../..
//   requires: [workloads/data/x/y.jsonl.zst] # optional, relative to the project root: skip (exit 77) where absent
//   checks:
//     - key: policies.*.requests              # a dotted path into summary.json; * = every policy
//       equals: 300                           # exact (numbers, booleans, strings)
//       why: the generator's workload.generator.requests
//     - key: policies.route.step_latency_s.p50
//       min: 4.5e-05                          # inclusive bounds (either may be left out)
//       max: 6.0e-05
//       why: ...
//
// Every check says why its expected value is what it is (an independent derivation, or a recorded
// run with a tolerance for the stochastic figures).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace xattn::validate
{

struct RegressionCheck {
  std::string key;
  nlohmann::json equals; ///< null when bounds are used
  double min = -1e300, max = 1e300;
  std::string why;
  int line = 0;
};

struct RegressionSpec {
  std::string file;
  std::string scenario;             ///< resolved path
  std::vector<std::string> missing; ///< `requires:` files that are absent (the check is skipped)
  std::vector<std::string> sets;    ///< `sets:` overrides the check runs the scenario with (as run --set)
  std::vector<RegressionCheck> checks;
};

/// Reads an expected-values file. Throws core::InputError on unknown keys or missing fields.
RegressionSpec load_regression(const std::string& path);

struct RegressionOutcome {
  bool ok = true;
  bool skipped = false; ///< a required file is absent
  std::string report;   ///< one line per check: ok/FAIL key value expected
};

/// Checks a summary.json document against the spec.
RegressionOutcome check_summary(const RegressionSpec& spec, const nlohmann::json& summary);

/// Runs the scenario (into a temporary folder, removed after) and checks its summary.
RegressionOutcome run_regression(const RegressionSpec& spec);

} // namespace xattn::validate
