// Scenario files: a valid one reads, bad ones name file, line, column and key.
#include "sim/engine/scenario.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace xattn;
using Catch::Matchers::Contains;

namespace
{
const std::string kValid = "name: t\n"
                           "model: deepseek-v3.2\n"
                           "topology: testbed-ndr200\n"
                           "instances: {requesters: [node0], holders: [node1-3]}\n"
                           "workload:\n"
                           "  generator: {requests: 10}\n";

std::string error_of(const std::string& text, const std::vector<std::string>& sets = {})
{
  try {
    sim::engine::parse_scenario(text, "s.yaml", sets);
  } catch (const core::InputError& e) {
    return e.what();
  }
  return "";
}
} // namespace

TEST_CASE("scenario: --set edits a preset the scenario names, as if it were inline")
{
  auto base = sim::engine::parse_scenario(kValid, "s.yaml");
  REQUIRE(base.topology->spec().fabric);
  CHECK(base.topology->spec().fabric->link_bandwidth.value() == 25e9); // testbed-ndr200: 200 Gbps
  auto sc =
      sim::engine::parse_scenario(kValid, "s.yaml", {"topology.fabric.link.bandwidth=400Gbps", "model.layers=30"});
  CHECK(sc.topology->spec().fabric->link_bandwidth.value() == 50e9);
  CHECK(sc.topology->spec().name == "testbed-ndr200");
  CHECK(sc.model.layers == 30);
  CHECK(base.model.layers == 61);
  // A key the preset's schema does not have is named as any unknown key is.
  const std::string typo = error_of(kValid, {"topology.fabric.link.bandwith=400Gbps"});
  CHECK_THAT(typo, Contains("topology.fabric.link.bandwith: unknown key 'bandwith' (did you mean 'bandwidth'?)"));
  CHECK(typo.find("bandwith", typo.find("bandwith") + 40) == std::string::npos); // said once
}

TEST_CASE("scenario: a valid scenario reads with its defaults")
{
  auto sc = sim::engine::parse_scenario(kValid, "s.yaml");
  CHECK(sc.name == "t");
  CHECK(sc.model.index.topk == 2048);
  CHECK(sc.selection.sparse); // follows the model's indexer
  CHECK(sc.requesters.size() == 8);
  CHECK(sc.holders.size() == 24);
  CHECK(sc.policies == std::vector<std::string>{"route", "fetch", "local", "predicate", "oracle", "ski-rental",
                                                "load-aware", "session-forecast"});
  CHECK(sc.corpus.holders == 24);
  CHECK(sc.workload.generator->seed == 1);
  CHECK(sc.granularity == sim::engine::Granularity::kStep);
}

TEST_CASE("scenario: --set overrides any key and the seed drives the generator")
{
  auto sc = sim::engine::parse_scenario(kValid, "s.yaml", {"seed=7", "engine.granularity=layer", "instances.tp=2"});
  CHECK(sc.seed == 7);
  CHECK(sc.workload.generator->seed == 7);
  CHECK(sc.granularity == sim::engine::Granularity::kLayer);
  CHECK(sc.requester_instances() == 4);
}

TEST_CASE("scenario: the corpus's placement seed is the scenario's unless the corpus sets its own")
{
  CHECK(sim::engine::parse_scenario(kValid, "s.yaml", {"seed=7"}).corpus.seed == 7);
  // Its own seed stays whatever seed drives the rest (round-robin: chunk c on holder (c + seed) mod holders).
  auto sc = sim::engine::parse_scenario(kValid, "s.yaml", {"seed=7", "corpus.seed=0"});
  CHECK(sc.corpus.seed == 0);
  CHECK(sc.seed == 7);
}

TEST_CASE("scenario: bad input names the place")
{
  CHECK_THAT(error_of(kValid + "polices: [route]\n"),
             Contains("s.yaml:7:1: error: polices: unknown key 'polices' (did you mean 'policies'?)"));
  CHECK_THAT(error_of(kValid + "policies: [route, teleport]\n"),
             Contains("s.yaml:7:11: error: policies: unknown policy 'teleport'"));
  CHECK_THAT(error_of(kValid, {"instances.requesters=[node9]"}),
             Contains("instances.requesters: selector 'node9': no such GPUs"));
  CHECK_THAT(error_of(kValid, {"instances.tp=3"}),
             Contains("instances.requesters: 8 GPUs do not split into instances of tp = 3"));
  CHECK_THAT(error_of(kValid, {"model=deepseek-v9"}),
             Contains("s.yaml:2:1: error: model: no model preset or file named 'deepseek-v9'"));
  CHECK_THAT(error_of(kValid, {"engine.cache_budget=16"}), Contains("engine.cache_budget: missing unit in '16'"));
  CHECK_THAT(error_of(kValid, {"workload.trace=/nonexistent.jsonl"}),
             Contains("workload: give exactly one of workload.trace, workload.generator and workload.batch"));
  CHECK_THAT(error_of(kValid, {"instances.holders=[node0.gpu0, node0]"}),
             Contains("instances.holders: a GPU is listed twice"));
  CHECK_THAT(error_of("name: [x]\n"), Contains("s.yaml:1:7: error: name: expected a string, got a list"));
  CHECK_THAT(error_of(""), Contains("empty scenario"));
}

TEST_CASE("scenario: every numeric key has a range with its reason, shown by --describe")
{
  const std::string text = core::describe(sim::engine::scenario_schema(), "t");
  int numbers = 0;
  core::walk(sim::engine::scenario_schema(), [&](const std::string& path, const core::Field& f) {
    const bool numeric =
        f.kind == core::FieldKind::kQuantity || f.kind == core::FieldKind::kInteger ||
        (f.kind == core::FieldKind::kList && (path.ends_with("affinity") || path.ends_with("rail_of_nic")));
    if (!numeric) return;
    ++numbers;
    INFO(path);
    CHECK(f.range.bounded());
    CHECK(std::isfinite(f.range.max));
    CHECK(f.range.min <= f.range.max);
    CHECK(text.find(core::range_text(f)) != std::string::npos);
    CHECK(text.find("[range: " + std::string(f.range.why) + "]") != std::string::npos);
  });
  CHECK(numbers > 80);
}

TEST_CASE("scenario: a value out of its range is bad input quoting the reason; time_scale=1e-300 among them")
{
  CHECK(error_of(kValid, {"workload.time_scale=1e-300"}) ==
        "s.yaml: error: workload.time_scale: must be at least 0.01, got '1e-300' (at most 100 times slower (an hour "
        "of trace then spans four days) and a million times faster)");
  CHECK_THAT(error_of(kValid, {"workload.generator.requests=999999999999"}),
             Contains("workload.generator.requests: must be at most 4294967296, got '999999999999'"));
  CHECK_THAT(error_of(kValid, {"engine.max_memory=1MiB"}), Contains("engine.max_memory: must be at least 64MiB"));
  // In range, every one of them, but their product is not.
  CHECK_THAT(error_of(kValid, {"workload.copies=65536", "workload.copy_offset=1min"}),
             Contains("workload.copy_offset: (workload.copies - 1) x workload.copy_offset / workload.time_scale = "
                      "65535 x 60s / 1 = 3.932e+06 s: the last copy would start past the simulated-time horizon"));
  CHECK_THAT(error_of(kValid, {"workload.generator.requests=100000000", "workload.copies=1000",
                               "workload.generator.arrival.interarrival=1us", "engine.max_memory=1TiB"}),
             Contains("workload.generator.requests: requests x workload.copies = 100000000 x 1000 = 1e+11 requests") &&
                 Contains("more than engine.max_memory = 1.1TB"));
  CHECK_THAT(
      error_of(kValid, {"corpus.chunk_tokens=16777216"}),
      Contains("corpus.chunk_tokens: corpus.chunk_tokens x model.layers x 1.152kB per token and layer = 16777216 "
               "x 61 x 1.152kB = 1.179TB per chunk, more than corpus.holder_hbm (80GB)"));
}

TEST_CASE("scenario: engine.max_memory defaults to a share of the machine's memory")
{
  const auto sc = sim::engine::parse_scenario(kValid, "s.yaml");
  CHECK(sc.max_memory.value() >= 256.0 * 1048576);
  CHECK_THAT(sc.max_memory_origin, Contains("engine.max_memory's default of"));
  const auto set = sim::engine::parse_scenario(kValid, "s.yaml", {"engine.max_memory=8GiB"});
  CHECK(set.max_memory.value() == 8.0 * 1073741824);
  CHECK(set.max_memory_origin == "engine.max_memory = 8.59GB");
}

TEST_CASE("scenario: a standing batch counts the requester instances and takes the scenario's seed")
{
  const std::string batch = "name: t\n"
                            "model: deepseek-v3.2\n"
                            "topology: testbed-ndr200\n"
                            "instances: {requesters: [node0], holders: [node1-3], tp: 2}\n"
                            "workload:\n"
                            "  batch: {requests_per_instance: 3, context_tokens: 2048, shared_tokens: 8192}\n";
  auto sc = sim::engine::parse_scenario(batch, "s.yaml", {"seed=5"});
  REQUIRE(sc.workload.batch);
  CHECK_FALSE(sc.workload.generator);
  CHECK(sc.workload.trace.empty());
  CHECK(sc.workload.batch->instances == 4); // 8 GPUs of node0 in instances of tp 2
  CHECK(sc.workload.batch->requests() == 12);
  CHECK(sc.workload.batch->contexts() == 4);
  CHECK(sc.workload.batch->seed == 5);
  CHECK(sim::engine::parse_scenario(batch, "s.yaml", {"workload.batch.seed=9"}).workload.batch->seed == 9);
  // One source of requests, no more.
  CHECK_THAT(error_of(batch, {"workload.generator={requests: 10}"}),
             Contains("give exactly one of workload.trace, workload.generator and workload.batch"));
  // Every request its own session: no more than the request-id layout's 2^32 (8,192 instances).
  CHECK_THAT(error_of(batch, {"topology=ndr400-1024", "instances.requesters=[node0-1023]", "instances.holders=[node0]",
                              "instances.tp=1", "workload.batch.requests_per_instance=1048576"}),
             Contains("workload.batch.requests_per_instance: 1048576 requests on each of 8192 instances: more than "
                      "the 2^32 sessions"));
}

TEST_CASE("scenario: corpus.hot_fraction, the hot set's former name, still reads as corpus.hot_set_fraction")
{
  // The hot set (corpus) and a selection's share of it (selection.hot_fraction) were both hot_fraction.
  auto sc = sim::engine::parse_scenario(kValid, "s.yaml", {"corpus.hot_fraction=0.2", "selection.hot_fraction=0.4"});
  CHECK(sc.corpus.hot_set_fraction == 0.2);
  CHECK(sc.selection.hot_fraction == 0.4);
  CHECK(sim::engine::parse_scenario(kValid, "s.yaml", {"corpus.hot_set_fraction=0.3"}).corpus.hot_set_fraction == 0.3);
}
