#include "sim/study/table.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

using namespace xattn::sim::study;
namespace fs = std::filesystem;

namespace
{
void write(const fs::path& p, const std::string& text)
{
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

std::string policy(int steps, double p99, int route)
{
  return "{\"requests\": 3, \"steps\": " + std::to_string(steps) +
         ", \"step_latency_s\": {\"mean\": 0.5, \"p50\": 0.25, \"p90\": 0.75, \"p99\": " + std::to_string(p99) +
         ", \"max\": 1.5}, \"request_latency_s\": {\"mean\": 2, \"p50\": 2, \"p90\": 3, \"p99\": 4, \"max\": 5},"
         " \"wire_bytes\": 1000, \"wire_bytes_by_fabric\": {\"ib-spine\": 600, \"ib-same-leaf\": 400},"
         " \"decisions\": {\"route\": " +
         std::to_string(route) + ", \"fetch\": 0, \"local\": 1}, \"simulated_time_s\": 9, \"load\": {\"overloaded\": " +
         (route > 0 ? "true" : "false") + "}}";
}
} // namespace

TEST_CASE("study: the tidy table has one row per complete point and policy, missing points listed")
{
  fs::path dir = fs::temp_directory_path() / "xattn_table_test";
  fs::remove_all(dir);
  Manifest m{
      .name = "t", .base = "/b.yaml", .keys = {"instances.holders", "engine.max_batch"}, .points = {}, .exe = "x"};
  m.points.push_back({.id = "aaaaaaaaaaaa",
                      .values = {{"instances.holders", "[node1, node2]"}, {"engine.max_batch", "8"}},
                      .seed = 1,
                      .sets = {}});
  m.points.push_back({.id = "bbbbbbbbbbbb",
                      .values = {{"instances.holders", "[node1]"}, {"engine.max_batch", "16"}},
                      .seed = 2,
                      .sets = {}});
  write(dir / "points/aaaaaaaaaaaa/summary.json",
        "{\"scenario\": \"t\", \"policies\": {\"route\": " + policy(10, 0.125, 7) +
            ", \"fetch\": " + policy(11, 0.5, 0) +
            "}, \"invariants\": {\"ok\": true, \"route\": {\"ok\": true}, \"fetch\": {\"ok\": false}}}");
  Table t = gather(m, dir.string());
  CHECK(t.rows == 2);
  CHECK(t.points_complete == 1);
  CHECK(t.missing == std::vector<std::string>{"bbbbbbbbbbbb"});
  std::istringstream in(t.csv);
  std::string header, fetch, route;
  std::getline(in, header);
  std::getline(in, fetch);
  std::getline(in, route);
  CHECK(header.rfind("point,instances.holders,engine.max_batch,seed,policy,requests,steps,step_mean_s,", 0) == 0);
  CHECK(header.find(",wire_bytes_ib-spine,") != std::string::npos);
  CHECK(header.find(",step_p99_s,") != std::string::npos);
  CHECK(header.find(",ttft_mean_s,") != std::string::npos);
  CHECK(header.find(",itl_p99_s,") != std::string::npos);
  CHECK(header.find(",e2e_max_s,goodput_share,goodput_requests_per_s,wire_bytes,") != std::string::npos);
  CHECK(header.substr(header.size() - 41) == "overloaded,simulated_time_s,invariants_ok");
  // Policies in name order; the list value is quoted; figures copied (an older summary's missing
  // figures read as zero, its request_latency_s as e2e_s); invariants per policy.
  CHECK(fetch.rfind("aaaaaaaaaaaa,\"[node1, node2]\",8,1,fetch,3,11,0.5,0.25,0.75,0.5", 0) == 0);
  CHECK(fetch.substr(fetch.size() - 14) == ",false,9,false"); // kept up; an invariant failed
  CHECK(route.rfind("aaaaaaaaaaaa,\"[node1, "
                    "node2]\",8,1,route,3,10,0.5,0.25,0.75,0.125,1.5,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,2,2,3,4,5,0,0,"
                    "1000,0,0,0,400,600,7,0,1,0,0,true,9,true",
                    0) == 0);
  fs::remove_all(dir);
}

TEST_CASE("study: csv fields are quoted only when needed")
{
  CHECK(csv_field("plain") == "plain");
  CHECK(csv_field("a,b") == "\"a,b\"");
  CHECK(csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
}
