// The figure registry (figures.def) against summary.json as result.cpp writes it: each figure's
// value is the number at its path in a policy's JSON.
#include "sim/engine/ensemble.hpp"
#include "sim/engine/figures.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <set>

using namespace xattn::sim::engine;

namespace
{
// A result whose every number differs from every other, so that a figure read from the wrong field
// shows.
PolicyResult distinct_result()
{
  PolicyResult r;
  double next = 1.25;
  for (const auto& [name, member] : kLatencyFigures)
    for (const auto& [field, value] : kLatencyFields)
      (r.*member).*value = (next += 1);
  r.wire_bytes = 123456789;
  r.decisions = {.route = 11, .fetch = 12, .local = 13, .cached = 14, .same_gpu = 15};
  r.goodput.share = 0.875;
  r.goodput.requests_per_s = 42.5;
  r.output_tokens_per_s_per_gpu = 777.25;
  return r;
}
} // namespace

TEST_CASE("every figure is the number at its path in a policy's summary")
{
  const PolicyResult r = distinct_result();
  const nlohmann::json j = to_json(r);
  std::set<std::string_view> paths;
  for (const FigureInfo& f : figures()) {
    INFO(f.path);
    CHECK(paths.insert(f.path).second);
    CHECK_FALSE(f.words.empty());
    const std::string path(f.path);
    const auto dot = path.find('.');
    const nlohmann::json& at =
        dot == std::string::npos ? j.at(path) : j.at(path.substr(0, dot)).at(path.substr(dot + 1));
    CHECK(f.value(r) == at.get<double>());
    CHECK(find_figure(f.path) == &f);
  }
  CHECK(find_figure("step_latency_s.p42") == nullptr);
}

TEST_CASE("the figures an SLO may bound are every latency statistic, step to end to end")
{
  std::string expected;
  for (const auto& [name, member] : kLatencyFigures)
    for (const auto& [field, value] : kLatencyFields)
      expected += (expected.empty() ? "" : "|") + std::string(name) + "." + field;
  CHECK(figure_paths(kBound, "|") == expected);
}

TEST_CASE("a toy figure goes through an ensemble's spreads and is printed in its unit")
{
  // Not in figures.def: a figure of requests per step, which the registry's machinery takes as
  // any other.
  const std::vector<FigureInfo> toy{
      {.path = "steps_per_request",
       .words = "steps per request",
       .unit = FigureUnit::kCount,
       .uses = kSpread,
       .value = [](const PolicyResult& r) { return static_cast<double>(r.steps) / static_cast<double>(r.requests); }},
      {.path = "not_spread", .words = "w", .unit = FigureUnit::kSeconds, .uses = kBound, .value = nullptr}};
  std::vector<std::vector<std::pair<std::string, PolicyResult>>> members;
  for (int k = 1; k <= 3; ++k) {
    PolicyResult r;
    r.requests = 10;
    r.steps = 100 * static_cast<std::uint64_t>(k);
    members.push_back({{"route", r}});
  }
  const Ensemble e = summarise_ensemble(members, false, toy);
  REQUIRE(e.spread("route", "steps_per_request") != nullptr);
  CHECK(e.spread("route", "steps_per_request")->values == std::vector<double>{10, 20, 30});
  CHECK(e.spread("route", "steps_per_request")->p50 == 20);
  CHECK(e.spread("route", "not_spread") == nullptr);
  CHECK(e.spread("route", "step_latency_s.mean") == nullptr); // only the figures given
  CHECK(format_figure(toy[0], 12.345) == "12.35");
  CHECK(format_figure(figure("tpot_s.mean"), 0.0123) == "12.3ms");
}
