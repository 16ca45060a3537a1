#include "sim/core/suggest.hpp"

#include <catch2/catch.hpp>

using namespace xattn::core;

TEST_CASE("suggest: edit distance, the nearest name within two edits, the message")
{
  CHECK(edit_distance("rout", "route") == 1);
  CHECK(edit_distance("fecth", "fetch") == 2);
  CHECK(edit_distance("", "abc") == 3);
  const std::vector<std::string> policies{"route", "fetch", "local", "predicate", "oracle", "ski-rental"};
  CHECK(closest("rout", policies) == "route");
  CHECK(closest("ski_rental", policies) == "ski-rental");
  CHECK(closest("gpu", policies).empty()); // nothing within two edits
  CHECK(unknown_name("policy", "rout", {"route", "fetch"}) ==
        "unknown policy 'rout' (did you mean 'route'?; expected one of: route, fetch)");
  CHECK(unknown_name("policy", "xyz", {"route", "fetch"}) == "unknown policy 'xyz' (expected one of: route, fetch)");
}
