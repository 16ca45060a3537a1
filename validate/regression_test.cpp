#include "validate/regression.hpp"

#include "sim/core/error.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

using namespace xattn::validate;

TEST_CASE("validate: regression checks compare summary values exactly or within bounds")
{
  RegressionSpec spec;
  spec.checks = {{"invariants.ok", true, -1e300, 1e300, "w", 1},
                 {"policies.*.requests", 3.0, -1e300, 1e300, "w", 2},
                 {"policies.route.step_latency_s.mean", nullptr, 1.0, 2.0, "w", 3}};
  nlohmann::json s = {{"invariants", {{"ok", true}}},
                      {"policies",
                       {{"route", {{"requests", 3}, {"step_latency_s", {{"mean", 1.5}}}}},
                        {"fetch", {{"requests", 3}, {"step_latency_s", {{"mean", 9.0}}}}}}}};
  RegressionOutcome ok = check_summary(spec, s);
  CHECK(ok.ok);
  s["policies"]["fetch"]["requests"] = 2;
  CHECK_FALSE(check_summary(spec, s).ok);
  s["policies"]["fetch"]["requests"] = 3;
  s["policies"]["route"]["step_latency_s"]["mean"] = 2.5;
  RegressionOutcome bad = check_summary(spec, s);
  CHECK_FALSE(bad.ok);
  CHECK_THAT(bad.report, Catch::Contains("FAIL policies.route.step_latency_s.mean = 2.5"));
  spec.checks.push_back({"policies.oracle.requests", 3.0, -1e300, 1e300, "w", 4});
  CHECK_THAT(check_summary(spec, s).report, Catch::Contains("FAIL policies.oracle.requests: not in summary.json"));
}

TEST_CASE("validate: every example scenario has expected values that load")
{
  for (const auto& e : std::filesystem::directory_iterator(XATTN_SOURCE_DIR "/scenarios")) {
    if (e.path().extension() != ".yaml") continue;
    std::ifstream in(e.path());
    std::string line;
    bool scenario = false;
    while (std::getline(in, line))
      scenario = scenario || line.rfind("workload:", 0) == 0;
    if (!scenario) // an `xattn plan` file or the like, not a run scenario
      continue;
    const auto expected = std::filesystem::path(XATTN_SOURCE_DIR "/validate/regression") / e.path().filename();
    INFO(expected);
    REQUIRE(std::filesystem::exists(expected));
    RegressionSpec spec = load_regression(expected.string());
    CHECK(std::filesystem::equivalent(spec.scenario, e.path()));
    CHECK(spec.checks.size() >= 3);
  }
}

TEST_CASE("validate: an expected-values file with an unknown key is bad input")
{
  const auto p = std::filesystem::temp_directory_path() / "xattn-regression-bad.yaml";
  std::ofstream(p)
      << "scenario: scenarios/quickstart.yaml\nchecks:\n  - key: a\n    equals: 1\n    why: w\n    tolerance: 2\n";
  REQUIRE_THROWS_WITH(load_regression(p.string()), Catch::Contains("checks.tolerance: unknown key"));
  std::filesystem::remove(p);
}
