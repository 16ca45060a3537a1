// The `xattn` command line as a function: parses, runs the chosen subcommand, and maps every
// exception to its exit code through core::exit_code (sim/core/failure.hpp), the one mapping.
// main.cpp calls it. It arms the fault that XATTN_FAULT names, if any (sim/core/fault.hpp), before
// anything else runs: the tests inject faults into the real binary that way.
#include "sim/cli/command.hpp"
#include "sim/core/error.hpp"
#include "sim/core/failure.hpp"
#include "sim/core/fault.hpp"
#include "sim/core/plausible.hpp"
#include "sim/core/resources.hpp"
#include "sim/core/suggest.hpp"
#include "sim/engine/scenario.hpp"
#include "sim/policy/policy.hpp"

#include <algorithm>
#include <iostream>

namespace xattn::cli
{
namespace
{

// One check for every numeric flag, before CLI11's conversion ("Could not convert: --ct = 4k"):
// what was expected and why, as a YAML value's error says it; and type names a reader knows (N, X)
// in the help, not CLI11's (INT, UINT, FLOAT).
void polish_numbers(CLI::App& app)
{
  for (CLI::Option* o : app.get_options()) {
    const std::string type = o->get_type_name();
    const std::string base = type.substr(0, type.find(':'));
    const bool whole = base == "INT" || base == "UINT", real = base == "FLOAT";
    if (!whole && !real) continue;
    o->type_name(whole ? "N" : "X");
    o->check(CLI::Validator(
        [whole](std::string& v) -> std::string {
          std::size_t used = 0;
          bool ok = !v.empty();
          try {
            if (whole)
              (void)std::stoll(v, &used);
            else
              (void)std::stod(v, &used);
          } catch (const std::exception&) {
            ok = false;
          }
          if (ok && used == v.size()) return "";
          return whole ? "expected a whole number, got '" + v + "' (digits only: 4096, not 4k or 4Ki)"
                       : "expected a number, got '" + v +
                             "' (plain digits such as 4096, 0.5 or 1e-3: no unit, no k or Ki)";
        },
        ""));
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    polish_numbers(*sub);
}

// --strict on every command: an implausible rate, size or latency in a topology or profile
// (sim/core/plausible.hpp) is then bad input, exit 2, instead of a warning.
void add_strict(CLI::App& app)
{
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    sub->add_flag_callback(
        "--strict", [] { core::set_strict(true); },
        "Refuse a rate, size or latency outside what hardware of its class has (otherwise a warning)");
    add_strict(*sub);
  }
}

} // namespace

std::string default_scenario()
{
  auto q = core::find_data("scenarios/quickstart.yaml");
  if (!q)
    core::fail("command line", 0, 0, "scenario", "no scenario given and the embedded quickstart is not installed");
  return q->string();
}

void check_policies(const std::vector<std::string>& names, const std::string& scenario,
                    const std::vector<std::string>& sets)
{
  std::vector<std::string> known = sim::policy::name_list();
  const bool all_registered = std::all_of(names.begin(), names.end(), [&](const std::string& p) {
    return std::find(known.begin(), known.end(), p) != known.end();
  });
  if (!all_registered) // labels of the scenario's policy variants too
    for (const auto& [label, v] : sim::engine::load_scenario(scenario, sets).policy_variants)
      known.push_back(label);
  for (const std::string& p : names)
    if (std::find(known.begin(), known.end(), p) == known.end())
      core::fail("command line", 0, 0, "--policy", core::unknown_name("policy", p, known));
}

int run_cli(int argc, char** argv)
{
  CLI::App app{"xattn: a discrete-event cluster simulator for cross-instance attention in LLM serving.\n"
               "Should a decoding query move to the KV cache, or the cache to the query, and at what cost?"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "xattn 0.1.0");
  Action action;
  add_predict(app, action);
  add_describe(app, action);
  add_trace(app, action);
  add_data(app, action);
  add_topo(app, action);
  add_calibrate(app, action);
  add_run(app, action);
  add_validate(app, action);
  add_sweep(app, action);
  add_plan(app, action);
  add_capacity(app, action);
  add_report(app, action);
  polish_numbers(app);
  add_strict(app);

  try {
    core::arm_fault_from_env();
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11's own codes are >= 100; bad flags are bad input: exit 2 with one clear line.
    std::cerr << "command line: error: " << e.what() << "\n";
    return core::code(core::ExitCode::kBadInput);
  } catch (const std::exception& e) {
    std::cerr << core::render(e) << "\n";
    return core::code(core::exit_code(e));
  }
  try {
    return action ? action() : core::code(core::ExitCode::kOk);
  } catch (const std::exception& e) {
    std::cerr << core::render(e) << "\n";
    return core::code(core::exit_code(e));
  }
}

} // namespace xattn::cli
