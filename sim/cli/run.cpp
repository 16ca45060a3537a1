// `xattn run [SCENARIO.yaml]`: simulates every policy of a scenario (the embedded quickstart
// when none is given) and writes summary.json, CSVs and a report into --out (docs/file-formats.md, "Outputs").
#include "sim/cli/command.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/error.hpp"
#include "sim/core/failure.hpp"
#include "sim/core/resources.hpp"
#include "sim/core/suggest.hpp"
#include "sim/core/yaml.hpp"
#include "sim/engine/driver.hpp"
#include "sim/policy/policy.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <iostream>
#include <memory>

namespace xattn::cli
{
namespace
{
struct RunFlags {
  std::string scenario;
  std::string out;
  bool replace = false;
  std::string run_id;
  std::vector<std::string> sets;
  std::vector<std::string> policies;
  int workers = 0;
  int ensemble = 0;
  std::string timeline;
  std::string window;
  bool describe = false;
  bool quiet = false;
  std::string refusal;
};
} // namespace

void add_run(CLI::App& app, Action& action)
{
  auto f = std::make_shared<RunFlags>();
  auto* sub = app.add_subcommand("run", "Simulate a scenario under each policy and write the results");
  sub->add_option("scenario", f->scenario, "Scenario YAML (default: the embedded scenarios/quickstart.yaml)");
  sub->add_option("--out", f->out,
                  "Output folder (default: a folder of the run's own, out/<scenario name>/<run id>, and "
                  "out/<scenario name>/latest linked to it); one holding an earlier run's outputs is refused");
  sub->add_flag("--replace", f->replace,
                "Let --out (or the scenario's output.dir) be a folder holding an earlier run's outputs: they are "
                "replaced once this run's are written");
  sub->add_option("--run-id", f->run_id,
                  "The run id every output file carries (default: the start time, UTC, YYYYMMDD-HHMMSS)")
      ->check([](const std::string& v) { return core::folder_name_problem(v); });
  sub->add_option("--set", f->sets, "Override a scenario key: --set engine.granularity=layer (repeatable)");
  sub->add_option("--policy", f->policies, "Run only these policies (repeatable)");
  sub->add_option("--workers", f->workers,
                  "Simulations at once, policies and ensemble members (default: one per core)");
  sub->add_option("--jobs", f->workers, "The former name of --workers")->group(""); // hidden: scripts that say --jobs
  sub->add_option("--ensemble", f->ensemble,
                  "Also run N members per policy with profiles drawn from the profile's uncertainty and their own "
                  "seeds, spread over the cores; the summary gives each headline figure's 5-95% range (N: 2 to 100000)")
      ->check(CLI::Range(2, 100000).description(""));
  sub->add_option("--timeline", f->timeline,
                  "Also write a timeline of the run to FILE: Chrome trace-event JSON for ui.perfetto.dev or "
                  "chrome://tracing (docs/file-formats.md, \"Timeline\")");
  sub->add_option("--window", f->window,
                  "Keep only the timeline's events overlapping FROM:TO in simulated time, e.g. 0s:2s, 500ms:1.5s "
                  "(default: the whole run)");
  sub->add_flag("--describe", f->describe,
                "Print the scenario schema and the policies, and exit (as xattn describe scenario)");
  sub->add_flag("--quiet", f->quiet, "No progress lines and no table");
  // Hidden: a plan's points name it, so that a size whose data does not fit is judged, not fatal.
  sub->add_option("--refusal", f->refusal,
                  "Where a configuration whose data does not fit in its memory leaves the refusal's text")
      ->group("");
  on_run(sub, action, [f] {
    if (f->describe) {
      std::cout << describe_format("scenario");
      return 0;
    }
    sim::engine::TimeWindow window;
    if (!f->window.empty()) {
      if (f->timeline.empty()) core::fail("command line", 0, 0, "--window", "needs --timeline FILE");
      window = sim::engine::parse_window(f->window);
    }
    const std::string path = f->scenario.empty() ? default_scenario() : f->scenario;
    std::vector<std::string> sets = f->sets;
    check_policies(f->policies, path, sets); // named here, not on the scenario line they are set into
    if (!f->policies.empty()) {
      std::string list = "[";
      for (const std::string& p : f->policies)
        list += (list.size() > 1 ? ", " : "") + p;
      sets.push_back("policies=" + list + "]");
    }
    sim::engine::Scenario sc = sim::engine::load_scenario(path, sets);
    sim::engine::RunOptions opt;
    opt.out_dir = f->out;
    opt.replace = f->replace;
    opt.run_id = f->run_id;
    opt.jobs = f->workers;
    opt.progress = !f->quiet;
    opt.ensemble = f->ensemble;
    opt.timeline = f->timeline;
    opt.window = window;
    sim::engine::RunOutcome r;
    try {
      r = sim::engine::run_scenario(sc, opt);
    } catch (const core::FitError& e) {
      if (!f->refusal.empty()) core::write_file_atomically(f->refusal, std::string(e.what()) + "\n");
      throw;
    }
    if (r.exit_code == core::code(core::ExitCode::kInterrupted)) {
      std::cerr << "interrupted: earlier results in " << r.out_dir << " are intact; partial figures in " << r.out_dir
                << "/summary.interrupted.json\n";
      return r.exit_code;
    }
    if (!f->quiet)
      std::cout << r.table << "results in " << r.out_dir
                << "/ (summary.json, requests.csv, links.csv, holders.csv, report.md)"
                << (r.latest.empty() ? "" : "; " + r.latest + " links to it") << "\n"
                << (f->timeline.empty() ? "" : "timeline in " + f->timeline + "\n");
    if (r.exit_code != 0) {
      // Each problem names its invariant (docs/architecture.md, "Invariants").
      for (const auto& [policy, p] : r.result.policies)
        for (const std::string& what : p.invariants.problems)
          std::cerr << "xattn: invariant failed: " << policy << ": " << what << "\n";
      if (r.result.ensemble)
        for (const std::string& what : r.result.ensemble->problems)
          std::cerr << "xattn: invariant failed: ensemble " << what << "\n";
      std::cerr << "an invariant failed: see " << r.out_dir << "/summary.json (invariants)\n";
    }
    return r.exit_code;
  });
}

} // namespace xattn::cli
