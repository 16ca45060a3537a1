// `xattn report DIR`: one self-contained HTML page with plots for a run or sweep folder
// (sim/study/report.hpp).
#include "sim/study/report.hpp"
#include "sim/cli/command.hpp"

#include <iostream>
#include <memory>

namespace xattn::cli
{

void add_report(CLI::App& app, Action& action)
{
  auto dir = std::make_shared<std::string>();
  auto scenario = std::make_shared<std::string>();
  auto* sub = app.add_subcommand("report", "Write DIR/report.html (plots) and DIR/report/*.csv for a run or sweep");
  sub->add_option("dir", *dir, "A folder written by xattn run, xattn sweep or xattn plan")->required();
  sub->add_option("--scenario", *scenario, "Scenario of the crossover map (default: the run's or the sweep's base)");
  on_run(sub, action, [dir, scenario] {
    std::cout << sim::study::write_report(*dir, *scenario) << "\n";
    return 0;
  });
}

} // namespace xattn::cli
