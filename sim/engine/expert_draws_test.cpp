// Expert draws (expert_draws.hpp) against what each mode implies, worked independently: totals,
// distinct experts per token, the popularity law, and EPLB's balance.
#include "sim/engine/expert_draws.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace xattn;
using namespace xattn::sim::engine;

namespace
{
sim::ModelSpec moe(int experts, int per_token)
{
  sim::ModelSpec m;
  m.experts = experts;
  m.experts_per_token = per_token;
  m.expert_intermediate = 2048;
  m.layers = 4;
  return m;
}
// Records the (pairs, distinct experts) each GPU's experts were priced on, per layer.
struct Recorder {
  std::vector<std::pair<double, double>> calls;
  double operator()(double pairs, double experts)
  {
    calls.emplace_back(pairs, experts);
    return pairs;
  }
};
} // namespace

TEST_CASE("expert draws: every pair is counted once, per token and layer, and a token's experts are distinct")
{
  const sim::ModelSpec m = moe(16, 16); // every token picks every expert: exactly one pair per expert
  ExpertDraws draws(m, 4, {ExpertRouting::kUniform, 1.0, 0}, 7, 0);
  Recorder rec;
  const ExpertRound round = draws.draw({3, 0, 5, 1}, 2, std::ref(rec));
  // GPU r sends each GPU (itself included) 4 experts' pairs per token and layer.
  for (int r = 0; r < 4; ++r)
    for (int t = 0; t < 4; ++t)
      CHECK(round.pairs[r * 4 + t] == std::vector<int>{3, 0, 5, 1}[r] * 4 * 2);
  // Per layer each GPU received 9 tokens x 4 experts and hit all 4 of its experts.
  REQUIRE(rec.calls.size() == 8);
  for (const auto& [pairs, experts] : rec.calls) {
    CHECK(pairs == 36);
    CHECK(experts == 4);
  }
  for (int t = 0; t < 4; ++t)
    CHECK(round.work[t] == 72); // the recorder's time: pairs, summed over the 2 layers
}

TEST_CASE("expert draws: uniform picks spread evenly, zipf follows 1 / rank^skew")
{
  const sim::ModelSpec m = moe(64, 4);
  ExpertDraws uniform(m, 8, {ExpertRouting::kUniform, 1.0, 0}, 3, 0);
  const ExpertRound u = uniform.draw(std::vector<int>(8, 500), 10, [](double p, double) { return p; });
  // 8 GPUs x 500 tokens x 4 experts x 10 layers = 160,000 pairs, 20,000 a GPU in expectation.
  for (int t = 0; t < 8; ++t) {
    double received = 0;
    for (int r = 0; r < 8; ++r)
      received += u.pairs[r * 8 + t];
    CHECK(received == Approx(20000).epsilon(0.03));
  }
  ExpertDraws zipf(m, 8, {ExpertRouting::kZipf, 1.2, 0}, 3, 0);
  std::vector<double> p(64);
  for (int e = 0; e < 64; ++e)
    p[e] = zipf.popularity(e);
  std::sort(p.rbegin(), p.rend());
  CHECK(std::accumulate(p.begin(), p.end(), 0.0) == Approx(1.0));
  CHECK(p[0] / p[1] == Approx(std::pow(2.0, 1.2)));
  CHECK(p[0] / p[63] == Approx(std::pow(64.0, 1.2)));
  // Every group of a run shuffles the experts alike; their draws are their own.
  ExpertDraws other(m, 8, {ExpertRouting::kZipf, 1.2, 0}, 3, 5);
  for (int e = 0; e < 64; ++e)
    CHECK(other.popularity(e) == zipf.popularity(e));
}

TEST_CASE("expert draws: balanced placement spreads a skewed popularity's load over the GPUs")
{
  const sim::ModelSpec m = moe(64, 1); // one expert a token: the picks follow the popularity itself
  // Each GPU's expected share of the picks, from the popularity and where each expert's copies are.
  auto expected = [](const ExpertDraws& d, int ep) {
    std::vector<double> load(ep, 0.0);
    int slots = 0;
    for (int e = 0; e < 64; ++e)
      for (int s : d.copies(e)) {
        load[d.gpu_of_slot(s)] += d.popularity(e) / static_cast<double>(d.copies(e).size());
        ++slots;
      }
    CHECK(slots == d.slots()); // every slot holds a copy of one expert
    return load;
  };
  ExpertDraws zipf(m, 8, {ExpertRouting::kZipf, 1.2, 0}, 3, 0);
  ExpertDraws balanced(m, 8, {ExpertRouting::kBalanced, 1.2, 8}, 3, 0);
  REQUIRE(balanced.slots() == 72);
  std::vector<int> per_gpu(8, 0);
  for (int s = 0; s < 72; ++s)
    ++per_gpu[balanced.gpu_of_slot(s)];
  CHECK(per_gpu == std::vector<int>(8, 9));
  const std::vector<double> skewed = expected(zipf, 8), even = expected(balanced, 8);
  CHECK(*std::max_element(skewed.begin(), skewed.end()) * 8 > 1.5); // the contiguous map's hottest GPU
  CHECK(*std::max_element(even.begin(), even.end()) * 8 < 1.1);     // EPLB's copies bring it within 10%
  // The draws land where the map says: each GPU's received picks against its expected share.
  const ExpertRound b = balanced.draw(std::vector<int>(8, 4000), 4, [](double p, double) { return p; });
  for (int t = 0; t < 8; ++t) {
    double received = 0;
    for (int r = 0; r < 8; ++r)
      received += b.pairs[r * 8 + t];
    CHECK(received == Approx(even[t] * 8 * 4000 * 4).epsilon(0.03));
  }
}
