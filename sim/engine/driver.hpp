// `xattn run`: one child process per policy (SimGrid runs one simulation per process; a fork()
// before the engine exists gives each a clean one), results gathered into --out atomically:
// every file is written under a temporary name and renamed into place, so an interrupted or
// failed run never replaces earlier complete results (docs/file-formats.md, "Outputs").
#pragma once

#include "sim/engine/result.hpp"
#include "sim/engine/scenario.hpp"
#include "sim/engine/time_window.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace xattn::sim::engine
{

struct RunOptions {
  /// Empty: the scenario's output.dir, else a folder of its own, out/<name>/<run id>, with
  /// out/<name>/latest linked to it once the run completes.
  std::string out_dir;
  /// An explicit folder (out_dir or output.dir) that holds an earlier run's outputs is refused
  /// (core::InputError) unless this is set; then the earlier run's files are replaced when this
  /// run's are written (an interrupted or failed run leaves them as they were).
  bool replace = false;
  std::string run_id; ///< empty: the start time, UTC, as YYYYMMDD-HHMMSS (-N when taken)
  int jobs = 0;       ///< policies simulated at once (0: one per core)
  bool progress = true;
  /// > 0: also run this many members per policy, each with a profile drawn from the profile's
  /// uncertainty and its own seed, and give the headline figures' spread (RunResult::ensemble).
  int ensemble = 0;
  /// Non-empty: also write the run's timeline there (timeline.hpp), events overlapping `window`.
  std::string timeline;
  TimeWindow window;
};

struct RunOutcome {
  RunResult result;       ///< the figures, typed
  nlohmann::json summary; ///< what summary.json holds (to_json(result))
  std::string out_dir;
  std::string latest; ///< out/<name>/latest when the run chose its folder and completed, else empty
  std::string table;  ///< the terminal comparison
  int exit_code = 0;  ///< core::ExitCode: ok, check failed (an invariant), interrupted
};

/// Runs every policy of the scenario and writes summary.json, requests.csv, links.csv,
/// holders.csv and report.md (and the timeline when asked). Throws core::InputError before
/// anything is written.
RunOutcome run_scenario(const Scenario& sc, const RunOptions& opt);

} // namespace xattn::sim::engine
