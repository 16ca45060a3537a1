// The up-front checks on a run's size. Each key of a scenario lies in its range (the schema says
// which and why), but products of keys can still ask for a run that cannot fit or cannot be timed:
// requests x copies x output length decode steps whose latencies are kept, copies shifted past the
// simulated-time horizon, a chunk of chunk_tokens x layers bytes larger than a holder, a generated
// corpus whose popularity table overflows. These are bad input (exit 2), reported before anything
// runs at the key to change, naming the keys whose product is too large. What a trace holds is
// known only once it is read: the memory guard (engine.max_memory, sim/core/memory.hpp) covers it.
#pragma once

#include "sim/engine/scenario.hpp"

namespace xattn::sim::engine
{

/// The sections the sizing keys sit in: errors are reported at the key to change.
struct RunSizeKeys {
  core::Section& workload;
  core::Section* source; ///< the generator's or the standing batch's section; null for a trace
  core::Section& corpus;
  core::Section& engine;
};

/// What a generated workload or a standing batch makes one simulation process hold at the least (a
/// lower bound: the active requests' contexts, the caches and SimGrid come on top). All zero for a
/// trace.
struct RunSizeEstimate {
  double requests = 0;        ///< all copies, cut at workload.max_requests
  double steps = 0;           ///< decode steps: output.mean or output_tokens (capped at max_output_tokens) per request
  double latency_bytes = 0;   ///< 8 B per step, 12 B per request: the samples behind exact percentiles
  double block_bytes = 0;     ///< the corpus index of the distinct blocks (private context included)
  double generator_bytes = 0; ///< the generator's (or a shared batch corpus's) popularity table, live agents' contexts
  double total() const { return latency_bytes + block_bytes + generator_bytes; }
};
RunSizeEstimate estimate_run_size(const Scenario& sc);

/// Checks the products above against kMaxSimulatedTimeS, the holders' HBM, the generator's id and
/// table sizes and sc.max_memory. Problems go to the sections' diagnostics.
/// REQUIRES: every key read without error (each within its range).
void check_run_size(const Scenario& sc, RunSizeKeys keys);

} // namespace xattn::sim::engine
