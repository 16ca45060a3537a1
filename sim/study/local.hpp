// The local back end: one `xattn run` child process per point, at most `workers` at once. Points
// already complete are skipped (resume). On SIGINT or SIGTERM no new point starts, the running
// ones are interrupted (their whole process group), and the run reports `interrupted`. If the
// back end itself dies (SIGKILL included), its points' runs are killed with it. While it runs it
// holds DIR/.lock, and so does every process it starts: a second sweep in the folder waits for
// all of them to end (10 s at most, then it gives up: InputError), and removes the temporaries
// they left (manifest.hpp says what resuming guarantees).
#pragma once

#include "sim/study/manifest.hpp"

#include <string>
#include <vector>

namespace xattn::sim::study
{

struct LocalOptions {
  int workers = 0; ///< points at once (0: one per core)
  bool progress = true;
  /// Only these point ids (empty: all of the manifest).
  std::vector<std::string> only;
};

struct LocalOutcome {
  int ran = 0, skipped = 0, failed = 0;
  std::vector<std::string> failed_ids;
  bool interrupted = false;
  double wall_s = 0;
};

/// Runs the manifest's incomplete points into DIR/points/<id>/ with the manifest's binary, logging to
/// DIR/sweep.log. Throws std::runtime_error when a process cannot be started.
LocalOutcome run_local(const Manifest& m, const std::string& dir, const LocalOptions& opt);

} // namespace xattn::sim::study
