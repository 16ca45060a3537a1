// The engine's preconditions hold in release builds too (XATTN_CHECK, sim/core/check.hpp): each
// broken one is an internal error that names it, never a wrong answer.
#include "sim/engine/cache.hpp"
#include "sim/engine/clock.hpp"
#include "sim/engine/compute.hpp"
#include "sim/engine/maxmin.hpp"

#include "sim/core/error.hpp"

#include <catch2/catch.hpp>

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <cmath>

using namespace xattn;
using namespace xattn::sim::engine;
using Catch::Contains;

TEST_CASE("engine checks: a holder's compute and copy streams refuse what cannot happen")
{
  ComputeUnit gpu;
  CHECK_THROWS_WITH(gpu.submit(1e-6, 0, [] {}),
                    Contains("sim/engine/compute.cpp") && Contains("check failed: share > 0 && share <= 1"));
  CHECK_THROWS_WITH(gpu.submit(1e-6, 1.5, [] {}), Contains("a kernel occupies a share of its GPU in (0, 1]"));
  CHECK_THROWS_AS(StreamPool(0), core::InternalError);
  StreamPool pool(2);
  CHECK_THROWS_WITH(pool.release(), Contains("a copy stream released that was not acquired"));
}

TEST_CASE("engine checks: the cache and the max-min solver refuse sizes that are not sizes")
{
  LruCache cache(100);
  CHECK_THROWS_AS(cache.insert(1, -1), core::InternalError);
  CHECK_THROWS_AS(cache.insert(1, std::nan("")), core::InternalError);
  cache.insert(1, 10);
  CHECK(cache.used() == 10);
  MaxMinSolver solver;
  CHECK_THROWS_WITH(solver.add_flow(0, 1e9, {}), Contains("a flow has a positive weight"));
  CHECK_THROWS_AS(solver.add_flow(1, 0, {}), core::InternalError);
  CHECK_THROWS_AS(solver.add_link(-1), core::InternalError);
  const std::vector<std::uint32_t> beyond{solver.add_link(1), 1};
  CHECK_THROWS_WITH(solver.add_flow(1, 1, beyond), Contains("a flow crosses a link of the solve"));
}

TEST_CASE("engine checks: an event in the past is refused, and the error leaves the simulation")
{
  int argc = 2;
  const char* argv[] = {"test", "--log=root.thresh:critical", nullptr};
  simgrid::s4u::Engine engine(&argc, const_cast<char**>(argv));
  auto* zone = simgrid::s4u::create_full_zone("z");
  zone->create_host("h", 1e9);
  zone->seal();
  CHECK_THROWS_WITH(after(-1e-3, [] {}), Contains("an event scheduled in the past"));
  // Thrown inside a timer, the check ends engine.run() with the same error.
  after(1.0, [] { after(-1.0, [] {}); });
  CHECK_THROWS_AS(engine.run(), core::InternalError);
  CHECK(now() == 1.0);
}
