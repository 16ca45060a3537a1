// `xattn capacity SCENARIO`: the highest load at which each policy keeps up with its arrivals and
// meets an SLO. The load is a multiple x of the scenario's arrival rate (workload.time_scale
// multiplied by x: the same requests, arriving x times faster). A probe simulates the scenario
// under one policy at one x, for real, and meets when the policy is not overloaded (load.hpp:
// its second half delivered at least 1 - engine.overload_tolerance of the output tokens offered),
// its invariants held, and the SLO's figure is within its bound.
//
// Per policy: x = 1 first; then doubling up (or halving down) until a probe fails (or meets),
// which brackets the answer; then geometric bisection until the failing load is within
// `precision` of the meeting one. The answer is the highest load that met, shown with the
// lowest that failed above it (the evidence) and why it failed. Assumes that a heavier load never
// makes a policy meet where a lighter one failed; a finite run's noise can break that near the
// answer, within about the overload tolerance.
//
// Every probe's run folder is kept under the capacity folder, <policy>/load-<x>/.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>
#include <vector>

namespace xattn::sim::study
{

/// A latency bound: a figure (one used for engine::kBound, figures.hpp) at most `max_s`.
struct Slo {
  std::string metric;
  double max_s = 0;
};

/// Parses "FIGURE=BOUND" ("tpot_s.mean=50ms"). Throws core::InputError naming `where`.
Slo parse_slo(const std::string& text, const std::string& where);

struct CapacitySpec {
  std::string scenario;              ///< the scenario file
  std::vector<std::string> sets;     ///< --set overrides
  std::vector<std::string> policies; ///< empty: the scenario's
  std::optional<Slo> slo;            ///< none: keeping up is the whole test
  double min_load = 1.0 / 1024, max_load = 1024;
  double precision = 0.05; ///< the bracket's end: failing load / meeting load <= 1 + precision
  std::string out;         ///< the capacity folder (default out/<name>-capacity)
};

struct Probe {
  double load = 0; ///< multiple of the scenario's arrival rate
  bool meets = false;
  bool overloaded = false;         ///< it did not keep up (engine/load.hpp), whatever else held
  std::string why;                 ///< why it failed ("" when it met)
  double offered_tokens_per_s = 0; ///< over the second half of the arrivals
  double delivered_share = 0;
  double metric_s = 0; ///< the SLO's figure (0 without an SLO)
  std::string dir;     ///< the probe's run folder
};

struct PolicyCapacity {
  std::string policy;
  std::vector<Probe> probes;   ///< in the order simulated
  std::optional<Probe> answer; ///< the highest load that met
  std::optional<Probe> next;   ///< the lowest load above it that failed (none: met at max_load)
};

struct CapacityResult {
  std::string name, dir;
  double base_requests_per_s = 0; ///< the scenario's offered arrival rate at x = 1
  double overload_tolerance = 0;  ///< engine.overload_tolerance: a probe delivering less is overloaded
  std::vector<PolicyCapacity> policies;
  int simulations = 0;
  double wall_s = 0;
  bool interrupted = false; ///< a probe was stopped by a signal: the policies searched before it
};

/// Runs the search for every policy. Throws core::InputError for a bad scenario or override, or
/// for a scenario whose arrivals have no window (all at once, or a closed loop: no load to scale).
CapacityResult run_capacity(const CapacitySpec& spec, bool progress);

/// The table of answers and the verdict, in words.
std::string capacity_text(const CapacitySpec& spec, const CapacityResult& r);
nlohmann::json capacity_json(const CapacitySpec& spec, const CapacityResult& r);

} // namespace xattn::sim::study
