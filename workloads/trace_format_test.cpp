#include "workloads/trace_format.hpp"

#include "workloads/test_util.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <set>

using namespace xattn::workloads;
using namespace xattn::workloads::testing;

TEST_CASE("the trace format registry: unique names, one fallback per extension, listed in order")
{
  std::set<std::string_view> names;
  std::map<std::string_view, int> fallbacks;
  std::string listed;
  for (const TraceFormatInfo& f : trace_formats()) {
    CHECK(names.insert(f.name).second);
    CHECK(f.open != nullptr);
    CHECK(f.extension.starts_with("."));
    if (f.first_line_mark.empty()) ++fallbacks[f.extension];
    listed += (listed.empty() ? "" : "|") + std::string(f.name);
    REQUIRE(parse_format(f.name));
    CHECK(&parse_format(f.name)->info() == &f);
  }
  for (const auto& [ext, n] : fallbacks)
    CHECK(n == 1);
  CHECK(format_names() == listed);
  CHECK_FALSE(parse_format("teleport"));
  CHECK(TraceFormat().name() == "xattn"); // the own format is the default
}

TEST_CASE("guess_format: each format from its extension and first-line mark, compressed names too")
{
  for (const TraceFormatInfo& f : trace_formats()) {
    const std::string first = f.first_line_mark.empty() ? "{}" : std::string(f.first_line_mark);
    const std::string base = "guess_" + std::string(f.name);
    CHECK(&guess_format(temp_file(base + std::string(f.extension), first + "\n")).info() == &f);
    // A compression suffix is set aside; the compression itself is read from the content.
    CHECK(&guess_format(temp_file(base + std::string(f.extension) + ".zst", first + "\n")).info() == &f);
  }
  CHECK(guess_format(fixture("mooncake_small.jsonl")).name() == "mooncake");
  CHECK_THROWS_WITH(
      guess_format(temp_file("t.txt", "x\n")),
      Catch::Contains("cannot tell the trace format from the name: give --format " + std::string(format_names())));
}
