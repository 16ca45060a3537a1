// What the engine knows of sessions as their turns arrive (session_history.hpp), by hand.
#include "sim/engine/session_history.hpp"

#include <catch2/catch.hpp>

#include <vector>

using xattn::sim::engine::SessionHistory;

TEST_CASE("session history: remaining turns and the carried share of a turn, from the turns seen so far")
{
  SessionHistory h;
  CHECK(h.turns(7) == 0);
  CHECK(h.remaining_turns(1) == 0); // nothing seen: no forecast
  CHECK(h.carried() == 0);
  // Session A has three turns, B one, C two. A: {1, 2}, then {1, 2, 3} (both of the first read
  // again: 1), then {3, 4} (one of three: 1/3); C: {5}, then {6} (none: 0).
  h.arrive(1, std::vector<std::uint64_t>{1, 2});
  h.arrive(2, std::vector<std::uint64_t>{9});
  h.arrive(3, std::vector<std::uint64_t>{5});
  CHECK(h.remaining_turns(1) == 0); // every session seen so far had one turn
  h.arrive(1, std::vector<std::uint64_t>{1, 2, 3});
  h.arrive(3, std::vector<std::uint64_t>{6});
  h.arrive(1, std::vector<std::uint64_t>{3, 4});
  CHECK(h.turns(1) == 3);
  CHECK(h.turns(2) == 1);
  CHECK(h.turns(3) == 2);
  CHECK(h.turns(4) == 0);
  // Of the 3 sessions with a first turn, 2 had a second; of those 2, 1 had a third; none a fourth.
  // After one turn: 2/3 reach a second, 1/3 a third: 1 more expected. After two: 1/2. After three: 0.
  CHECK(h.remaining_turns(1) == Approx(1.0).epsilon(1e-12));
  CHECK(h.remaining_turns(2) == Approx(0.5).epsilon(1e-12));
  CHECK(h.remaining_turns(3) == 0);
  CHECK(h.remaining_turns(9) == 0);
  CHECK(h.carried() == Approx((1.0 + 1.0 / 3 + 0.0) / 3).epsilon(1e-12));
  // A fourth session's first turn: now 2 of 4 went on after one turn, 1 of 2 after two:
  // 1/2 x (1 + 1/2) = 3/4 after one.
  h.arrive(8, std::vector<std::uint64_t>{1});
  CHECK(h.remaining_turns(1) == Approx(0.75).epsilon(1e-12));
  CHECK(h.remaining_turns(2) == Approx(0.5).epsilon(1e-12));
}
