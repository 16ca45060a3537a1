#include "sim/core/plausible.hpp"
#include "sim/core/yaml.hpp"

#include <catch2/catch.hpp>

using namespace xattn::core;
using Catch::Matchers::Contains;

namespace
{
const Schema kInner{
    {.key = "bandwidth",
     .dim = Dimension::kBytesPerSec,
     .def = "25GBps",
     .meaning = "link rate",
     .check = Check::kPositive},
    {.key = "latency", .dim = Dimension::kSeconds, .def = kRequired, .meaning = "one-way latency"},
};
const Schema kOuter{
    {.key = "name", .kind = FieldKind::kString, .def = kRequired, .meaning = "a name"},
    {.key = "count", .kind = FieldKind::kInteger, .def = "4", .meaning = "how many", .check = Check::kPositive},
    {.key = "mode", .kind = FieldKind::kChoice, .def = "route", .meaning = "primitive", .choices = "route|fetch|local"},
    {.key = "link", .kind = FieldKind::kSection, .def = "", .meaning = "the link", .sub = &kInner},
    {.key = "sizes", .kind = FieldKind::kList, .def = kNoDefault, .meaning = "sizes"},
};

// Reads a document against kOuter and returns the diagnostics' text (empty when clean).
std::string errors_of(const std::string& text)
{
  Document doc = parse_yaml(text, "s.yaml");
  Diagnostics d;
  Section top("s.yaml", doc.root, "", kOuter, d);
  (void)top.string("name");
  (void)top.integer("count");
  (void)top.choice("mode");
  Section link = top.section("link");
  (void)link.rate("bandwidth");
  (void)link.seconds("latency");
  (void)top.numbers("sizes", Dimension::kBytes);
  try {
    d.throw_if_any();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
} // namespace

TEST_CASE("yaml: a valid section reads values and defaults")
{
  Document doc = parse_yaml("name: x\nlink:\n  latency: 1us\nsizes: [1KiB, 2KiB]\n", "s.yaml");
  Diagnostics d;
  Section top("s.yaml", doc.root, "", kOuter, d);
  CHECK(top.string("name") == "x");
  CHECK(top.integer("count") == 4);
  CHECK(top.choice("mode") == "route");
  Section link = top.section("link");
  CHECK(link.rate("bandwidth").value() == 25e9);
  CHECK(link.seconds("latency").value() == Approx(1e-6));
  CHECK(top.numbers("sizes", Dimension::kBytes) == std::vector<double>{1024.0, 2048.0});
  CHECK(d.empty());
}

TEST_CASE("yaml: errors carry file, 1-based line and column, and key path")
{
  CHECK(errors_of("name: x\nlink:\n  latency: 1us\n  bandwidth: 25GBs\n") ==
        "s.yaml:4:14: error: link.bandwidth: unknown unit 'GBs' in '25GBs': expected a bandwidth such as 25GBps, "
        "400Gbps");
}

TEST_CASE("yaml: unknown keys are errors with a hint")
{
  CHECK_THAT(errors_of("name: x\ncuont: 3\nlink: {latency: 1us}\n"),
             Contains("s.yaml:2:1: error: cuont: unknown key 'cuont' (did you mean 'count'?)"));
  CHECK_THAT(errors_of("name: x\nzzzzzzzz: 3\nlink: {latency: 1us}\n"), Contains("expected one of: name count"));
}

TEST_CASE("yaml: duplicate keys are errors")
{
  CHECK_THAT(errors_of("name: x\nname: y\nlink: {latency: 1us}\n"),
             Contains("s.yaml:2:1: error: name: duplicate key (first given at line 1)"));
}

TEST_CASE("yaml: all errors are collected, not only the first")
{
  std::string all = errors_of("count: 0\nmode: fetchh\nlink:\n  latency: 5\n");
  CHECK_THAT(all, Contains("s.yaml:1:1: error: name: missing required key"));
  CHECK_THAT(all, Contains("s.yaml:1:8: error: count: must be greater than zero"));
  CHECK_THAT(all, Contains("s.yaml:2:7: error: mode: unknown value 'fetchh' (expected one of: route, fetch, local)"));
  CHECK_THAT(all, Contains("s.yaml:4:12: error: link.latency: missing unit in '5'"));
}

TEST_CASE("yaml: wrong node types and whole numbers")
{
  CHECK_THAT(errors_of("name: [a, b]\nlink: {latency: 1us}\n"), Contains("name: expected a string, got a list"));
  CHECK_THAT(errors_of("name: x\ncount: 2.5\nlink: {latency: 1us}\n"), Contains("count: expected a whole number"));
  CHECK_THAT(errors_of("name: x\nlink: 3\n"), Contains("link: expected a mapping, got '3'"));
  CHECK_THAT(errors_of("name: x\nlink: {latency: 1us}\nsizes: [1KiB, 3ms]\n"),
             Contains("s.yaml:3:15: error: sizes[1]: unknown unit 'ms'"));
  CHECK_THAT(errors_of("- 1\n- 2\n"), Contains("expected a mapping, got a list"));
}

TEST_CASE("yaml: syntax errors and missing files")
{
  CHECK_THROWS_WITH(parse_yaml("a: [1, 2\n", "bad.yaml"), Contains("bad.yaml:2:1: error: invalid YAML"));
  CHECK_THROWS_WITH(load_yaml("/nonexistent/x.yaml"), Contains("/nonexistent/x.yaml: error: cannot open file"));
}

TEST_CASE("yaml: --set overrides edit the tree and reject malformed assignments")
{
  Document doc = parse_yaml("name: x\nlink: {latency: 1us}\n", "s.yaml");
  apply_override(doc, "link.latency=2us");
  apply_override(doc, "count=8");
  Diagnostics d;
  Section top("s.yaml", doc.root, "", kOuter, d);
  CHECK(top.integer("count") == 8);
  CHECK(top.section("link").seconds("latency").value() == Approx(2e-6));
  CHECK_THROWS_WITH(apply_override(doc, "count"), Contains("expected PATH=VALUE"));
  CHECK_THROWS_WITH(apply_override(doc, "name.sub=1"), Contains("'name' is not a section"));
  CHECK_THROWS_WITH(apply_override(doc, "a..b=1"), Contains("empty component"));
}

TEST_CASE("yaml: describe lists every key with type and default")
{
  std::string text = describe(kOuter, "test schema");
  CHECK_THAT(text, Contains("bandwidth") && Contains("bandwidth > 0") && Contains("25GBps"));
  CHECK_THAT(text, Contains("(required)") && Contains("route|fetch|local"));
}

TEST_CASE("yaml: a key's former name reads as the key, with a warning naming the new one")
{
  std::vector<xattn::core::Diagnostic> said;
  xattn::core::set_warning_sink([&](const xattn::core::Diagnostic& d) { said.push_back(d); });
  const xattn::core::Schema schema{
      {.key = "hot_set_fraction", .def = "0.05", .meaning = "m", .former = "hot_fraction"},
      {.key = "seed", .kind = xattn::core::FieldKind::kInteger, .def = "1", .meaning = "s"}};
  {
    const xattn::core::Document doc = xattn::core::parse_yaml("seed: 3\nhot_fraction: 0.2\n", "old.yaml");
    xattn::core::Diagnostics diags;
    xattn::core::Section s(doc.file, doc.root, "corpus", schema, diags);
    CHECK(s.has("hot_set_fraction"));
    CHECK(s.number("hot_set_fraction") == 0.2);
    CHECK(diags.empty());
  }
  REQUIRE(said.size() == 1);
  CHECK(said[0].str() == "old.yaml:2:1: error: corpus.hot_fraction: the former name of 'hot_set_fraction': read as "
                         "it; write 'hot_set_fraction'");
  {
    // Both names at once: the second is a duplicate of the first.
    const xattn::core::Document doc =
        xattn::core::parse_yaml("hot_set_fraction: 0.1\nhot_fraction: 0.2\n", "both.yaml");
    xattn::core::Diagnostics diags;
    xattn::core::Section s(doc.file, doc.root, "corpus", schema, diags);
    REQUIRE(diags.size() == 1);
    CHECK_THAT(diags.list()[0].str(), Contains("both.yaml:2:1") && Contains("duplicate key (first given at line 1)"));
  }
  xattn::core::set_warning_sink(nullptr);
  CHECK_THAT(xattn::core::describe(schema, "t"), Contains("[formerly hot_fraction]"));
}
