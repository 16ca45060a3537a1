// `xattn describe WHAT`: prints the schema of an input file format (the same table that checks
// the files), for users writing them by hand. The one list of formats: each subcommand's
// `--describe` prints its entry from here.
#include "calibrate/profile.hpp"
#include "sim/cli/command.hpp"
#include "sim/core/suggest.hpp"
#include "sim/engine/scenario.hpp"
#include "sim/model/model.hpp"
#include "sim/policy/policy.hpp"
#include "sim/study/plan.hpp"
#include "sim/study/spec.hpp"
#include "topologies/spec.hpp"
#include "workloads/datasets.hpp"
#include "workloads/generator.hpp"

#include <fmt/format.h>

#include <array>
#include <functional>
#include <iostream>
#include <memory>

namespace xattn::cli
{
namespace
{

std::string policies_text()
{
  std::string out = "Policies (policies: [...] in a scenario, --policy NAME):\n";
  for (const sim::policy::PolicyInfo& p : sim::policy::registry()) {
    out += fmt::format("  {:<11} {}{}\n", p.name, p.summary, p.offline ? " [offline bound]" : "");
    if (p.params != nullptr)
      for (const core::Field& f : *p.params)
        out += fmt::format("      {} (default {}, {}): {}\n", f.key, f.def, core::range_text(f), f.meaning);
  }
  out += "A scenario's policy_variants run a policy under parameters of its own, named by a label of their own\n"
         "(policy_variants: {LABEL: {policy: NAME, prior_steps: N, PARAMETER: VALUE}}; policies: [LABEL]).\n";
  return out;
}

struct Format {
  const char* name;
  std::function<std::string()> text;
};

const std::array<Format, 9>& formats()
{
  static const std::array<Format, 9> f{{
      {"scenario",
       [] {
         return core::describe(sim::engine::scenario_schema(), "Scenario file (xattn run SCENARIO.yaml)") + "\n" +
                policies_text();
       }},
      {"policies", policies_text},
      {"profile",
       [] { return core::describe(calibrate::profile_schema(), "Calibration profile (calibrate/profiles/*.yaml)"); }},
      {"model",
       [] { return core::describe(sim::model_schema(), "Model preset (sim/models/*.yaml or inline `model:`)"); }},
      {"topology",
       [] { return core::describe(topo::topology_schema(), "Topology (topologies/*.yaml or inline `topology:`)"); }},
      {"sweep", [] { return core::describe(sim::study::sweep_schema(), "Sweep file (xattn sweep SWEEP.yaml)"); }},
      {"plan", [] { return core::describe(sim::study::plan_schema(), "Plan file (xattn plan PLAN.yaml)"); }},
      {"generator",
       [] {
         return core::describe(workloads::generator_schema(), "Trace generator (xattn trace generate CONFIG.yaml)");
       }},
      {"origin",
       [] {
         return core::describe(workloads::data_set_schema(), "Data set origin (workloads/data/<set>/ORIGIN.yaml)");
       }},
  }};
  return f;
}

std::vector<std::string> format_names()
{
  std::vector<std::string> names;
  for (const Format& f : formats())
    names.emplace_back(f.name);
  return names;
}

} // namespace

std::string describe_format(std::string_view what)
{
  for (const Format& f : formats())
    if (what == f.name) return f.text();
  core::fail("command line", 0, 0, "describe", core::unknown_name("format", what, format_names()));
}

void add_describe(CLI::App& app, Action& action)
{
  auto* sub = app.add_subcommand(
      "describe", "Print the schema of an input file (keys, types, units, defaults, ranges) or the policies");
  auto what = std::make_shared<std::string>();
  std::string list;
  for (const std::string& n : format_names())
    list += (list.empty() ? "" : " | ") + n;
  sub->add_option("what", *what, list)->required();
  on_run(sub, action, [what] {
    std::cout << describe_format(*what);
    return 0;
  });
}

} // namespace xattn::cli
