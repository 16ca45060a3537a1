// `xattn describe WHAT`: prints the schema of an input file format (the same table that checks
// the files), for users writing them by hand.
#include "calibrate/profile.hpp"
#include "sim/cli/command.hpp"
#include "sim/model/model.hpp"

#include <iostream>
#include <memory>

namespace xattn::cli
{

void add_describe(CLI::App& app, Action& action)
{
  auto* sub = app.add_subcommand("describe", "Print the schema of an input file (keys, types, units, defaults)");
  auto what = std::make_shared<std::string>();
  sub->add_option("what", *what, "profile | model")->required()->check(CLI::IsMember({"profile", "model"}));
  on_run(sub, action, [what] {
    if (*what == "profile")
      std::cout << core::describe(calibrate::profile_schema(), "Calibration profile (calibrate/profiles/*.yaml)");
    else
      std::cout << core::describe(sim::model_schema(), "Model preset (sim/models/*.yaml or inline `model:`)");
    return 0;
  });
}

} // namespace xattn::cli
