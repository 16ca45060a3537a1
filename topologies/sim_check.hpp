// Helpers for tests that run SimGrid: one Engine per test case (ctest runs each case in its own
// process), transfers launched GPU to GPU, times read from the simulated clock.
#pragma once

#include "topologies/platform.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace xattn::topo::test
{

inline std::unique_ptr<simgrid::s4u::Engine> make_engine()
{
  static int argc = 2;
  static char name[] = "xattn_topo_tests";
  static char quiet[] = "--log=root.thresh:warning";
  static char* argv[] = {name, quiet, nullptr};
  return std::make_unique<simgrid::s4u::Engine>(&argc, argv);
}

struct Transfer {
  GpuId from, to;
  double bytes;
  double seconds = -1; ///< simulated duration, filled by run_*
  int from_rail = -1;  ///< send from the relay endpoint of this NIC (HostSpec::striping), -1: own host
};

/// Runs the transfers one after another on an otherwise idle platform.
inline void run_sequential(simgrid::s4u::Engine& e, const Platform& p, std::vector<Transfer>& transfers)
{
  simgrid::s4u::Actor::create("seq", p.hosts[0], [&] {
    for (Transfer& t : transfers) {
      double start = simgrid::s4u::Engine::get_clock();
      simgrid::s4u::Comm::sendto(p.hosts[t.from], p.hosts[t.to], static_cast<std::uint64_t>(t.bytes));
      t.seconds = simgrid::s4u::Engine::get_clock() - start;
    }
  });
  e.run();
}

/// Starts all transfers at time 0 and records each completion time.
inline void run_concurrent(simgrid::s4u::Engine& e, const Platform& p, std::vector<Transfer>& transfers)
{
  for (std::size_t i = 0; i < transfers.size(); ++i)
    simgrid::s4u::Actor::create("flow" + std::to_string(i), p.hosts[transfers[i].from], [&p, &t = transfers[i]] {
      simgrid::s4u::Comm::sendto(p.endpoint(t.from, t.from_rail, false), p.hosts[t.to],
                                 static_cast<std::uint64_t>(t.bytes));
      t.seconds = simgrid::s4u::Engine::get_clock();
    });
  e.run();
}

} // namespace xattn::topo::test
