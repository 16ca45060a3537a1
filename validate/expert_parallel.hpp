// `xattn validate --expert-parallel FILE`: the engine's MoE dispatch and combine against DeepEP's
// published low-latency kernel latencies (validate/README.md, "Expert parallelism"). Each
// configuration (table, EP size) is rebuilt as a scenario of the full step: EP ranks on the
// topology, 128 tokens per GPU, one MoE layer of DeepSeek-V3's dimensions (hidden 7168, 256
// experts, top-8), FP8 dispatch and BF16 combine; the engine's per-GPU dispatch and combine times
// (summary ep_dispatch_s, ep_combine_s) are compared with the measured latency, twice: with every
// GPU sending each peer its expected share, and with each token's experts drawn (instances.expert_routing
// uniform, as DeepEP's benchmark draws them), where the most loaded GPU sets the layer's time.
#pragma once

#include <string>
#include <vector>

namespace xattn::validate
{

/// One measured latency: `table` pure-rdma (every byte over the NICs) or nvlink-in-node (NVLink
/// between the GPUs of a node), `op` dispatch or combine.
/// The machine of DeepEP's measurements, the validation's defaults.
inline constexpr const char* kEpProfile = "h800-cx7-ibgda";
inline constexpr const char* kEpTopology = "h800-cx7-256";

struct EpMeasurement {
  std::string table, op;
  int ep = 0;
  double latency_s = 0;
  int line = 0; ///< in the file, for messages
};
/// Reads DeepEP's table (`#` comments, header with table, op, ep, latency_us). Throws
/// core::InputError at the file, line and column of a bad row.
std::vector<EpMeasurement> read_ep_measurements(const std::string& path);

struct EpPoint {
  EpMeasurement measured;
  double simulated_s = 0; ///< every GPU sending each peer its expected share (expert_routing: expected)
  double drawn_s = 0;     ///< each token's experts drawn uniformly, as DeepEP's benchmark routes (uniform)
  double error() const { return simulated_s / measured.latency_s - 1; }
  double drawn_error() const { return drawn_s / measured.latency_s - 1; }
  bool calibration = false; ///< one of the EP 8 points the profile's rates were fitted on
};
struct EpValidation {
  std::vector<EpPoint> points;
  std::string profile, topology;
  bool invariants_ok = true;
};
/// Runs every configuration of `data` through the engine on `topology` with `profile`.
EpValidation validate_expert_parallel(const std::vector<EpMeasurement>& data, const std::string& profile,
                                      const std::string& topology);
/// Per table and op, for the expected shares and the draws: MAPE and worst point; then every point.
std::string ep_report(const EpValidation& v, double max_error);

} // namespace xattn::validate
