// Plausibility: values outside what hardware of their class has are named with the likely slip,
// warned about once, and refused under --strict.
#include "sim/core/plausible.hpp"
#include "sim/core/yaml.hpp"

#include <catch2/catch.hpp>

#include <vector>

using namespace xattn::core;
using Catch::Matchers::Contains;

TEST_CASE("plausible: a rate, a size or a latency outside its class names the slip")
{
  CHECK(implausible(kNicRate, 50e9).empty()); // NDR-400
  CHECK(implausible(kNvlinkRate, 450e9).empty());
  CHECK_THAT(implausible(kNicRate, 400e9), Contains("a bit rate typed as bytes") && Contains("50GBps (400 Gb/s)"));
  CHECK_THAT(implausible(kNvlinkRate, 450e9 / 8 / 8), Contains("a byte rate typed as bits"));
  CHECK_THAT(implausible(kWireLatency, 5e-3), Contains("1000x too large: ms for us"));
  CHECK_THAT(implausible(kHbmCapacity, 80e12), Contains("1000x too large"));
  CHECK_THAT(implausible(kGpuFlops, 1e20), Contains("outside what a GPU's dense tensor FLOP/s has"));
}

TEST_CASE("plausible: a section warns once at the key, or refuses under --strict")
{
  std::vector<Diagnostic> said;
  set_warning_sink([&](const Diagnostic& d) { said.push_back(d); });
  const Schema schema{{.key = "bandwidth", .dim = Dimension::kBytesPerSec, .meaning = "a NIC port"}};
  const Document doc = parse_yaml("bandwidth: 400GBps\n", "t.yaml");
  for (int read = 0; read < 2; ++read) {
    Diagnostics diags;
    Section s(doc.file, doc.root, "link", schema, diags);
    s.plausible("bandwidth", kNicRate, s.rate("bandwidth").value());
    CHECK(diags.empty());
  }
  REQUIRE(said.size() == 1); // the same file read twice warns once
  CHECK(said[0].str() ==
        "t.yaml:1:12: error: link.bandwidth: " + implausible(kNicRate, 400e9) + " (--strict makes it an error)");
  {
    const NoPlausibilityChecks unchecked; // an input the program wrote itself: nothing said
    Diagnostics quiet;
    const Document other = parse_yaml("bandwidth: 800GBps\n", "u.yaml");
    Section s(other.file, other.root, "link", schema, quiet);
    s.plausible("bandwidth", kNicRate, s.rate("bandwidth").value());
    CHECK(quiet.empty());
    CHECK(said.size() == 1);
  }
  set_strict(true);
  Diagnostics diags;
  Section s(doc.file, doc.root, "link", schema, diags);
  s.plausible("bandwidth", kNicRate, s.rate("bandwidth").value());
  set_strict(false);
  set_warning_sink(nullptr);
  REQUIRE(diags.size() == 1);
  CHECK_THAT(diags.list()[0].str(),
             Contains("t.yaml:1:12: error: link.bandwidth: 400GBps") && Contains("(an error under --strict)"));
}
