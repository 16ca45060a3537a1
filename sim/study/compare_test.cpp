// The comparison of a sweep's points (compare.hpp) and an ensemble sweep's table columns, on
// summaries written by hand: two points of one seed, each an ensemble of two members, and a third
// point alone on its seed.
#include "sim/study/compare.hpp"
#include "sim/study/table.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

using namespace xattn::sim::study;
namespace fs = std::filesystem;

namespace
{
void write(const fs::path& p, const std::string& text)
{
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

// A summary of one policy, route: its mean step and TTFT, and its ensemble members' mean steps.
std::string summary(double step, double ttft, double member0, double member1)
{
  auto stats = [](double v) {
    const std::string s = std::to_string(v);
    return "{\"mean\": " + s + ", \"p50\": " + s + ", \"p90\": " + s + ", \"p99\": " + s + ", \"max\": " + s + "}";
  };
  return "{\"scenario\": \"t\", \"policies\": {\"route\": {\"requests\": 3, \"steps\": 10, \"step_latency_s\": " +
         stats(step) + ", \"ttft_s\": " + stats(ttft) +
         ", \"goodput\": {\"share\": 1, \"requests_per_s\": 2}}}, \"invariants\": {\"ok\": true, \"route\": {\"ok\": "
         "true}}, \"ensemble\": {\"members\": 2, \"profile_drawn\": true, \"ok\": true, \"policies\": {\"route\": "
         "{\"step_latency_s.mean\": {\"p5\": " +
         std::to_string(member0) + ", \"p50\": " + std::to_string(member0) + ", \"p95\": " + std::to_string(member1) +
         ", \"values\": [" + std::to_string(member0) + ", " + std::to_string(member1) + "]}}}}}";
}
} // namespace

TEST_CASE("study: the points of one seed are compared with the run table's verdict, ratios paired by member")
{
  const fs::path dir = fs::temp_directory_path() / "xattn_compare_test";
  fs::remove_all(dir);
  Manifest m{.name = "c", .base = "/b.yaml", .keys = {"name", "engine.max_batch"}, .points = {}, .exe = "x"};
  m.ensemble = 2;
  m.label = "name";
  for (const auto& [id, name, seed] : {std::tuple{"aaaaaaaaaaaa", "near", 1}, std::tuple{"bbbbbbbbbbbb", "far", 1},
                                       std::tuple{"cccccccccccc", "alone", 2}})
    m.points.push_back({.id = id, .values = {{"name", name}, {"engine.max_batch", "8"}}, .seed = seed, .sets = {}});
  // near: 10 ms steps, 500 ms to the first token; far: 12 ms and 400 ms. Member by member far's
  // steps are 12.5 / 10 = 1.25x and 22 / 20 = 1.10x near's.
  write(dir / "points/aaaaaaaaaaaa/summary.json", summary(0.010, 0.5, 0.010, 0.020));
  write(dir / "points/bbbbbbbbbbbb/summary.json", summary(0.012, 0.4, 0.0125, 0.022));
  write(dir / "points/cccccccccccc/summary.json", summary(0.011, 0.4, 0.011, 0.011));
  const std::string text = std::regex_replace(write_comparison(m, dir.string()), std::regex("\\s+"), " ");
  CHECK_THAT(text, Catch::Contains("route, seed 1"));
  CHECK_THAT(text, !Catch::Contains("seed 2")); // one point alone on its seed: nothing to compare
  CHECK_THAT(text, Catch::Contains("verdict: near is best on mean step latency (10ms). far is 1.20x slower (range "
                                   "over the 2 ensemble members: 1.10x to 1.25x)"));
  // TTFT has no members here: its ratio stands alone.
  CHECK_THAT(text, Catch::Contains("verdict: far is best on mean TTFT (400ms). near is 1.25x slower"));
  CHECK(fs::exists(dir / "comparison.txt"));
  fs::remove_all(dir);
}

TEST_CASE("study: an ensemble sweep's table carries each compared figure's 5% and 95%, empty where not given")
{
  const fs::path dir = fs::temp_directory_path() / "xattn_compare_table_test";
  fs::remove_all(dir);
  Manifest m{.name = "c", .base = "/b.yaml", .keys = {"name"}, .points = {}, .exe = "x"};
  m.ensemble = 2;
  m.points.push_back({.id = "aaaaaaaaaaaa", .values = {{"name", "near"}}, .seed = 1, .sets = {}});
  write(dir / "points/aaaaaaaaaaaa/summary.json", summary(0.010, 0.5, 0.010, 0.020));
  const Table t = gather(m, dir.string());
  REQUIRE(t.rows == 1);
  std::istringstream in(t.csv);
  std::string header, row;
  std::getline(in, header);
  std::getline(in, row);
  CHECK_THAT(header, Catch::Contains(",ttft_s_mean_p5,ttft_s_mean_p95,tpot_s_mean_p5,tpot_s_mean_p95,"
                                     "step_latency_s_mean_p5,step_latency_s_mean_p95,goodput_share_p5,"
                                     "goodput_share_p95,goodput_requests_per_s_p5,goodput_requests_per_s_p95,"
                                     "overloaded,simulated_time_s,invariants_ok"));
  // Only the step's spread was written: TTFT's and TPOT's cells are empty, the step's 10 and 20 ms.
  CHECK_THAT(row, Catch::Contains(",,,,,0.01,0.02,,,,,"));
  fs::remove_all(dir);
}
