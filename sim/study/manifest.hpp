// A sweep folder on disk, shared by the local and Slurm back ends, `collect`, `resubmit`, the
// planner and the report:
//
//   DIR/sweep.json          the manifest: name, base scenario, swept keys, points and their --set lists
//   DIR/points/<id>/        one `xattn run` output folder per point (+ run.log, its stdout and stderr)
//   DIR/results.csv         the tidy table: one row per point x policy
//   DIR/sweep.log           the run log
//   DIR/.lock               held by a local sweep and every process it starts (local.hpp)
//   DIR/slurm/              array.sh, tasks.txt, jobs.txt, logs/<task>.out (Slurm back end)
//
// A point is complete iff DIR/points/<id>/summary.json exists, so a resumed sweep skips exactly
// the points that finished. That holds whenever and however a sweep stops, `kill -9` of any of
// its processes included (sim/study/sweep_chaos_test.sh):
//   - `xattn run` writes each file under a temporary name (".NAME.tmpPID", or inside
//     ".partial-PID/"), flushes it to the disk and renames it into place; it removes an earlier
//     summary.json before it replaces the other files and renames the new one last, so a
//     summary.json is never beside files of another run or missing files;
//   - no reader takes a temporary for a result (point_complete looks for summary.json alone);
//     the local back end removes those of runs that have ended before it starts or after it
//     reaps a point's run;
//   - the local back end holds DIR/.lock, inherited by every process it starts, and those die
//     with it (even when it is SIGKILLed), so a resumed sweep waits until no process of a killed
//     one is left, and never reruns a point while an orphaned run still writes into it.
// A resumed sweep's folder is then byte for byte the one an uninterrupted sweep writes (its
// sweep.log aside).
#pragma once

#include "sim/study/spec.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace xattn::sim::study
{

struct ManifestPoint {
  std::string id;
  std::vector<std::pair<std::string, std::string>> values;
  std::int64_t seed = 0;
  std::vector<std::string> sets; ///< the `--set` assignments
};

struct Manifest {
  std::string name;
  std::string base; ///< absolute scenario path
  std::vector<std::string> keys;
  std::vector<ManifestPoint> points;
  std::string exe;     ///< the xattn binary that runs the points
  int ensemble = 0;    ///< > 0: each point runs `--ensemble N` (a sweep's ensemble, a plan with slo.confidence)
  std::string label{}; ///< the swept key that names the points in the comparison (empty: every swept value)
};

Manifest make_manifest(const SweepSpec& s, const std::vector<Point>& points, const std::string& exe);

/// Writes DIR/sweep.json atomically (creating DIR). A manifest already there must have the same base
/// and give each shared point id the same --set list, else throws core::InputError (results of
/// another question must not be mixed in); new points may be added.
void write_manifest(const Manifest& m, const std::string& dir);
/// Reads DIR/sweep.json; throws core::InputError when DIR is not a sweep folder.
Manifest read_manifest(const std::string& dir);

std::string point_dir(const std::string& dir, const std::string& id);
bool point_complete(const std::string& dir, const std::string& id);

/// A point whose configuration does not fit in its memory (core::FitError) is refused by its run,
/// which leaves this record in the point's folder (`xattn run --refusal`): the refusal's text.
std::string refusal_path(const std::string& dir, const std::string& id);
/// The refusal a point's run left, or nothing.
std::optional<std::string> read_refusal(const std::string& dir, const std::string& id);

/// Arguments of `xattn run` (without the binary) for one point.
std::vector<std::string> run_args(const Manifest& m, const ManifestPoint& p, const std::string& dir, int jobs);

/// Appends one time-stamped line to DIR/sweep.log.
void log_line(const std::string& dir, const std::string& line);

/// The running binary (readlink /proc/self/exe).
std::string self_exe();

/// The last `lines` lines of a text file ("" when absent).
std::string tail_file(const std::string& path, int lines);

} // namespace xattn::sim::study
