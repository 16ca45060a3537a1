#include "sim/engine/expert_draws.hpp"

#include "sim/core/check.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace xattn::sim::engine
{

namespace
{
// Mixed into the run's seed: the draws' streams are their own, apart from the workload's.
constexpr std::uint64_t kDrawsSalt = 0xE8E8E8E8ULL;
} // namespace

ExpertRouting expert_routing_from(const std::string& name)
{
  for (const auto& [n, mode] : kExpertRoutings)
    if (name == n) return mode;
  XATTN_CHECK(false, "an expert routing the schema lists: " + name);
  return ExpertRouting::kExpected;
}

const std::string& expert_routing_names()
{
  static const std::string names = core::choices_of(kExpertRoutings);
  return names;
}

ExpertDraws::ExpertDraws(const ModelSpec& m, int ep, const ExpertRoutingConfig& c, std::uint64_t seed,
                         std::uint64_t stream)
    : per_token_(m.experts_per_token), ep_(ep), rng_(workloads::Rng::derive(seed ^ kDrawsSalt, stream))
{
  const int experts = m.experts;
  const int redundant = c.mode == ExpertRouting::kBalanced ? c.redundant_experts : 0;
  XATTN_CHECK(m.moe() && ep > 1 && (experts + redundant) % ep == 0 && m.experts_per_token <= experts,
              "expert draws need routed experts that split over the group");
  // Popularity: uniform, or 1 / rank^skew over a seeded shuffle of the experts.
  popularity_.assign(experts, 1.0 / experts);
  if (c.mode == ExpertRouting::kZipf || c.mode == ExpertRouting::kBalanced) {
    // The same shuffle for every group of the run (popularity is the model's and the workload's).
    workloads::Rng shuffle = workloads::Rng::derive(seed ^ kDrawsSalt, ~std::uint64_t{0});
    std::vector<int> rank(experts);
    std::iota(rank.begin(), rank.end(), 1);
    for (int i = experts - 1; i > 0; --i) // Fisher-Yates
      std::swap(rank[i], rank[shuffle.below(static_cast<std::uint64_t>(i) + 1)]);
    double sum = 0;
    for (int e = 0; e < experts; ++e)
      sum += popularity_[e] = std::pow(static_cast<double>(rank[e]), -c.skew);
    for (double& p : popularity_)
      p /= sum;
  }
  // Walker's alias table (Vose's construction): one uniform draw and one comparison per pick.
  alias_prob_.assign(experts, 0.0);
  alias_.assign(experts, 0);
  std::vector<int> small, large;
  std::vector<double> scaled(experts);
  for (int e = 0; e < experts; ++e) {
    scaled[e] = popularity_[e] * experts;
    (scaled[e] < 1.0 ? small : large).push_back(e);
  }
  while (!small.empty() && !large.empty()) {
    const int s = small.back(), l = large.back();
    small.pop_back();
    alias_prob_[s] = scaled[s];
    alias_[s] = l;
    scaled[l] -= 1.0 - scaled[s];
    if (scaled[l] < 1.0) {
      large.pop_back();
      small.push_back(l);
    }
  }
  for (int e : small)
    alias_prob_[e] = 1.0;
  for (int e : large)
    alias_prob_[e] = 1.0;
  // Placement: contiguous, or EPLB's replicate-then-pack.
  const int slots = experts + redundant, per_gpu = slots / ep;
  copies_.assign(experts, {});
  slot_gpu_.assign(slots, 0);
  if (c.mode != ExpertRouting::kBalanced) {
    for (int e = 0; e < experts; ++e) {
      copies_[e] = {e};
      slot_gpu_[e] = e / per_gpu;
    }
  } else {
    std::vector<int> count(experts, 1);
    for (int k = 0; k < redundant; ++k) {
      int hottest = 0;
      for (int e = 1; e < experts; ++e)
        if (popularity_[e] / count[e] > popularity_[hottest] / count[hottest]) hottest = e;
      ++count[hottest];
    }
    std::vector<int> expert_of;
    for (int e = 0; e < experts; ++e)
      expert_of.insert(expert_of.end(), count[e], e);
    std::stable_sort(expert_of.begin(), expert_of.end(),
                     [&](int a, int b) { return popularity_[a] / count[a] > popularity_[b] / count[b]; });
    std::vector<double> load(ep, 0.0);
    std::vector<int> used(ep, 0);
    for (int s = 0; s < slots; ++s) {
      const int e = expert_of[s];
      int best = -1;
      for (int t = 0; t < ep; ++t)
        if (used[t] < per_gpu && (best < 0 || load[t] < load[best])) best = t;
      ++used[best];
      load[best] += popularity_[e] / count[e];
      slot_gpu_[s] = best;
      copies_[e].push_back(s);
    }
  }
  hit_.assign(slots, 0);
}

int ExpertDraws::pick_expert()
{
  const auto e = static_cast<int>(rng_.below(alias_.size()));
  return rng_.uniform() < alias_prob_[e] ? e : alias_[e];
}

} // namespace xattn::sim::engine
