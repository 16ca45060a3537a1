// `xattn plan PLAN.yaml`: the smallest configuration meeting a latency SLO, found by bisection over
// real simulations, printed with its evidence (sim/study/plan.hpp).
#include "sim/study/plan.hpp"
#include "sim/cli/command.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/failure.hpp"
#include "sim/engine/driver.hpp"

#include <filesystem>
#include <iostream>
#include <memory>

namespace xattn::cli
{
namespace
{
struct PlanFlags {
  std::string file, out;
  std::vector<std::string> sets;
  int workers = 0;
  bool quiet = false;
  bool describe = false;
};
} // namespace

void add_plan(CLI::App& app, Action& action)
{
  auto f = std::make_shared<PlanFlags>();
  auto* sub = app.add_subcommand("plan", "Find the smallest configuration that meets a latency SLO");
  sub->add_option("file", f->file, "Plan YAML (see --describe)");
  sub->add_option("--out", f->out, "Plan folder (default: the file's out, else out/<name>)");
  sub->add_option("--workers", f->workers, "Simulations at once (default: one per core)");
  sub->add_option("--set", f->sets, "Override a key of the plan file (repeatable)");
  sub->add_flag("--quiet", f->quiet, "No progress lines");
  sub->add_flag("--describe", f->describe, "Print the plan file schema and exit");
  on_run(sub, action, [f] {
    if (f->describe) {
      std::cout << describe_format("plan");
      return 0;
    }
    if (f->file.empty()) core::fail("command line", 0, 0, "plan", "no plan file given (xattn plan PLAN.yaml)");
    sim::study::PlanSpec spec = sim::study::load_plan(f->file, f->sets);
    sim::study::PlanResult r = sim::study::run_plan(spec, f->out, f->workers, !f->quiet);
    if (r.interrupted) {
      std::cerr << "interrupted: simulated points are kept in " << r.dir << "; run the same command to resume\n";
      return core::code(core::ExitCode::kInterrupted);
    }
    const std::string text = sim::study::plan_text(spec, r);
    core::write_file_atomically((std::filesystem::path(r.dir) / "plan.txt").string(), text);
    core::write_file_atomically((std::filesystem::path(r.dir) / "plan.json").string(),
                                sim::study::plan_json(spec, r).dump(2) + "\n");
    std::cout << text << "\nwritten: " << r.dir << "/plan.txt, plan.json, results.csv (report: xattn report " << r.dir
              << ")\n";
    return r.answer ? 0 : 1;
  });
}

} // namespace xattn::cli
