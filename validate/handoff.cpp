#include "validate/handoff.hpp"

#include "sim/core/error.hpp"
#include "sim/engine/driver.hpp"
#include "validate/table.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>

namespace xattn::validate
{
namespace fs = std::filesystem;
using nlohmann::json;

namespace
{
constexpr int kTp = 8;           // tensor parallelism on each side, one instance a node
constexpr int kBlockTokens = 16; // the trace's blocks (the hand-off's are prefill.block_tokens, vLLM's by default)

// "20MB", "1.13GB": a number and a binary unit under its decimal name, as Mooncake prints sizes.
// Returns the bytes and one unit of the last printed digit; false when the cell is not of that form.
bool parse_size(const std::string& text, double& bytes, double& ulp)
{
  static const std::array<std::pair<const char*, double>, 4> units{
      {{"KB", 1024.0}, {"MB", 1024.0 * 1024}, {"GB", 1024.0 * 1024 * 1024}, {"B", 1.0}}};
  for (const auto& [name, scale] : units) {
    const std::string u = name;
    if (text.size() <= u.size() || text.compare(text.size() - u.size(), u.size(), u) != 0) continue;
    const std::string num = text.substr(0, text.size() - u.size());
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(num, &used);
    } catch (const std::exception&) {
      return false;
    }
    if (used != num.size() || !std::isfinite(v) || v <= 0) return false;
    const std::size_t dot = num.find('.');
    const int decimals = dot == std::string::npos ? 0 : static_cast<int>(num.size() - dot - 1);
    bytes = v * scale;
    ulp = std::pow(10.0, -decimals) * scale;
    return true;
  }
  return false;
}

HandoffPoint simulate(const HandoffMeasurement& m, const fs::path& dir, HandoffValidation& v)
{
  const int prompt = m.prompt_tokens;
  const fs::path trace = dir / fmt::format("prompt-{}.jsonl", prompt);
  {
    std::ofstream out(trace);
    out << json{{"xattn_trace", 1}, {"source", "xattn validate --handoff"}}.dump() << "\n";
    // Its whole blocks; a prompt's tokens past its last block are its own too.
    std::vector<int> blocks(static_cast<std::size_t>(prompt / kBlockTokens));
    for (std::size_t b = 0; b < blocks.size(); ++b)
      blocks[b] = static_cast<int>(b);
    out << json{{"id", 0},          {"t", 0},       {"session", 0}, {"agent", 0}, {"block_tokens", kBlockTokens},
                {"blocks", blocks}, {"in", prompt}, {"out", 2}}
               .dump()
        << "\n";
  }
  // The decode instance's GPUs hold nothing of a shared corpus: the prompt is the request's own.
  const std::string text =
      fmt::format("name: mooncake-pd-{}\nmodel: qwen3-8b\nprofile: {}\ntopology: {}\n"
                  "instances: {{requesters: [node1], holders: [node1], tp: {}, dp_attention: 1, ep: 1, "
                  "prefill: {{gpus: [node0], tp: {}}}}}\n"
                  "corpus: {{chunk_tokens: {}}}\nselection: {{mode: dense}}\n"
                  "workload: {{trace: {}, sessions: prefix}}\npolicies: [route]\n"
                  "engine: {{step: full, transport: proxy}}\n"
                  "prefill: {{enabled: true, handoff: after, max_num_batched_tokens: {}}}\n",
                  prompt, v.profile, v.topology, kTp, kTp, kBlockTokens, trace.string(), std::max(8192, prompt));
  sim::engine::Scenario sc = sim::engine::parse_scenario(text, (dir / fmt::format("prompt-{}.yaml", prompt)).string());
  sim::engine::RunOptions opt;
  opt.out_dir = (dir / fmt::format("out-{}", prompt)).string();
  opt.progress = false;
  v.block_tokens = sc.prefill.block_tokens;
  sim::engine::RunOutcome o = sim::engine::run_scenario(sc, opt);
  v.invariants_ok = v.invariants_ok && o.exit_code == 0 && o.result.ok;
  if (o.result.policies.empty() || o.result.policies.front().second.prefill_counts.handoffs != 1)
    throw std::runtime_error(fmt::format("the engine handed off no prompt of {} tokens", prompt));
  const sim::engine::PolicyResult& p = o.result.policies.front().second;
  return {m, static_cast<double>(p.prefill_counts.handoff_bytes), p.handoff_wait_s.mean, prompt == kCalibrationPrompt};
}
} // namespace

std::vector<HandoffMeasurement> read_handoff_measurements(const std::string& path)
{
  std::vector<HandoffMeasurement> out;
  read_table(path, {"prompt_tokens", "transfer_ms"}, [&](const TableRow& row) {
    HandoffMeasurement m;
    m.line = row.line();
    const double tokens = row.number("prompt_tokens", "a number of tokens");
    m.prompt_tokens = static_cast<int>(tokens);
    if (tokens != m.prompt_tokens || m.prompt_tokens < 1)
      row.fail("prompt_tokens", fmt::format("{} is not a positive whole number", tokens));
    m.transfer_s = row.number("transfer_ms", "a number of milliseconds") * 1e-3;
    if (m.transfer_s <= 0) row.fail("transfer_ms", "a transfer time is positive");
    if (row.has("kv_size")) {
      m.kv_text = row.cell("kv_size");
      if (!m.kv_text.empty() && !parse_size(m.kv_text, m.kv_bytes, m.kv_ulp))
        row.fail("kv_size", "'" + m.kv_text + "' is not a size such as 20MB or 1.13GB");
    }
    out.push_back(m);
  });
  return out;
}

HandoffValidation validate_handoff(const std::vector<HandoffMeasurement>& data, const std::string& profile,
                                   const std::string& topology)
{
  HandoffValidation v{{}, profile, topology, true};
  const ScratchDir scratch("xattn_validate_handoff");
  for (const HandoffMeasurement& m : data)
    v.points.push_back(simulate(m, scratch.path(), v));
  return v;
}

std::string handoff_report(const HandoffValidation& v, double max_error)
{
  std::string out = fmt::format(
      "xattn validate --handoff: profile {}, topology {}; Qwen3-8B, 1P1D, tp 8 on each side, the KV handed off "
      "after the prefill in whole {}-token blocks (the prompt's and its first decoded token's); the point marked * "
      "({} tokens) calibrated the profile's kv_transfer costs, the others are predicted\n\n",
      v.profile, v.topology, v.block_tokens, kCalibrationPrompt);
  double sum = 0;
  const HandoffPoint* worst = nullptr;
  int sizes = 0, sized = 0;
  for (const HandoffPoint& p : v.points) {
    sum += std::abs(p.error());
    if (worst == nullptr || std::abs(p.error()) > std::abs(worst->error())) worst = &p;
    sized += p.measured.kv_bytes > 0 ? 1 : 0;
    sizes += p.measured.kv_bytes > 0 && p.size_matches() ? 1 : 0;
  }
  if (worst != nullptr)
    out += fmt::format("transfer time: MAPE {:.1f}%, worst {:+.1f}% ({} tokens), {} points\n",
                       100 * sum / static_cast<double>(v.points.size()), 100 * worst->error(),
                       worst->measured.prompt_tokens, v.points.size());
  out += fmt::format("KV size: {} of {} printed sizes are the simulated size as the table prints it\n\n", sizes, sized);
  out += fmt::format("{:>8} {:>9} {:>12} {:>8} {:>11} {:>11} {:>8}\n", "prompt", "kv_size", "simulated", "error",
                     "measured", "simulated", "error");
  for (const HandoffPoint& p : v.points) {
    const bool over = std::abs(p.error()) > max_error || !p.size_matches();
    const std::string size_error = p.measured.kv_bytes > 0 ? fmt::format("{:+.2f}%", 100 * p.size_error()) : "-";
    out += fmt::format("{:>8} {:>9} {:>10.2f}Mi {:>8} {:>9.2f}ms {:>9.2f}ms {:>+7.1f}%{}{}\n", p.measured.prompt_tokens,
                       p.measured.kv_text.empty() ? "-" : p.measured.kv_text, p.bytes / (1024.0 * 1024), size_error,
                       1e3 * p.measured.transfer_s, 1e3 * p.transfer_s, 100 * p.error(), p.calibration ? " *" : "",
                       over ? "  over the bound" : "");
  }
  return out;
}

} // namespace xattn::validate
