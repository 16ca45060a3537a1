// The timeline's flags (timeline.hpp): the window reads simulated time with units and refuses what
// it cannot mean, and the file must go into a folder that exists. The recorder's output is checked
// end to end by timeline_test.sh.
#include "sim/engine/timeline.hpp"

#include "sim/engine/test_util.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace xattn::sim::engine;
using Catch::Contains;

TEST_CASE("timeline: --window reads FROM:TO in simulated time with units")
{
  const TimeWindow w = parse_window("500ms:1.5s");
  CHECK(w.from.value() == Approx(0.5));
  CHECK(w.to.value() == Approx(1.5));
  CHECK(parse_window("0s:2s").to.value() == 2.0);
  CHECK(parse_window("250us:1min").to.value() == 60.0);
  CHECK_FALSE(std::isfinite(TimeWindow{}.to.value())); // no --window: the whole run
}

TEST_CASE("timeline: --window refuses an empty or reversed window, a unit it does not know, no colon")
{
  CHECK_THROWS_WITH(parse_window("2s:1s"), "command line: error: --window: the window must end after it begins, got "
                                           "'2s:1s' (FROM:TO, TO > FROM)");
  CHECK_THROWS_WITH(parse_window("1s:1s"), Contains("the window must end after it begins"));
  CHECK_THROWS_WITH(parse_window("0s:2x"), Contains("--window: unknown unit 'x'"));
  CHECK_THROWS_WITH(parse_window("0:2s"), Contains("--window: missing unit"));
  CHECK_THROWS_WITH(parse_window("2s"), Contains("--window: expected FROM:TO"));
  CHECK_THROWS_AS(parse_window("-1s:2s"), xattn::core::InputError);
}

TEST_CASE("timeline: --timeline names a file in a folder that exists")
{
  const auto dir = test::fresh_dir("timeline");
  CHECK_NOTHROW(check_timeline_path((dir / "t.json").string()));
  CHECK_THROWS_WITH(check_timeline_path((dir / "missing" / "t.json").string()),
                    Contains("error: --timeline: no such folder"));
  CHECK_THROWS_WITH(check_timeline_path(dir.string()), Contains("error: --timeline: names a folder"));
}
