// The memory guard (memory.hpp): readings of this process, the default limit, and the LimitError
// that stops a run naming engine.max_memory.
#include "sim/core/memory.hpp"

#include "sim/core/error.hpp"

#include <catch2/catch.hpp>

#include <vector>

using namespace xattn::core;
using Catch::Matchers::Contains;

TEST_CASE("memory: this process's resident size and address space are read")
{
  const double rss = resident_bytes().value();
  CHECK(rss > 1e6);                            // a Catch2 binary holds more than a megabyte
  CHECK(address_space_bytes().value() >= rss); // what is resident is mapped
  std::vector<char> block(64 << 20, 1);        // 64 MiB, touched
  CHECK(resident_bytes().value() > rss + 60e6);
}

TEST_CASE("memory: the default limit is half of what is available, at least 256 MiB")
{
  const double avail = available_memory().value();
  const double def = default_memory_limit().value();
  CHECK(def >= 256.0 * 1048576);
  if (avail > 512.0 * 1048576 && address_space_limit().value() == 0) CHECK(def == Approx(avail / 2).epsilon(0.05));
  CHECK_THAT(default_memory_limit_origin(), Contains("available") || Contains("ulimit -v"));
}

TEST_CASE("memory: the guard throws LimitError naming the key once the process is over its limit")
{
  MemoryGuard g;
  CHECK_FALSE(g.armed());
  g.check(); // unarmed: nothing
  g.arm(Bytes(1e6), "engine.max_memory", "a test's limit");
  CHECK(g.armed());
  try {
    g.check();
    FAIL("no LimitError");
  } catch (const LimitError& e) {
    CHECK(e.key() == "engine.max_memory");
    CHECK_THAT(e.what(), Contains("engine.max_memory: the process holds") && Contains("past its limit of 1MB") &&
                             Contains("a test's limit"));
  }
  // tick() checks only every kTicksPerCheck calls.
  g.arm(Bytes(1e6), "engine.max_memory", "a test's limit");
  for (std::uint32_t i = 1; i < MemoryGuard::kTicksPerCheck; ++i)
    g.tick();
  CHECK_THROWS_AS(g.tick(), LimitError);
  g.arm(Bytes(1e15), "engine.max_memory", "a test's limit");
  CHECK_NOTHROW(g.check());
  CHECK(g.peak_bytes() > 1e6);
}
