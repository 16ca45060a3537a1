#include "sim/core/check.hpp"

#include "sim/core/error.hpp"
#include "sim/core/failure.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace xattn;

TEST_CASE("check: a failed check is an internal error naming the file, the line and the condition")
{
  const int line = __LINE__ + 1;
  auto fails = [] { XATTN_CHECK(1 + 1 == 3); };
  CHECK_THROWS_AS(fails(), core::InternalError);
  CHECK_THROWS_WITH(fails(), "sim/core/check_test.cpp:" + std::to_string(line) + ": check failed: 1 + 1 == 3");
  try {
    fails();
  } catch (const core::InternalError& e) {
    CHECK(core::code(core::exit_code(e)) == 3);
  }
}

TEST_CASE("check: the message is built only when the check fails")
{
  int built = 0;
  auto message = [&built] {
    ++built;
    return std::string("built");
  };
  XATTN_CHECK(true, message());
  CHECK(built == 0);
  CHECK_THROWS_WITH(XATTN_CHECK(false, message()), Catch::EndsWith("check failed: false: built"));
  CHECK(built == 1);
}

TEST_CASE("check: checks stay on in release builds")
{
  // This test is compiled like the library (RelWithDebInfo defines NDEBUG): an assert() would be
  // gone here, the check is not.
#ifdef NDEBUG
  const bool release = true;
#else
  const bool release = false;
#endif
  CAPTURE(release);
  CHECK_THROWS_AS(XATTN_CHECK(release && false), core::InternalError);
}
