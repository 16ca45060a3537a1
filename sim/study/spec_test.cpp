#include "sim/study/spec.hpp"

#include <catch2/catch.hpp>

#include <set>

using namespace xattn::sim::study;

namespace
{
const std::string kDir = XATTN_SOURCE_DIR "/scenarios";

SweepSpec parse(const std::string& text)
{
  return parse_sweep_text(text, "sweep.yaml", kDir);
}
} // namespace

TEST_CASE("study: a 3x3 grid with 2 seeds expands to 18 points with distinct stable ids")
{
  SweepSpec s = parse("name: g\nbase: quickstart.yaml\n"
                      "grid:\n  engine.max_batch: [8, 16, 32]\n  corpus.chunk_tokens: [1024, 2048, 4096]\n"
                      "seeds: [1, 2]\n");
  std::vector<Point> p = expand(s);
  REQUIRE(p.size() == 18);
  std::set<std::string> ids;
  for (const Point& q : p)
    ids.insert(q.id);
  CHECK(ids.size() == 18);
  CHECK(p[0].id.size() == 12);
  // Last grid key fastest, seeds innermost.
  CHECK(p[0].values ==
        std::vector<std::pair<std::string, std::string>>{{"engine.max_batch", "8"}, {"corpus.chunk_tokens", "1024"}});
  CHECK(p[1].seed == 2);
  CHECK(p[2].values[1].second == "2048");
  // The id is a function of the assignments, not of their order or of the policies.
  CHECK(point_id({"b=2", "a=1"}) == point_id({"a=1", "b=2"}));
  CHECK(point_id({"a=1", "b=2"}) != point_id({"a=1", "b=3"}));
  CHECK(p[0].id == point_id({"engine.max_batch=8", "corpus.chunk_tokens=1024", "seed=1"}));
  SweepSpec again = parse("name: other\nbase: quickstart.yaml\npolicies: [route]\n"
                          "grid:\n  corpus.chunk_tokens: [1024, 2048, 4096]\n  engine.max_batch: [8, 16, 32]\n"
                          "repetitions: 2\n");
  std::set<std::string> ids2;
  for (const Point& q : expand(again))
    ids2.insert(q.id);
  CHECK(ids2 == ids);
}

TEST_CASE("study: zipped lists advance together and multiply the grid")
{
  SweepSpec s = parse("name: z\nbase: quickstart.yaml\ngrid: {engine.max_batch: [8, 16]}\n"
                      "zip:\n  corpus.chunk_tokens: [1024, 2048, 4096]\n  engine.granularity: [step, layer, step]\n");
  std::vector<Point> p = expand(s);
  REQUIRE(p.size() == 6);
  CHECK(p[1].values[1].second == "2048");
  CHECK(p[1].values[2].second == "layer");
  CHECK(s.keys() == std::vector<std::string>{"engine.max_batch", "corpus.chunk_tokens", "engine.granularity"});
}

TEST_CASE("study: list values are kept as YAML flow text and become --set assignments")
{
  SweepSpec s = parse("name: l\nbase: quickstart.yaml\npolicies: [route, fetch]\n"
                      "grid:\n  instances.holders: [[node1], [node1-2]]\n");
  std::vector<Point> p = expand(s);
  REQUIRE(p.size() == 2);
  CHECK(p[1].values[0].second == "[node1-2]");
  CHECK(p[1].overrides(s) ==
        std::vector<std::string>{"instances.holders=[node1-2]", "seed=1", "policies=[route, fetch]"});
  check_points(s, p); // both load as scenarios
}

TEST_CASE("study: a sweep file with unknown keys, bad swept keys or unequal zips is rejected with positions")
{
  REQUIRE_THROWS_WITH(parse("name: x\nbase: quickstart.yaml\ngird: {}\n"),
                      Catch::Contains("sweep.yaml:3:1: error: gird: unknown key 'gird' (did you mean 'grid'?)"));
  REQUIRE_THROWS_WITH(
      parse("name: x\nbase: quickstart.yaml\ngrid:\n  engine.max_bacth: [1, 2]\n"),
      Catch::Contains("sweep.yaml:4:3: error: grid.engine.max_bacth: not a key of the scenario schema"));
  REQUIRE_THROWS_WITH(parse("name: x\nbase: quickstart.yaml\nzip:\n  engine.max_batch: [1, 2]\n"
                            "  corpus.chunk_tokens: [1024]\n"),
                      Catch::Contains("lists of unequal length"));
  REQUIRE_THROWS_WITH(parse("name: x\nbase: nowhere.yaml\n"), Catch::Contains("no such scenario file"));
  REQUIRE_THROWS_WITH(parse("name: x\nbase: quickstart.yaml\nseeds: [1]\nrepetitions: 2\n"),
                      Catch::Contains("give seeds or repetitions, not both"));
  REQUIRE_THROWS_WITH(parse("name: x\nbase: quickstart.yaml\ngrid:\n  engine.max_batch: []\n"),
                      Catch::Contains("expected a non-empty list of values"));
  REQUIRE_THROWS_WITH(parse("name: x\nbase: quickstart.yaml\ngrid:\n  engine.max_batch: [8, 16]\nlabel: seed\n"),
                      Catch::Contains("sweep.yaml:5:8: error: label: 'seed' is not a key of grid or zip"));
  REQUIRE_THROWS_WITH(parse("name: x\nbase: quickstart.yaml\nensemble: 1\n"), Catch::Contains("error: ensemble:"));
}

TEST_CASE("study: an ensemble sweep's points are other points than its single runs'")
{
  // Their results are other figures (the summary carries the ensemble): the same folder keeps both.
  const std::string grid = "name: e\nbase: quickstart.yaml\ngrid:\n  engine.max_batch: [8, 16]\n";
  const std::vector<Point> single = expand(parse(grid));
  const SweepSpec with = parse(grid + "ensemble: 4\nlabel: engine.max_batch\n");
  const std::vector<Point> ensemble = expand(with);
  REQUIRE(single.size() == ensemble.size());
  CHECK(single[0].id != ensemble[0].id);
  CHECK(ensemble[0].id == point_id({"engine.max_batch=8", "seed=1", "ensemble=4"}));
  CHECK(with.ensemble == 4);
  CHECK(with.label == "engine.max_batch");
}

TEST_CASE("study: a point whose scenario does not load is named before anything runs")
{
  SweepSpec s = parse("name: b\nbase: quickstart.yaml\ngrid:\n  engine.granularity: [step, token]\n");
  std::vector<Point> p = expand(s);
  REQUIRE_THROWS_WITH(check_points(s, p),
                      Catch::Contains("engine.granularity") && Catch::Contains("in point " + p[1].id));
}
