// `xattn validate --handoff FILE`: the disaggregated prefill's KV hand-off against Mooncake's
// published vLLM prefill/decode transfers (validate/README.md, "KV hand-off"). Each prompt length
// is rebuilt as a scenario of one request in 1P1D: Qwen3-8B, one prefill instance of tp 8 on one
// node and one decode instance of tp 8 on the other, the whole prompt prefilled (prefix caching
// off) and its KV handed off after the prefill, rank r to rank r, each over its own NIC; the
// engine's hand-off bytes (summary prefill.handoff_bytes) and its wait from the prefill's end to
// the last byte landed (prefill.handoff_wait_s) are compared with the table's KV size and
// transfer time.
#pragma once

#include <cmath>
#include <string>
#include <vector>

namespace xattn::validate
{

/// One measured hand-off: the prompt's length, the KV size as printed (Mooncake prints binary
/// units under decimal names: "20MB" is 20 MiB, "1.13GB" 1.13 GiB) and the transfer time.
struct HandoffMeasurement {
  int prompt_tokens = 0;
  double kv_bytes = 0; ///< 0: the row gives no size
  double kv_ulp = 0;   ///< a unit in the last printed digit of the size, in bytes
  std::string kv_text; ///< as printed
  double transfer_s = 0;
  int line = 0;
};
/// Reads the table (`#` comments, header with prompt_tokens, transfer_ms and optionally kv_size).
/// Throws core::InputError at the file, line and column of a bad row.
std::vector<HandoffMeasurement> read_handoff_measurements(const std::string& path);

struct HandoffPoint {
  HandoffMeasurement measured;
  double bytes = 0;      ///< the engine's hand-off, every rank's share
  double transfer_s = 0; ///< the engine's wait from the prefill's end to the KV landed
  bool calibration = false;
  double error() const { return transfer_s / measured.transfer_s - 1; }
  double size_error() const { return measured.kv_bytes > 0 ? bytes / measured.kv_bytes - 1 : 0; }
  /// The simulated size printed as the table prints it is the table's: within half a unit of its
  /// last digit.
  bool size_matches() const
  {
    return measured.kv_bytes <= 0 || std::abs(bytes - measured.kv_bytes) <= measured.kv_ulp / 2;
  }
};
/// The machine of Mooncake's measurements, the validation's defaults.
inline constexpr const char* kHandoffProfile = "h800-roce-mooncake";
inline constexpr const char* kHandoffTopology = "h800-roce-2";
/// The prompt length the profile's kv_transfer costs were calibrated on
/// (calibrate/profiles/h800-roce-mooncake.yaml): the least bandwidth-bound row.
inline constexpr int kCalibrationPrompt = 128;
struct HandoffValidation {
  std::vector<HandoffPoint> points;
  std::string profile, topology;
  bool invariants_ok = true;
  int block_tokens = 0; ///< what a hand-off moves whole (prefill.block_tokens as the scenarios read it)
};
HandoffValidation validate_handoff(const std::vector<HandoffMeasurement>& data, const std::string& profile,
                                   const std::string& topology);
/// MAPE and worst point of the times, the sizes' check, then every point.
std::string handoff_report(const HandoffValidation& v, double max_error);

} // namespace xattn::validate
