// The engine's event queue (clock.hpp): dates, the order of one date's events, cancellation.
#include "sim/engine/clock.hpp"

#include <catch2/catch.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <memory>
#include <string>
#include <vector>

namespace xattn::sim::engine
{
namespace
{
// A SimGrid engine on one host: the clock's timers need an engine, nothing else of a platform.
std::unique_ptr<simgrid::s4u::Engine> one_host_engine()
{
  static int argc = 2;
  static const char* argv[] = {"test", "--log=root.thresh:critical", nullptr};
  auto engine = std::make_unique<simgrid::s4u::Engine>(&argc, const_cast<char**>(argv));
  auto* zone = simgrid::s4u::create_full_zone("z");
  zone->create_host("h", 1e9);
  zone->seal();
  return engine;
}
} // namespace

TEST_CASE("clock: events run at their dates, one date's in the order scheduled, those they add for now included")
{
  const auto engine = one_host_engine();
  std::vector<std::string> ran;
  auto note = [&](const std::string& what) { ran.push_back(what + "@" + std::to_string(now())); };
  after(2.0, [&] { note("c"); });
  after(1.0, [&] {
    note("a");
    after(0.0, [&] { note("a-now"); });
    after(0.5, [&] { note("a-later"); });
  });
  after(1.0, [&] { note("b"); });
  at(0.25, [&] { note("first"); });
  engine->run();
  CHECK(ran == std::vector<std::string>{"first@0.250000", "a@1.000000", "b@1.000000", "a-now@1.000000",
                                        "a-later@1.500000", "c@2.000000"});
}

TEST_CASE("clock: a cancelled event never runs, its handle is null, and its date is gone with it")
{
  const auto engine = one_host_engine();
  int ran = 0;
  TimerHandle keep = after(3.0, [&] { ran += 1; });
  TimerHandle drop = after(1.0, [&] { ran += 100; });
  CHECK(drop.date() == 1.0);
  cancel(drop);
  CHECK(drop == nullptr);
  cancel(drop); // twice is harmless
  // Many cancelled events (a holder reschedules its next kernel end at every submit) leave the
  // queue's answer unchanged.
  std::vector<TimerHandle> churn;
  for (int i = 0; i < 1000; ++i)
    churn.push_back(after(0.5 + i * 1e-3, [&] { ran += 10000; }));
  for (TimerHandle& h : churn)
    cancel(h);
  // Cancelling the one a later event replaced: the replacement still runs.
  TimerHandle replaced = after(2.0, [&] { ran += 1000000; });
  cancel(replaced);
  after(2.0, [&] { ran += 10; });
  CHECK(keep.date() == 3.0);
  engine->run();
  CHECK(ran == 11);
  CHECK(now() == 3.0);
}

TEST_CASE("clock: run_events runs the queue on its own clock: the same order and dates, SimGrid's clock left alone")
{
  const auto engine = one_host_engine();
  std::vector<std::string> ran;
  auto note = [&](const std::string& what) { ran.push_back(what + "@" + std::to_string(now())); };
  after(2.0, [&] { note("c"); });
  TimerHandle dropped = after(1.5, [&] { note("cancelled"); });
  after(1.0, [&] {
    note("a");
    after(0.0, [&] { note("a-now"); });
    after(0.5, [&] { note("a-later"); });
    cancel(dropped);
  });
  at(0.25, [&] { note("first"); });
  run_events();
  CHECK(ran ==
        std::vector<std::string>{"first@0.250000", "a@1.000000", "a-now@1.000000", "a-later@1.500000", "c@2.000000"});
  CHECK(now() == 2.0); // the last event's date
  CHECK(simgrid::s4u::Engine::get_clock() == 0.0);
  engine->run(); // the SimGrid timer armed before run_events is gone: nothing runs twice
  CHECK(ran.size() == 5);
}

} // namespace xattn::sim::engine
