// Which experts each token picks (instances.expert_routing), drawn per token and MoE layer from a
// seeded stream, and where the chosen copy of each expert lives: the per-GPU-pair token counts an
// expert-parallel all-to-all carries, and each GPU's expert work. Without draws (`expected`, the
// default) every GPU sends each peer its expected share (moe.cpp). Internal to sim/engine.
//
// - uniform: every expert equally likely (DeepEP's benchmarks route so); GPU t holds experts
//   [t E/ep, (t+1) E/ep).
// - zipf: expert popularity falls as 1 / rank^skew over a seeded shuffle of the experts (hot experts
//   scattered), same placement: the GPUs holding hot experts receive more.
// - balanced: the same popularity, placed as DeepSeek's EPLB places it: `redundant_experts` extra
//   copies go one at a time to the expert with the most expected load per copy, then copies are
//   packed onto GPUs (equal slots each), heaviest first, onto the least loaded GPU with a free slot;
//   a token picks one copy of its expert at random.
#pragma once

#include "sim/model/model.hpp"
#include "workloads/rng.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace xattn::sim::engine
{

enum class ExpertRouting { kExpected, kUniform, kZipf, kBalanced };
/// The modes by their names in the scenario (instances.expert_routing).
inline constexpr std::array<std::pair<const char*, ExpertRouting>, 4> kExpertRoutings{
    {{"expected", ExpertRouting::kExpected},
     {"uniform", ExpertRouting::kUniform},
     {"zipf", ExpertRouting::kZipf},
     {"balanced", ExpertRouting::kBalanced}}};

struct ExpertRoutingConfig {
  ExpertRouting mode = ExpertRouting::kExpected;
  double skew = 1.0;         ///< zipf and balanced: the popularity's exponent
  int redundant_experts = 0; ///< balanced: extra copies of the hottest experts (each GPU holds (E + R) / ep)
};

/// The mode named `name` (one of kExpertRoutings); the names joined by "|", for the schema's choices.
ExpertRouting expert_routing_from(const std::string& name);
const std::string& expert_routing_names();

/// One MoE round of one expert-parallel group, drawn.
struct ExpertRound {
  std::vector<double> pairs; ///< [r * ep + t]: token-expert pairs GPU r's tokens send to GPU t, all layers
  std::vector<double> work;  ///< by GPU: its experts' time over the round's layers, s
};

class ExpertDraws
{
public:
  /// Draws from stream `stream` of the run's `seed`. REQUIRES: m.moe(), ep > 1,
  /// (experts + redundant_experts) % ep == 0.
  ExpertDraws(const ModelSpec& m, int ep, const ExpertRoutingConfig& c, std::uint64_t seed, std::uint64_t stream);
  /// Draws `layers` MoE layers for the group's GPUs, `tokens[r]` tokens each; the experts' time per
  /// GPU and layer by the roofline over the pairs it received and the distinct experts they hit
  /// (`gemm(pairs, experts)`), summed over the layers.
  template <class Gemm>
  ExpertRound draw(const std::vector<int>& tokens, int layers, Gemm&& gemm);
  /// The GPU that holds slot `s`, and the slots of expert `e`'s copies (for tests).
  int gpu_of_slot(int s) const { return slot_gpu_[s]; }
  const std::vector<int>& copies(int e) const { return copies_[e]; }
  int slots() const { return static_cast<int>(slot_gpu_.size()); }
  /// P(a token's first pick is expert e) (for tests).
  double popularity(int e) const { return popularity_[e]; }

private:
  int pick_expert();
  int per_token_; ///< experts each token picks
  int ep_;
  workloads::Rng rng_;
  std::vector<double> popularity_;          ///< by expert
  std::vector<double> alias_prob_;          ///< Walker's alias table over the experts
  std::vector<int> alias_;                  ///< its aliases
  std::vector<std::vector<int>> copies_;    ///< by expert: its slots
  std::vector<int> slot_gpu_;               ///< by slot: its GPU
  std::vector<int> picked_;                 ///< scratch: one token's experts
  std::vector<std::uint32_t> hit_;          ///< scratch: by slot, the layer that last hit it (+1)
  std::vector<double> received_, distinct_; ///< scratch: by GPU, this layer's pairs and experts hit
};

template <class Gemm>
ExpertRound ExpertDraws::draw(const std::vector<int>& tokens, int layers, Gemm&& gemm)
{
  ExpertRound out;
  out.pairs.assign(static_cast<std::size_t>(ep_) * ep_, 0.0);
  out.work.assign(ep_, 0.0);
  std::fill(hit_.begin(), hit_.end(), 0);
  for (int l = 0; l < layers; ++l) {
    received_.assign(ep_, 0.0);
    distinct_.assign(ep_, 0.0);
    const auto stamp = static_cast<std::uint32_t>(l + 1);
    for (int r = 0; r < ep_; ++r)
      for (int k = 0; k < tokens[r]; ++k) {
        picked_.clear();
        while (static_cast<int>(picked_.size()) < per_token_) { // distinct experts per token
          const int e = pick_expert();
          bool seen = false;
          for (int p : picked_)
            seen = seen || p == e;
          if (seen) continue;
          picked_.push_back(e);
          const std::vector<int>& c = copies_[e];
          const int slot = c.size() == 1 ? c[0] : c[rng_.below(c.size())];
          const int t = slot_gpu_[slot];
          out.pairs[static_cast<std::size_t>(r) * ep_ + t] += 1;
          received_[t] += 1;
          if (hit_[slot] != stamp) {
            hit_[slot] = stamp;
            distinct_[t] += 1;
          }
        }
      }
    for (int t = 0; t < ep_; ++t)
      out.work[t] += gemm(received_[t], distinct_[t]);
  }
  return out;
}

} // namespace xattn::sim::engine
