#include "topologies/report.hpp"
#include "topologies/test_topologies.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace xattn;
using Catch::Matchers::Contains;

TEST_CASE("topo: JSON summary has the documented keys and counts")
{
  topo::Topology t = topo::test::small();
  nlohmann::json j = topo::summary_json(t);
  CHECK(j["gpus"] == 16);
  CHECK(j["nodes"] == 4);
  CHECK(j["leaves"] == 2);
  CHECK(j["spines"] == 2);
  CHECK(j["links"] == 60);
  CHECK(j["links_by_kind"]["nvlink"] == 16);
  CHECK(j["links_by_kind"]["ib-trunk"] == 4);
  CHECK_THAT(topo::summary_text(t), Contains("4 nodes x 4 GPUs = 16 GPUs"));
}

TEST_CASE("topo: the summary names NVLink domains, switch trays and rails")
{
  nlohmann::json plain = topo::summary_json(topo::test::small());
  CHECK(plain["nvlink_domain_gpus"] == 4);
  CHECK(plain["switch_trays"] == 0);
  CHECK(plain["rails"] == 1);
  CHECK(plain["cross_rail"].is_null());
  topo::Topology d = topo::test::domains();
  CHECK(topo::summary_json(d)["nvlink_domain_gpus"] == 4); // 2 nodes x 2 GPUs
  CHECK(topo::summary_json(d)["switch_trays"] == 2);
  CHECK_THAT(topo::summary_text(d), Contains("200GBps per GPU each way (2 switch trays x 100GBps), 2 domains of 2 "
                                             "nodes (4 GPUs)"));
  topo::Topology r = topo::test::rail("spine");
  CHECK(topo::summary_json(r)["rails"] == 4);
  CHECK(topo::summary_json(r)["cross_rail"] == "spine");
  CHECK_THAT(topo::summary_text(r),
             Contains("rail-optimised, 2 groups of 2 nodes x 4 rails = 8 leaves, cross-rail spine"));
}

TEST_CASE("topo: path report lists hops, class, latency sum and bottleneck")
{
  topo::Topology t = topo::test::small();
  nlohmann::json j = topo::path_json(t, 0, 8);
  CHECK(j["fabric"] == "ib-spine");
  CHECK(j["hops"].size() == 8);
  CHECK(j["hops"][3]["link"] == "leaf0.spine1");
  CHECK(j["hops"][3]["direction"] == "up");
  CHECK(j["latency_s"].get<double>() == Approx(6.0e-6));
  CHECK(j["bottleneck_Bps"].get<double>() == 6.25e9);
  std::string text = topo::path_text(t, 0, 8);
  CHECK_THAT(text, Contains("node0.gpu0 -> node2.gpu0: ib-spine, 8 hops, latency 6us, bottleneck 6.25GBps"));
  CHECK_THAT(text, Contains("leaf1.spine1"));
  CHECK(topo::path_json(t, 3, 3)["bottleneck_Bps"].is_null());
}

TEST_CASE("topo: a striped path report names the relay and its rail")
{
  topo::Topology t = topo::test::small();             // NIC 0: GPUs 0-1, NIC 1: GPUs 2-3
  nlohmann::json j = topo::path_json(t, 0, 10, true); // node2.gpu2 is on rail 1
  CHECK(j["relay"] == "node0.gpu2");
  CHECK(j["hops"][0]["link"] == "node0.gpu0.nvlink");
  CHECK(j["latency_s"].get<double>() == Approx(t.path_via(0, 2, 10).latency.value()));
  CHECK_THAT(topo::path_text(t, 0, 10, true), Contains("relayed through node0.gpu2 (NIC 1, the rail of node2.gpu2)"));
  CHECK(topo::path_json(t, 0, 8, true)["relay"].is_null()); // node2.gpu0: GPU 0's own rail
  CHECK_THAT(topo::path_text(t, 0, 8, true), Contains("not relayed"));
  CHECK_FALSE(topo::path_json(t, 0, 10).contains("relay"));
}

TEST_CASE("topo: GPUs are given by name or index, and unknown ones are bad input")
{
  topo::Topology t = topo::test::small();
  CHECK(topo::parse_gpu(t, "node2.gpu1", "--path") == 9);
  CHECK(topo::parse_gpu(t, "15", "--path") == 15);
  REQUIRE_THROWS_WITH(
      topo::parse_gpu(t, "node9.gpu0", "--path"),
      "command line: error: --path: unknown GPU 'node9.gpu0' (expected nodeN.gpuG with N < 4 and G < 4, "
      "or an index below 16)");
  CHECK_THROWS_AS(topo::parse_gpu(t, "16", "--path"), core::InputError);
}
