// The Slurm back end: the sweep as one job array (`sbatch --array`), one task per point, each task
// running `xattn run` into its own point folder. Task i runs the manifest's point i (DIR/slurm/
// tasks.txt); its stdout and stderr go to DIR/slurm/logs/<i>.out. Accounting may be off (as on a
// one-node test cluster), so progress is read from `squeue` and results from the point folders:
// a point is done iff its summary.json exists, failed iff it is neither done nor queued.
#pragma once

#include "sim/study/manifest.hpp"
#include "sim/study/table.hpp"

#include <string>
#include <vector>

namespace xattn::sim::study
{

/// Is `sbatch` on PATH?
bool slurm_available();

/// Writes DIR/slurm/array.sh, DIR/slurm/tasks.txt, DIR/slurm/sbatch.args (the options, one per
/// line, reused by resubmit) and one args file per point (DIR/points/<id>/args).
void write_slurm_files(const Manifest& m, const std::string& dir, const SlurmOptions& opt);

struct Submission {
  std::string job_id;
  std::vector<int> tasks;
};

/// Submits the array for the given task indices (manifest positions); records the job in
/// DIR/slurm/jobs.txt. Throws std::runtime_error with sbatch's message when it refuses.
Submission submit(const std::string& dir, const std::vector<int>& tasks);

/// Task indices of this sweep that Slurm still lists (pending or running), over every job recorded.
std::vector<int> active_tasks(const std::string& dir);

/// Polls squeue until no task of this sweep is listed; returns false after `timeout_s` (0: none).
bool wait_for_tasks(const std::string& dir, double timeout_s, bool progress);

struct Collection {
  Table table;
  std::vector<int> pending; ///< still queued or running
  std::vector<int> failed;  ///< neither complete nor queued
};

/// Gathers DIR/results.csv and sorts the incomplete points into pending and failed.
Collection collect(const Manifest& m, const std::string& dir);

/// The log of a task (DIR/slurm/logs/<i>.out).
std::string task_log(const std::string& dir, int task);

/// "0-3,7,9-10".
std::string ranges(const std::vector<int>& tasks);

/// Parses squeue's array task field ("3", "0-17", "[0-5,7]%4") into indices.
std::vector<int> parse_task_ids(const std::string& field);

} // namespace xattn::sim::study
