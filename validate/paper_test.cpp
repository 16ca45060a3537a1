#include "validate/paper.hpp"

#include "sim/core/error.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>

using namespace xattn;
using namespace xattn::validate;

TEST_CASE("validate: the paper's reference data lists every claim with its kind, range and source")
{
  Reference ref = load_reference(XATTN_SOURCE_DIR "/validate/reference/paper.yaml");
  CHECK_THAT(ref.source, Catch::Contains("2606.01502"));
  std::set<std::string> experiments, kinds, ids;
  for (const Claim& c : ref.claims) {
    experiments.insert(c.experiment);
    kinds.insert(c.kind);
    CHECK(ids.insert(c.id).second); // ids are unique
    CHECK_FALSE(c.published.empty());
    CHECK_THAT(c.source, Catch::Contains("2606.01502"));
  }
  CHECK(kinds == std::set<std::string>{"emergent", "input"});
  // The paper's emergent claims, at least these.
  for (const char* e : {"round-trip", "route-fetch-ratio", "wire-bytes-saved", "fabric-ratio", "congestion-knee",
                        "compute-elbow", "copy-elbow", "proxy-reduction", "gather-growth", "break-even"})
    CHECK(experiments.count(e) == 1);
}

TEST_CASE("validate: a reference file with an unknown key or experiment is bad input")
{
  const auto p = std::filesystem::temp_directory_path() / "xattn-paper-bad.yaml";
  std::ofstream(p) << "source: x\nclaims:\n  - id: a\n    claim: c\n    kind: emergent\n    published: p\n"
                      "    min: 1\n    unit: x\n    experiment: teleport\n    source: s\n    colour: red\n";
  REQUIRE_THROWS_WITH(load_reference(p.string()), Catch::Contains("experiment: unknown experiment 'teleport'") &&
                                                      Catch::Contains("colour: unknown key"));
  std::filesystem::remove(p);
}

TEST_CASE("validate: the wire-bytes claim comes out of the engine as the paper's derivation")
{
  MicroRunner run("h100-ndr200-ibgda");
  Claim c;
  c.id = "w", c.unit = "%", c.experiment = "wire-bytes-saved";
  c.config = {{"fabric", "ib-spine"}, {"mq", "256"}, {"ct", "2048"}};
  // The paper's ≥ 76%, derived: 1 - 558,080 / 2,359,296 (both legs of M_q = 256 rows against c_t = 2048 bf16 tokens).
  CHECK(run_experiment(c, run).value == Approx(100 * (1 - 558080.0 / 2359296.0)));
}

TEST_CASE("validate: claims are judged against their range and printed by kind")
{
  Reference ref;
  Claim in;
  in.id = "p", in.claim = "per-fetch reduction", in.kind = "input", in.published = "40%", in.unit = "%";
  in.experiment = "proxy-reduction", in.config = {{"fabric", "ib-spine"}, {"bytes", "2048"}}, in.min = 90;
  Claim em = in;
  em.id = "q", em.kind = "emergent", em.claim = "same, wide", em.min = 0, em.max = 100;
  ref.claims = {in, em};
  MicroRunner run("h100-ndr200-ibgda");
  auto r = check_paper(ref, run);
  CHECK_FALSE(r[0].holds); // 40% is not >= 90%
  CHECK(r[1].holds);
  const std::string t = paper_table(r, false);
  CHECK(t.find("EMERGENT") < t.find("INPUT"));
  CHECK_THAT(t, Catch::Contains("1 of 1 emergent claims hold; 2 claims in all, 1 do not hold"));
}
