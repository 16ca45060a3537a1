// The serving validation (`xattn validate --serving`): its table's rows, and a small decode point
// checked against what its parts must add up to and against the HBM bound of its attention.
#include "validate/serving.hpp"

#include "calibrate/profile.hpp"
#include "sim/core/error.hpp"
#include "sim/engine/scenario.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

using namespace xattn;
using namespace xattn::validate;
using Catch::Matchers::Contains;

namespace
{
std::string table(const std::string& rows)
{
  const auto path = std::filesystem::temp_directory_path() / "xattn_serving_test.csv";
  std::ofstream(path) << "# serving rows\n"
                         "phase,ep,tp,gpus,tokens_per_gpu,requests_per_gpu,context_tokens,tokens_per_s_per_gpu\n"
                      << rows;
  return path.string();
}

std::string error_of(const std::string& rows)
{
  try {
    read_serving_measurements(table(rows));
  } catch (const core::InputError& e) {
    return e.what();
  }
  return "";
}
} // namespace

TEST_CASE("validate: the serving table's rows read as DeepSeek's profile points")
{
  const auto rows = read_serving_measurements(table("prefill,32,1,32,16384,,4096,7839\n"
                                                    "decode,128,1,128,,128,4096,2324\n"));
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].phase == "prefill");
  CHECK(rows[0].tokens_per_gpu == 16384);
  CHECK(rows[0].requests_per_gpu == 0);
  CHECK(rows[1].requests_per_gpu == 128);
  CHECK(rows[1].tokens_per_s_per_gpu == 2324);
  CHECK(rows[1].line == 4);
}

TEST_CASE("validate: a serving row that cannot be rebuilt is bad input at its cell")
{
  CHECK_THAT(error_of("mixed,8,1,8,,8,1024,100\n"), Contains(":3:") && Contains("neither decode nor prefill"));
  CHECK_THAT(error_of("decode,8,2,8,,8,1024,100\n"), Contains("tp 1"));
  CHECK_THAT(error_of("decode,16,1,8,,8,1024,100\n"), Contains("EP 16 is not every GPU"));
  CHECK_THAT(error_of("decode,12,1,12,,8,1024,100\n"), Contains("whole nodes"));
  CHECK_THAT(error_of("decode,8,1,8,,,1024,100\n"), Contains("requests_per_gpu: '' is not a whole number of requests"));
  CHECK_THAT(error_of("prefill,8,1,8,5000,,4096,100\n"), Contains("whole prompts"));
  CHECK_THAT(error_of("decode,8,1,8,,8,1000,100\n"), Contains("64-token blocks"));
  CHECK_THAT(error_of("decode,8,1,8,,8,1024,0\n"), Contains("positive"));
}

TEST_CASE("validate: a decode point's throughput is its batch over its step, whose parts add up")
{
  // EP 16 on two nodes, 16 requests of 1,024 tokens on each GPU.
  const auto rows = read_serving_measurements(table("decode,16,1,16,,16,1024,1000\n"));
  // DeepEP's pure-RDMA rows at the point's EP are set beside its dispatch and combine; the other
  // table's and other EPs' are not.
  const std::vector<EpMeasurement> deepep{{"pure-rdma", "dispatch", 16, 100e-6, 2},
                                          {"pure-rdma", "combine", 16, 200e-6, 3},
                                          {"nvlink-in-node", "dispatch", 16, 1e-6, 4},
                                          {"pure-rdma", "dispatch", 32, 1e-6, 5}};
  const auto keep = std::filesystem::temp_directory_path() / "xattn_serving_keep";
  std::filesystem::remove_all(keep);
  const ServingValidation v = validate_serving(rows, kServingProfile, kServingTopology, deepep, keep.string());
  REQUIRE(v.points.size() == 1);
  CHECK(v.invariants_ok);
  const ServingPoint& p = v.points[0];
  CHECK(p.layers == 61); // DeepSeek-V3: 61 layers, the first 3 dense
  CHECK(p.moe_layers == 58);
  const ServingSplit& s = p.one.per_layer;
  // Every step of every request alike: the batch's tokens over one step of all 61 layers.
  CHECK(p.one.tokens_per_s_per_gpu == Approx(16 / (61 * s.step)).epsilon(1e-9));
  CHECK(61 * s.step == Approx(61 * (s.attention + s.gemm) + 58 * s.moe).epsilon(1e-9));
  CHECK(s.moe > s.dispatch + s.combine);
  // Attention reads each request's latent of (512 + 64) BF16 values per token and layer: no
  // faster than H100/H800 HBM3's 3.35 TB/s peak.
  CHECK(s.attention >= 16 * 1024 * 576 * 2.0 / 3.35e12);
  CHECK(p.one_error() == Approx(p.one.tokens_per_s_per_gpu / 1000 - 1));
  CHECK(p.deepep_dispatch_s == 100e-6);
  CHECK(p.deepep_combine_s == 200e-6);
  CHECK(p.dispatch_error() == Approx(s.dispatch / 100e-6 - 1));
  CHECK(p.combine_error() == Approx(s.combine / 200e-6 - 1));
  // Two micro-batches: each reads the weights again (8 rows each: the GEMMs are memory-bound, so
  // nearly twice the time; the experts' too), and each runs its own attention kernel over half the
  // requests: the same bytes, one launch more.
  const ServingSplit& o = p.two.per_layer;
  CHECK(o.gemm == Approx(2 * s.gemm).epsilon(0.1));
  const double launch = calibrate::load_profile(kServingProfile).gpu.launch.value();
  CHECK(o.attention == Approx(s.attention + launch).epsilon(1e-4));
  CHECK(p.error() == Approx(p.two.tokens_per_s_per_gpu / 1000 - 1));
  // The kept scenarios, the shipped decode scenario with the row's sizes, read again as they ran.
  for (const char* run : {"decode-ep16-mb1", "decode-ep16-mb2"}) {
    INFO(run);
    CHECK(std::filesystem::exists(keep / ("out-" + std::string(run)) / "summary.json"));
    const sim::engine::Scenario sc = sim::engine::load_scenario((keep / (std::string(run) + ".yaml")).string());
    CHECK(sc.micro_batches == (std::string(run).back() == '2' ? 2 : 1));
    CHECK(sc.requester_instances() == 16);
    CHECK(sc.ep == 16);
    REQUIRE(sc.workload.batch);
    CHECK(sc.workload.batch->requests_per_instance == 16);
    CHECK(sc.workload.batch->context_tokens == 1024);
    CHECK(sc.workload.batch->requests() == 256);
  }
  std::filesystem::remove_all(keep);
}

TEST_CASE("validate: a decode point over a shared corpus runs each policy, each attending off its GPU its own way")
{
  // EP 16, 16 requests of 1,024 tokens a GPU, their contexts drawn from 16 chunks spread over the
  // 16 GPUs: most of them on another GPU.
  const auto rows = read_serving_measurements(table("decode,16,1,16,,16,1024,1000\n"));
  const auto keep = std::filesystem::temp_directory_path() / "xattn_serving_shared";
  std::filesystem::remove_all(keep);
  const ServingValidation v =
      validate_serving(rows, kServingProfile, kServingTopology, {}, keep.string(), 16 * 1024, 3);
  REQUIRE(v.points.size() == 1);
  CHECK(v.invariants_ok);
  const ServingPoint& p = v.points[0];
  CHECK(p.shared_chunks == 16);
  CHECK(p.shared_members == 3);
  REQUIRE(p.shared.size() == 4);
  CHECK(p.shared[0].policy == "route");
  CHECK(p.shared[1].policy == "fetch");
  CHECK(p.shared[2].policy == "local");
  CHECK(p.shared[3].policy == "predicate");
  const SharedRun &route = p.shared[0], &fetch = p.shared[1], &local = p.shared[2];
  CHECK(route.route > 0);
  CHECK(route.fetch + route.local + route.cached == 0);
  CHECK(fetch.fetch > 0);
  CHECK(fetch.route + fetch.local == 0);
  CHECK(local.local > 0);
  CHECK(local.route + local.fetch == 0);
  // Attending off the GPU costs something: no policy beats every context on its own GPU (the
  // study's configuration: one micro-batch). Routing pays at every step; the 16 chunks fit every
  // cache, so fetching and re-prefilling pay at the first token only, which the TPOT leaves out.
  for (const SharedRun& r : p.shared) {
    INFO(r.policy);
    CHECK(r.tokens_per_s_per_gpu <= p.one.tokens_per_s_per_gpu * (1 + 1e-12));
  }
  CHECK(route.tokens_per_s_per_gpu < p.one.tokens_per_s_per_gpu);
  CHECK(fetch.tpot_s == Approx(1 / (p.one.tokens_per_s_per_gpu / 16)));
  // Over the ensemble the same holds member by member, each against the baseline's member with the
  // same profile draw: fetching keeps all of it in every member (a member paired with another
  // draw would not), routing loses some in every member, and the draws spread the throughput.
  CHECK(fetch.share.p5 == Approx(1));
  CHECK(fetch.share.p95 == Approx(1));
  CHECK(route.share.p95 < 1);
  CHECK(route.tokens.p5 < route.tokens.p95);
  CHECK_THAT(serving_report(v, 0.15), Contains("ranges over 3 profile draws"));
  // Routing, every step alike: the batch over the TPOT is the engine's own count, every decoded
  // token over the run's simulated time and its 16 GPUs.
  std::ifstream in(keep / "out-decode-ep16-shared" / "summary.json");
  const nlohmann::json summary = nlohmann::json::parse(in);
  CHECK(route.tokens_per_s_per_gpu ==
        Approx(summary["policies"]["route"]["output_tokens_per_s_per_gpu"].get<double>()).epsilon(0.01));
  std::filesystem::remove_all(keep);
}
