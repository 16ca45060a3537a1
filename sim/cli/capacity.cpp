// `xattn capacity SCENARIO`: each policy's highest sustainable load at an SLO, by bisection over
// real simulations, printed with its evidence (sim/study/capacity.hpp).
#include "sim/study/capacity.hpp"
#include "sim/cli/command.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/failure.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <iostream>
#include <memory>

namespace xattn::cli
{
namespace
{
struct CapacityFlags {
  std::string file, slo;
  sim::study::CapacitySpec spec;
  bool quiet = false;
};
} // namespace

void add_capacity(CLI::App& app, Action& action)
{
  auto f = std::make_shared<CapacityFlags>();
  auto* sub = app.add_subcommand(
      "capacity", "Find each policy's highest load (a multiple of the scenario's arrival rate) that keeps up and meets "
                  "an SLO");
  sub->add_option("scenario", f->file, "Scenario YAML (default: the embedded quickstart)");
  sub->add_option("--slo", f->slo, "FIGURE=BOUND, e.g. tpot_s.mean=50ms (default: keeping up is the only test)");
  sub->add_option("--policy", f->spec.policies, "Search this policy only (repeatable; default: the scenario's)");
  sub->add_option("--set", f->spec.sets, "Override a scenario key (repeatable)");
  sub->add_option("--precision", f->spec.precision,
                  "Stop when the failing load is within this share of the meeting one")
      ->capture_default_str();
  sub->add_option("--max-load", f->spec.max_load, "The highest multiple tried")->capture_default_str();
  sub->add_option("--out", f->spec.out, "Capacity folder (default out/<name>-capacity)");
  sub->add_flag("--quiet", f->quiet, "No progress lines");
  on_run(sub, action, [f] {
    f->spec.scenario = f->file.empty() ? default_scenario() : f->file;
    check_policies(f->spec.policies, f->spec.scenario, f->spec.sets);
    if (!f->slo.empty()) f->spec.slo = sim::study::parse_slo(f->slo, "command line");
    const sim::study::CapacityResult r = sim::study::run_capacity(f->spec, !f->quiet);
    if (r.interrupted) {
      std::cerr << "interrupted: the probes run so far are in " << r.dir << "\n";
      return core::code(core::ExitCode::kInterrupted);
    }
    const std::string text = sim::study::capacity_text(f->spec, r);
    const std::filesystem::path dir(r.dir);
    core::write_file_atomically((dir / "capacity.txt").string(), text);
    core::write_file_atomically((dir / "capacity.json").string(), sim::study::capacity_json(f->spec, r).dump(2) + "\n");
    std::cout << text << "\nwritten: " << r.dir << "/capacity.txt, capacity.json (each probe's run folder beside)\n";
    return 0;
  });
}

} // namespace xattn::cli
