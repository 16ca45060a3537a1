// `xattn report DIR`: one self-contained HTML page with plots for a run or sweep folder
// (sim/study/report.hpp).
#include "sim/study/report.hpp"
#include "sim/cli/command.hpp"

#include <iostream>
#include <memory>
#include <optional>

namespace xattn::cli
{

void add_report(CLI::App& app, Action& action)
{
  auto dir = std::make_shared<std::string>();
  auto scenario = std::make_shared<std::string>();
  auto reuse = std::make_shared<double>(0);
  auto* sub = app.add_subcommand("report", "Write DIR/report.html (plots) and DIR/report/*.csv for a run or sweep");
  sub->add_option("dir", *dir, "A folder written by xattn run, xattn sweep or xattn plan")->required();
  sub->add_option("--scenario", *scenario, "Scenario of the crossover map (default: the run's or the sweep's base)");
  auto* reuse_opt = sub->add_option("--reuse", *reuse,
                                    "Later uses of the fetched tokens the crossover map's decision assumes (default: "
                                    "the scenario's engine.predicate_prior_steps; 0: one call)");
  on_run(sub, action, [dir, scenario, reuse, reuse_opt] {
    std::optional<double> r;
    if (reuse_opt->count() > 0) r = *reuse;
    std::cout << sim::study::write_report(*dir, *scenario, r) << "\n";
    return 0;
  });
}

} // namespace xattn::cli
