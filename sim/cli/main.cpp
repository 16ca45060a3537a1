// xattn: one binary, thin subcommands over the libraries. Only this file exits: run_cli (app.cpp)
// returns the exit code that core::exit_code gave the outcome.
#include "sim/cli/command.hpp"

int main(int argc, char** argv)
{
  return xattn::cli::run_cli(argc, argv);
}
