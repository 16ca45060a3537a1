#include "sim/core/fault.hpp"

#include "sim/core/error.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <set>
#include <string>

using namespace xattn;
using Catch::Contains;

namespace
{
int passes_until_injected(int limit)
{
  for (int i = 1; i <= limit; ++i)
    if (XATTN_FAULT(kLostAnswer)) return i;
  return 0;
}
} // namespace

TEST_CASE("fault: unarmed, no site injects")
{
  core::arm_fault(core::Fault::kNone);
  CHECK(passes_until_injected(100) == 0);
}

TEST_CASE("fault: NAME@N injects at the N-th pass of its site, once, and only there")
{
  core::arm_fault(core::Fault::kLostAnswer, 3);
  int other = 0;
  for (int i = 0; i < 10; ++i)
    other += XATTN_FAULT(kBytesLost) ? 1 : 0; // another fault's site does not count
  CHECK(other == 0);
  CHECK(passes_until_injected(100) == 3);
  CHECK(passes_until_injected(100) == 0); // exactly one fault
  core::arm_fault(core::Fault::kNone);
}

TEST_CASE("fault: XATTN_FAULT names the fault, and a name not in the list is bad input naming the list")
{
  ::setenv("XATTN_FAULT", "lost-answer@2", 1);
  core::arm_fault_from_env();
  CHECK(core::armed_fault() == core::Fault::kLostAnswer);
  CHECK(passes_until_injected(10) == 2);
  ::setenv("XATTN_FAULT", "lost-anser", 1);
  CHECK_THROWS_WITH(core::arm_fault_from_env(), Contains("environment: error: XATTN_FAULT: unknown fault "
                                                         "'lost-anser' (one of: lost-answer, transfer-done-twice"));
  for (const char* bad : {"lost-answer@", "lost-answer@0", "lost-answer@x", "lost-answer@-1", "lost-answer@2x"}) {
    ::setenv("XATTN_FAULT", bad, 1);
    CHECK_THROWS_AS(core::arm_fault_from_env(), core::InputError);
  }
  ::setenv("XATTN_FAULT", "", 1);
  core::arm_fault_from_env();
  CHECK(core::armed_fault() == core::Fault::kNone);
  ::unsetenv("XATTN_FAULT");
}

TEST_CASE("fault: every fault has a distinct name and says what it breaks")
{
  std::set<std::string_view> names;
  for (const core::FaultInfo& f : core::faults()) {
    CHECK(f.fault != core::Fault::kNone);
    CHECK(!f.what.empty());
    CHECK(names.insert(f.name).second);
  }
  CHECK(names.size() == 7);
}
