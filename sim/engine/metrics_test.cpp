// The request figures as vLLM's benchmark defines them (TTFT, TPOT, ITL, E2E) and goodput, worked
// by hand on a queue: two requests arrive together on one requester that decodes one at a time, so
// the second waits for the first. Every step of either alone takes the same time s (one routed
// chunk, nothing else on the cluster), which the run reports as its step latency.
#include "sim/engine/test_util.hpp"

#include <map>

using namespace xattn::sim::engine::test;

namespace
{
const std::string kScenario = "name: metrics\n"
                              "model: {name: dsv3, layers: 61, heads: 128, kv_lora_rank: 512, rope_dim: 64}\n"
                              "topology: testbed-ndr200\n"
                              "instances: {requesters: [node0.gpu0], holders: [node0.gpu1]}\n"
                              "corpus: {chunk_tokens: 2048}\n"
                              "workload: {trace: trace.jsonl}\n"
                              "policies: [route]\n"
                              "profile: paper-prototype\n"
                              "engine: {route_protocol: absorbed, max_batch: 1}\n";
// A (2 tokens) and B (3 tokens) at t = 0, each attending the same 2048-token chunk on the holder.
const std::string kTrace = request(0, 0.0, 0, 0, 32, 2) + request(1, 0.0, 1, 0, 32, 3);

struct Row {
  double ttft, tpot, e2e;
  int good;
};
// requests.csv's rows by request id.
std::map<int, Row> rows(const std::filesystem::path& out)
{
  const auto column = [&](const char* name) { return requests_column(out, "route", name); };
  const auto ttft = column("ttft_s"), tpot = column("tpot_s"), e2e = column("e2e_s"), good = column("good");
  std::map<int, Row> out_rows;
  for (const auto& [id, t] : ttft)
    out_rows[static_cast<int>(id)] = {t, tpot.at(id), e2e.at(id), static_cast<int>(good.at(id))};
  return out_rows;
}
} // namespace

TEST_CASE("engine: TTFT, TPOT, ITL and E2E of a queue worked by hand, and goodput against each bound")
{
  std::filesystem::path out;
  const nlohmann::json all = run(kScenario, kTrace, {}, &out);
  const nlohmann::json& p = all["policies"]["route"];
  const double s = p["step_latency_s"]["max"].get<double>();
  REQUIRE(p["step_latency_s"]["p50"].get<double>() == Approx(s).epsilon(1e-9)); // every step alike
  REQUIRE(s > 0);
  // A decodes at 0..s and s..2s; B waits for it, then decodes at 2s..3s, 3s..4s, 4s..5s.
  CHECK(p["ttft_s"]["mean"].get<double>() == Approx((1 + 3) * s / 2).epsilon(1e-9));
  CHECK(p["ttft_s"]["p50"].get<double>() == Approx(s).epsilon(1e-9)); // nearest rank: the lower of two
  CHECK(p["ttft_s"]["max"].get<double>() == Approx(3 * s).epsilon(1e-9));
  CHECK(p["e2e_s"]["mean"].get<double>() == Approx((2 + 5) * s / 2).epsilon(1e-9));
  CHECK(p["e2e_s"]["max"].get<double>() == Approx(5 * s).epsilon(1e-9));
  // TPOT leaves the wait out: each request's tokens came s apart.
  CHECK(p["tpot_s"]["mean"].get<double>() == Approx(s).epsilon(1e-9));
  CHECK(p["tpot_s"]["max"].get<double>() == Approx(s).epsilon(1e-9));
  // Three gaps (one of A, two of B), each s.
  CHECK(p["itl_s"]["mean"].get<double>() == Approx(s).epsilon(1e-9));
  CHECK(p["itl_s"]["max"].get<double>() == Approx(s).epsilon(1e-9));
  const std::map<int, Row> r = rows(out);
  REQUIRE(r.size() == 2);
  CHECK(r.at(1).ttft == Approx(3 * s).epsilon(1e-6));
  CHECK(r.at(1).e2e == Approx(5 * s).epsilon(1e-6));
  CHECK(r.at(0).tpot == Approx(s).epsilon(1e-6));
  // The default bounds (TTFT 2 s, TPOT 80 ms) against a step of s.
  const int good_by_default = (s <= 0.08 && 3 * s <= 2) ? 2 : (s <= 0.08 && s <= 2) ? 1 : 0;
  CHECK(r.at(0).good + r.at(1).good == good_by_default);
  CHECK(p["goodput"]["bounds"]["ttft_s"].get<double>() == 2.0);
  CHECK(p["goodput"]["bounds"]["tpot_s"].get<double>() == Approx(0.08));

  const auto goodput = [&](const std::string& bounds) {
    const nlohmann::json g = run(kScenario, kTrace, {"goodput=" + bounds})["policies"]["route"];
    return std::make_pair(g["goodput"]["share"].get<double>(),
                          g["goodput"]["requests_per_s"].get<double>() * g["simulated_time_s"].get<double>());
  };
  const auto bound = [](const char* metric, double v) {
    return "{metric: " + std::string(metric) + ", max: " + std::to_string(v) + "s}";
  };
  // TTFT within 2s: A only. Per simulated second: one request over the run's 5s.
  const auto [share, good] = goodput("[" + bound("ttft_s", 2 * s) + "]");
  CHECK(share == 0.5);
  CHECK(good == Approx(1.0).epsilon(1e-12));
  // E2E within 5s: both; within 4s: A only.
  CHECK(goodput("[" + bound("e2e_s", 5.0001 * s) + "]").first == 1.0);
  CHECK(goodput("[" + bound("e2e_s", 4 * s) + "]").first == 0.5);
  // Every bound must hold: TPOT below s fails both, whatever the others.
  CHECK(goodput("[" + bound("e2e_s", 6 * s) + ", " + bound("tpot_s", 0.99 * s) + "]").first == 0.0);
  // No bound: every request that made a token is good.
  const auto [all_share, all_good] = goodput("[]");
  CHECK(all_share == 1.0);
  CHECK(all_good == Approx(2.0).epsilon(1e-12));
}
