// `xattn sweep SWEEP.yaml [--backend local|slurm]`, `xattn sweep collect DIR`, `xattn sweep
// resubmit DIR`: many simulations and one table (docs/architecture.md, "Studies at scale"; sim/study/).
#include "sim/study/sweep.hpp"
#include "sim/cli/command.hpp"
#include "sim/core/failure.hpp"
#include "sim/study/compare.hpp"
#include "sim/study/report.hpp"

#include <iostream>
#include <memory>

namespace xattn::cli
{
namespace
{
struct SweepFlags {
  std::string file, backend = "local", out, dir;
  std::vector<std::string> sets;
  int workers = 0;
  bool wait = false, quiet = false, describe = false, report = false;
};

int finish(const std::string& dir, const sim::study::Collection& c, bool report)
{
  sim::study::Manifest m = sim::study::read_manifest(dir);
  std::cout << sim::study::describe_collection(m, dir, c);
  if (c.table.missing.empty() && c.failed.empty()) std::cout << sim::study::write_comparison(m, dir);
  if (report && c.table.points_complete > 0) std::cout << "report: " << sim::study::write_report(dir) << "\n";
  return sim::study::collection_exit_code(c);
}
} // namespace

void add_sweep(CLI::App& app, Action& action)
{
  auto f = std::make_shared<SweepFlags>();
  auto* sub = app.add_subcommand("sweep", "Run a grid of simulations (locally or as a Slurm job array) into one table");
  sub->add_option("file", f->file, "Sweep YAML (see --describe)");
  sub->add_option("--backend", f->backend, "local (forked workers) or slurm (sbatch --array)")
      ->check(CLI::IsMember({"local", "slurm"}));
  sub->add_option("--out", f->out, "Sweep folder (default: the file's out, else out/<name>)");
  sub->add_option("--workers", f->workers, "Local simulations at once (default: the file's, else one per core)");
  sub->add_option("--set", f->sets, "Override a key of the sweep file: --set workers=2 (repeatable)");
  sub->add_flag("--wait", f->wait, "Slurm: wait for the array to finish, then collect");
  sub->add_flag("--report", f->report, "Write report.html when the table is gathered");
  sub->add_flag("--quiet", f->quiet, "No progress lines");
  sub->add_flag("--describe", f->describe, "Print the sweep file schema and exit");

  auto* col = sub->add_subcommand("collect", "Gather a sweep folder's table; list failed tasks with their logs");
  col->add_option("dir", f->dir, "Sweep folder")->required();
  col->add_flag("--wait", f->wait, "Wait until Slurm lists no task of this sweep");
  col->add_flag("--report", f->report, "Write report.html");
  auto* res = sub->add_subcommand("resubmit", "Submit a sweep's failed points alone as a new Slurm array");
  res->add_option("dir", f->dir, "Sweep folder")->required();
  res->add_flag("--wait", f->wait, "Wait for the new array, then collect");

  on_run(col, action, [f] { return finish(f->dir, sim::study::collect_dir(f->dir, f->wait, true), f->report); });
  on_run(res, action, [f] {
    sim::study::Submission s = sim::study::resubmit_dir(f->dir);
    if (s.tasks.empty()) {
      std::cout << "nothing to resubmit: no failed points in " << f->dir << "\n";
      return 0;
    }
    std::cout << "resubmitted " << s.tasks.size() << " tasks (" << sim::study::ranges(s.tasks) << ") as job "
              << s.job_id << "\n";
    return f->wait ? finish(f->dir, sim::study::collect_dir(f->dir, true, true), false) : 0;
  });
  sub->callback([f, &action, col, res] {
    if (col->parsed() || res->parsed()) return;
    action = [f] {
      if (f->describe) {
        std::cout << describe_format("sweep");
        return 0;
      }
      if (f->file.empty()) core::fail("command line", 0, 0, "sweep", "no sweep file given (xattn sweep SWEEP.yaml)");
      sim::study::SweepSpec spec = sim::study::load_sweep(f->file, f->sets);
      sim::study::SweepOptions opt;
      opt.backend = f->backend == "slurm" ? sim::study::Backend::kSlurm : sim::study::Backend::kLocal;
      opt.out = f->out;
      opt.workers = f->workers;
      opt.wait = f->wait;
      opt.progress = !f->quiet;
      if (opt.backend == sim::study::Backend::kSlurm && !sim::study::slurm_available())
        core::fail("command line", 0, 0, "--backend", "slurm: sbatch and squeue are not on PATH");
      sim::study::SweepOutcome r = sim::study::run_sweep(spec, opt);
      if (opt.backend == sim::study::Backend::kLocal) {
        std::cout << r.points << " points: " << r.local.ran << " ran, " << r.local.skipped << " already complete, "
                  << r.local.failed << " failed in " << static_cast<int>(r.local.wall_s * 10) / 10.0 << " s\n";
        if (r.exit_code == core::code(core::ExitCode::kInterrupted)) {
          std::cerr << "interrupted: complete points are kept; run the same command again to resume\n";
          return core::code(core::ExitCode::kInterrupted);
        }
        int rc = finish(r.dir, r.collection, f->report);
        return rc;
      }
      if (r.submitted > 0)
        std::cout << "submitted job " << r.job_id << ": " << r.submitted << " tasks of " << r.points << " points\n";
      else
        std::cout << "nothing to submit: every point is complete or queued\n";
      if (!r.collected) {
        std::cout << "gather when done: xattn sweep collect " << r.dir << " [--wait]\n";
        return 0;
      }
      return finish(r.dir, r.collection, f->report);
    };
  });
}

} // namespace xattn::cli
