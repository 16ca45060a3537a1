// `xattn sweep`: expand a sweep file, run its points on a back end, gather the table. The CLI
// only parses flags and prints; these calls do the work and return what to print.
#pragma once

#include "sim/study/local.hpp"
#include "sim/study/slurm.hpp"

#include <string>

namespace xattn::sim::study
{

enum class Backend { kLocal, kSlurm };

struct SweepOptions {
  Backend backend = Backend::kLocal;
  std::string out;   ///< overrides the file's out
  int workers = 0;   ///< overrides the file's workers
  bool wait = false; ///< Slurm: wait for the array, then collect
  bool progress = true;
  std::string exe; ///< the xattn binary to run (empty: this one)
};

struct SweepOutcome {
  std::string dir;
  int points = 0;
  LocalOutcome local; ///< local back end
  std::string job_id; ///< Slurm back end
  int submitted = 0;
  Collection collection; ///< the gathered table (after a local run, or a Slurm --wait)
  bool collected = false;
  int exit_code = 0; ///< 0 all complete, 1 a point failed or an invariant failed, 130 interrupted
};

/// Loads nothing itself: `spec` comes from load_sweep. Checks every point's scenario first (bad
/// input throws core::InputError before anything is written).
SweepOutcome run_sweep(const SweepSpec& spec, const SweepOptions& opt);

/// `xattn sweep collect DIR`: (optionally waits for the Slurm tasks and) gathers the table.
Collection collect_dir(const std::string& dir, bool wait, bool progress);

/// `xattn sweep resubmit DIR`: submits the failed points alone as a new array; returns its
/// submission (no tasks when nothing failed).
Submission resubmit_dir(const std::string& dir);

/// Words for the terminal: where the table is, what is pending, what failed with the tail of its logs.
std::string describe_collection(const Manifest& m, const std::string& dir, const Collection& c);

/// Exit code of a collection: 0 complete and every invariant held, 1 otherwise.
int collection_exit_code(const Collection& c);

} // namespace xattn::sim::study
