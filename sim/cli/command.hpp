// How subcommands plug into the one `xattn` binary: each subcommand file defines one
// `add_<name>(CLI::App&, Action&)` that declares its flags and, when the subcommand is chosen,
// stores the function to run. main() parses, runs it, and maps exceptions to exit codes
// (docs/architecture.md): 0 ok, 1 a check failed, 2 bad input, 3 internal error, 130 interrupted.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <string_view>

namespace xattn::cli
{

/// What the chosen subcommand does after parsing; returns the exit code.
using Action = std::function<int()>;

/// The whole command line: parses `argv`, runs the chosen subcommand, and returns its exit code,
/// every exception mapped by core::exit_code (sim/core/failure.hpp).
int run_cli(int argc, char** argv);

void add_predict(CLI::App& app, Action& action);
void add_describe(CLI::App& app, Action& action);
void add_trace(CLI::App& app, Action& action);
void add_data(CLI::App& app, Action& action);
void add_topo(CLI::App& app, Action& action);
void add_calibrate(CLI::App& app, Action& action);
void add_run(CLI::App& app, Action& action);
void add_validate(CLI::App& app, Action& action);
void add_sweep(CLI::App& app, Action& action);
void add_plan(CLI::App& app, Action& action);
void add_capacity(CLI::App& app, Action& action);
void add_report(CLI::App& app, Action& action);

/// The schema text of an input format ("scenario", "profile", ...: `xattn describe WHAT`), which
/// each subcommand's --describe prints too. Throws core::InputError for an unknown name.
std::string describe_format(std::string_view what);

/// The scenario a subcommand runs when none is named: the embedded scenarios/quickstart.yaml.
/// Throws core::InputError when it is not installed.
std::string default_scenario();

/// Throws core::InputError (at --policy) unless every name is in the policy registry or a label of
/// the policy variants of `scenario` (under `sets`).
void check_policies(const std::vector<std::string>& names, const std::string& scenario,
                    const std::vector<std::string>& sets);

/// Marks `sub` as the chosen command: its callback stores `run` into `action`.
inline void on_run(CLI::App* sub, Action& action, Action run)
{
  sub->callback([&action, run = std::move(run)] { action = run; });
}

} // namespace xattn::cli
