// xattn: one binary, thin subcommands over the libraries. Only this file exits.
#include "sim/cli/command.hpp"
#include "sim/core/error.hpp"

#include <cstdio>
#include <iostream>

int main(int argc, char** argv)
{
  CLI::App app{"xattn: a discrete-event cluster simulator for cross-instance attention in LLM serving.\n"
               "Should a decoding query move to the KV cache, or the cache to the query, and at what cost?"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "xattn 0.1.0");
  xattn::cli::Action action;
  xattn::cli::add_predict(app, action);
  xattn::cli::add_describe(app, action);
  xattn::cli::add_trace(app, action);
  xattn::cli::add_data(app, action);
  xattn::cli::add_topo(app, action);
  xattn::cli::add_calibrate(app, action);
  xattn::cli::add_run(app, action);
  xattn::cli::add_validate(app, action);
  xattn::cli::add_sweep(app, action);
  xattn::cli::add_plan(app, action);
  xattn::cli::add_report(app, action);

  try {
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
    return 2;
  } catch (const xattn::core::InputError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  try {
    return action ? action() : 0;
  } catch (const xattn::core::InputError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "xattn: internal error: " << e.what() << "\n";
    return 3;
  }
}
