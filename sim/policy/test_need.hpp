// For policy tests: a need whose prices, load and session forecast a test sets by hand, with no
// other reuse and nothing of an engine behind it; and the one-chunk scenario the engine-level
// policy tests run.
#pragma once

#include "sim/policy/policy.hpp"

#include <cstdint>
#include <string>

namespace xattn::sim::policy::test
{

class PricedNeed final : public Need
{
public:
  PricedNeed(int inst, std::uint64_t chunk, const CallCost& prices, const Load& load = {}, double session_reuse = 0)
      : inst_(inst), chunk_(chunk), prices_(prices), load_(load), session_reuse_(session_reuse)
  {
  }
  int instance() const override { return inst_; }
  std::uint64_t chunk() const override { return chunk_; }
  CallCost price() const override { return prices_; }
  double expected_reuse() const override { return 0; }
  double session_reuse() const override { return session_reuse_; }
  double true_reuse() const override { return 0; }
  Load load() const override { return load_; }

private:
  int inst_;
  std::uint64_t chunk_;
  CallCost prices_;
  Load load_;
  double session_reuse_;
};

/// One requester and one holder across the spine, one 2048-token chunk of a trace.jsonl beside the
/// scenario, the paper's prototype, fetches that block the step; `policies:` left to the test.
inline std::string spine_chunk_scenario(const std::string& name)
{
  return "name: " + name +
         "\n"
         "profile: paper-prototype\n"
         "engine: {fetch: blocking}\n"
         "model: {name: dsv3, layers: 61, heads: 128, kv_lora_rank: 512, rope_dim: 64}\n"
         "topology: testbed-ndr200\n"
         "instances: {requesters: [node0.gpu0], holders: [node2.gpu3]}\n"
         "corpus: {chunk_tokens: 2048}\n"
         "workload: {trace: trace.jsonl}\n";
}

} // namespace xattn::sim::policy::test
