// `xattn validate --paper`: the published figures of arXiv 2606.01502 (validate/reference/paper.yaml)
// reproduced by the engine. Each claim names an experiment (a measurement procedure
// over engine micro-scenarios, implemented in experiments.cpp), its configuration, the published
// figure as text and as a range, and whether it is an input (a constant the profile carries: it
// only shows the profile was read) or emergent (it must come out of the model and the simulation:
// the evidence). The published ranges live only in the reference file; code never types them.
#pragma once

#include "validate/micro.hpp"

#include <map>
#include <string>
#include <vector>

namespace xattn::validate
{

struct Claim {
  std::string id;
  std::string claim;                ///< what the paper says, in words
  std::string kind;                 ///< "input" or "emergent"
  std::string published;            ///< the published figure, as printed
  double min = -1e300, max = 1e300; ///< the range the simulated value must fall in, in `unit`
  std::string unit;                 ///< us, ms, x, %, GBps, count
  std::string experiment;           ///< experiments.cpp: round-trip, route-fetch-ratio, ...
  std::map<std::string, std::string> config;
  std::string source;     ///< where the figure (or its derivation) comes from
  std::string range_note; ///< where a bound is ours, not the paper's, and why
  int line = 0;
};

struct Reference {
  std::string file;
  std::string source;
  std::vector<Claim> claims;
};

/// Reads the reference file (name or path; default validate/reference/paper.yaml from the data
/// folders). Throws core::InputError for an unknown key, a missing field, an unknown experiment.
Reference load_reference(const std::string& path = "");

struct ExperimentResult {
  double value = 0;   ///< in the claim's unit
  std::string detail; ///< how it was obtained: engine figures, the closed form where shown
  std::string by;     ///< "engine" or "engine + closed form"
};

/// Runs one claim's experiment through the engine. Throws core::InputError for a bad config.
ExperimentResult run_experiment(const Claim& c, MicroRunner& runner);
/// The experiments known to run_experiment.
const std::vector<std::string>& experiment_names();

struct ClaimResult {
  Claim claim;
  ExperimentResult result;
  bool holds = false;
};

std::vector<ClaimResult> check_paper(const Reference& ref, MicroRunner& runner);

/// claim | published | simulated | holds, emergent claims first, then input claims, and a verdict line.
std::string paper_table(const std::vector<ClaimResult>& results, bool details);

} // namespace xattn::validate
