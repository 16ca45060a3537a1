#include "sim/study/sweep.hpp"
#include "sim/core/failure.hpp"

#include <filesystem>
#include <iostream>

namespace xattn::sim::study
{
namespace fs = std::filesystem;

namespace
{
std::string sweep_dir(const SweepSpec& spec, const SweepOptions& opt)
{
  std::string d = !opt.out.empty() ? opt.out : !spec.out.empty() ? spec.out : "out/" + spec.name;
  return fs::absolute(d).lexically_normal().string();
}
} // namespace

int collection_exit_code(const Collection& c)
{
  if (!c.failed.empty() || !c.pending.empty() || !c.table.missing.empty())
    return core::code(core::ExitCode::kCheckFailed);
  return core::code(c.table.csv.find(",false\n") == std::string::npos ? core::ExitCode::kOk
                                                                      : core::ExitCode::kCheckFailed);
}

SweepOutcome run_sweep(const SweepSpec& spec, const SweepOptions& opt)
{
  std::vector<Point> points = expand(spec);
  check_points(spec, points);
  SweepOutcome out;
  out.dir = sweep_dir(spec, opt);
  out.points = static_cast<int>(points.size());
  Manifest m = make_manifest(spec, points, opt.exe.empty() ? self_exe() : opt.exe);
  write_manifest(m, out.dir);
  log_line(out.dir, "sweep " + spec.name + " from " + spec.file + ": " + std::to_string(points.size()) + " points (" +
                        (opt.backend == Backend::kLocal ? "local" : "slurm") + ")");

  if (opt.backend == Backend::kLocal) {
    LocalOptions lo{.workers = opt.workers > 0 ? opt.workers : spec.workers, .progress = opt.progress, .only = {}};
    out.local = run_local(m, out.dir, lo);
    out.collection.table = write_table(m, out.dir);
    out.collected = true;
    for (const std::string& id : out.local.failed_ids)
      for (std::size_t i = 0; i < m.points.size(); ++i)
        if (m.points[i].id == id) out.collection.failed.push_back(static_cast<int>(i));
    out.exit_code =
        out.local.interrupted ? core::code(core::ExitCode::kInterrupted) : collection_exit_code(out.collection);
    return out;
  }

  write_slurm_files(m, out.dir, spec.slurm);
  std::vector<int> todo;
  std::vector<int> queued = active_tasks(out.dir);
  for (std::size_t i = 0; i < m.points.size(); ++i) {
    int t = static_cast<int>(i);
    if (!point_complete(out.dir, m.points[i].id) && std::find(queued.begin(), queued.end(), t) == queued.end())
      todo.push_back(t);
  }
  if (!todo.empty()) {
    Submission s = submit(out.dir, todo);
    out.job_id = s.job_id;
    out.submitted = static_cast<int>(s.tasks.size());
  }
  if (opt.wait) {
    out.collection = collect_dir(out.dir, true, opt.progress);
    out.collected = true;
    out.exit_code = collection_exit_code(out.collection);
  }
  return out;
}

Collection collect_dir(const std::string& dir, bool wait, bool progress)
{
  Manifest m = read_manifest(dir);
  if (wait) wait_for_tasks(dir, 0, progress);
  return collect(m, dir);
}

Submission resubmit_dir(const std::string& dir)
{
  Manifest m = read_manifest(dir);
  Collection c = collect(m, dir);
  if (c.failed.empty()) return {};
  if (!fs::exists(fs::path(dir) / "slurm" / "array.sh")) write_slurm_files(m, dir, SlurmOptions{});
  for (int t : c.failed) // a fresh start: no stale interrupted summary or log beside the new run
    fs::remove(fs::path(point_dir(dir, m.points[t].id)) / "summary.interrupted.json");
  return submit(dir, c.failed);
}

std::string describe_collection(const Manifest& m, const std::string& dir, const Collection& c)
{
  std::string s = std::to_string(c.table.points_complete) + " of " + std::to_string(m.points.size()) +
                  " points complete; " + std::to_string(c.table.rows) + " rows in " +
                  (fs::path(dir) / "results.csv").string() + "\n";
  if (!c.pending.empty())
    s += std::to_string(c.pending.size()) + " tasks still queued or running (" + ranges(c.pending) +
         "): run `xattn sweep collect " + dir + " --wait`\n";
  for (int t : c.failed) {
    const ManifestPoint& p = m.points[t];
    std::string what;
    for (const auto& [k, v] : p.values)
      what += k + "=" + v + " ";
    s += "FAILED task " + std::to_string(t) + " point " + p.id + " (" + what + "seed=" + std::to_string(p.seed) + ")\n";
    for (const std::string& log : {task_log(dir, t), point_dir(dir, p.id) + "/run.log"})
      if (fs::exists(log)) {
        s += "  log " + log + ":\n";
        std::string tail = tail_file(log, 5);
        for (std::size_t a = 0, b; a < tail.size(); a = b + 1) {
          b = tail.find('\n', a);
          s += "    " + tail.substr(a, b - a) + "\n";
        }
      }
  }
  if (!c.failed.empty()) s += "resubmit the failed tasks alone: xattn sweep resubmit " + dir + "\n";
  return s;
}

} // namespace xattn::sim::study
