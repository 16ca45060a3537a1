#include "validate/expert_parallel.hpp"

#include "sim/core/error.hpp"
#include "sim/engine/driver.hpp"
#include "validate/table.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>

namespace xattn::validate
{
namespace fs = std::filesystem;
using nlohmann::json;

namespace
{
constexpr int kTokensPerGpu = 128; // DeepEP's decode setting
constexpr int kGpusPerNode = 8;

// The EP ranks: pure RDMA puts one on each node (every byte crosses its NIC, as DeepEP's
// pure-RDMA kernels send even to the GPUs of their own node); NVLink in node fills nodes of 8.
std::string ranks(const std::string& table, int ep)
{
  if (table == "pure-rdma") return fmt::format("node0-{}.gpu0", ep - 1);
  if (ep < kGpusPerNode) return fmt::format("node0.gpu0-{}", ep - 1);
  return fmt::format("node0-{}", ep / kGpusPerNode - 1);
}

std::pair<double, double> simulate(const std::string& table, int ep, const std::string& routing,
                                   const std::string& profile, const std::string& topology, const fs::path& dir,
                                   bool& ok)
{
  const fs::path trace = dir / fmt::format("{}-{}.jsonl", table, ep);
  {
    std::ofstream out(trace);
    out << json{{"xattn_trace", 1}, {"source", "xattn validate --expert-parallel"}}.dump() << "\n";
    int id = 0;
    for (int r = 0; r < ep; ++r) // session r decodes on rank r; a one-block context of its own
      for (int k = 0; k < kTokensPerGpu; ++k, ++id)
        out << json{{"id", id},           {"t", 0},        {"session", r}, {"agent", r},
                    {"block_tokens", 64}, {"blocks", {r}}, {"in", 64},     {"out", 1}}
                   .dump()
            << "\n";
  }
  const std::string gpus = ranks(table, ep);
  const std::string text = fmt::format(
      "name: deepep-{}-{}\n"
      "model: {{name: deepseek-v3-moe-layer, layers: 1, heads: 128, kv_lora_rank: 512, rope_dim: 64, "
      "qk_nope_head_dim: 128, v_head_dim: 128, hidden: 7168, q_lora_rank: 1536, dense_layers: 0, experts: 256, "
      "experts_per_token: 8, expert_intermediate: 2048, vocab: 129280}}\n"
      "profile: {}\ntopology: {}\n"
      "instances: {{requesters: [{}], holders: [{}], dp_attention: {}, ep: {}, expert_routing: {}}}\n"
      "corpus: {{chunk_tokens: 64}}\nworkload: {{trace: {}}}\npolicies: [route]\n"
      "engine: {{step: full, max_batch: {}}}\n",
      table, ep, profile, topology, gpus, gpus, ep, ep, routing, trace.string(), kTokensPerGpu);
  sim::engine::Scenario sc =
      sim::engine::parse_scenario(text, (dir / fmt::format("{}-{}-{}.yaml", table, ep, routing)).string());
  sim::engine::RunOptions opt;
  opt.out_dir = (dir / fmt::format("out-{}-{}-{}", table, ep, routing)).string();
  opt.progress = false;
  sim::engine::RunOutcome o = sim::engine::run_scenario(sc, opt);
  ok = ok && o.exit_code == 0 && o.result.ok;
  if (o.result.policies.empty() || !o.result.policies.front().second.expert_parallel)
    throw std::runtime_error(fmt::format("the engine gave no expert-parallel figures for {}, EP {}", table, ep));
  const sim::engine::PolicyResult& p = o.result.policies.front().second;
  return {p.ep_dispatch_s.mean, p.ep_combine_s.mean};
}
} // namespace

std::vector<EpMeasurement> read_ep_measurements(const std::string& path)
{
  std::vector<EpMeasurement> out;
  read_table(path, {"table", "op", "ep", "latency_us"}, [&](const TableRow& row) {
    EpMeasurement m{row.cell("table"), row.cell("op"), 0, 0, row.line()};
    if (m.table != "pure-rdma" && m.table != "nvlink-in-node")
      row.fail("table", "'" + m.table + "' is neither pure-rdma nor nvlink-in-node");
    if (m.op != "dispatch" && m.op != "combine") row.fail("op", "'" + m.op + "' is neither dispatch nor combine");
    const double ep = row.number("ep", "a whole number of GPUs");
    m.ep = static_cast<int>(ep);
    m.latency_s = row.number("latency_us", "a number of microseconds") * 1e-6;
    // DeepSeek-V3's 256 experts split over the ranks; NVLink in node fills whole nodes past 8.
    if (ep != m.ep || m.ep < 2 || m.ep > 256 || 256 % m.ep != 0 ||
        (m.table == "nvlink-in-node" && m.ep > kGpusPerNode && m.ep % kGpusPerNode != 0))
      row.fail("ep", fmt::format("EP {} cannot be laid out: a divisor of the 256 experts from 2 to 256", ep));
    if (m.latency_s <= 0) row.fail("latency_us", "a latency is positive");
    out.push_back(m);
  });
  return out;
}

EpValidation validate_expert_parallel(const std::vector<EpMeasurement>& data, const std::string& profile,
                                      const std::string& topology)
{
  EpValidation v{{}, profile, topology, true};
  const ScratchDir scratch("xattn_validate_ep");
  const fs::path& dir = scratch.path();
  std::map<std::tuple<std::string, int, std::string>, std::pair<double, double>> runs;
  auto run = [&](const EpMeasurement& m, const std::string& routing) {
    const auto key = std::tuple{m.table, m.ep, routing};
    if (!runs.contains(key)) runs[key] = simulate(m.table, m.ep, routing, profile, topology, dir, v.invariants_ok);
    return m.op == "dispatch" ? runs[key].first : runs[key].second;
  };
  for (const EpMeasurement& m : data) {
    // The profile's fitted points: its InfiniBand bandwidth on pure RDMA's dispatch, its NVLink
    // kernel rates on both NVLink ops, all at EP 8 (calibrate/profiles/h800-cx7-ibgda.yaml).
    const bool fitted = m.ep == kGpusPerNode && (m.table == "nvlink-in-node" || m.op == "dispatch");
    v.points.push_back({m, run(m, "expected"), run(m, "uniform"), fitted});
  }
  return v;
}

std::string ep_report(const EpValidation& v, double max_error)
{
  std::string out = fmt::format("xattn validate --expert-parallel: profile {}, topology {}; the points marked * "
                                "(EP {}) calibrated the profile, the others are predicted; each point twice: every "
                                "GPU sending each peer its expected share, and each token's experts drawn "
                                "uniformly (the most loaded GPU then sets the time)\n\n",
                                v.profile, v.topology, kGpusPerNode);
  out += fmt::format("{:<16} {:<9} {:>9} {:>14} {:>9} {:>14} {:>7}\n", "table", "op", "expected", "worst", "drawn",
                     "worst", "points");
  std::map<std::pair<std::string, std::string>, std::vector<const EpPoint*>> groups;
  for (const EpPoint& p : v.points)
    groups[{p.measured.table, p.measured.op}].push_back(&p);
  for (const auto& [key, group] : groups) {
    const std::vector<const EpPoint*>& pts = group; // clang before 16 cannot capture a structured binding
    // MAPE and the worst point of one way of routing.
    auto summary = [&](double (EpPoint::*error)() const) {
      double sum = 0;
      int n = 0;
      const EpPoint* worst = nullptr;
      for (const EpPoint* p : pts) {
        sum += std::abs((p->*error)());
        ++n;
        if (worst == nullptr || std::abs((p->*error)()) > std::abs((worst->*error)())) worst = p;
      }
      if (worst == nullptr) return fmt::format("{:>9} {:>9} {:<6}", "-", "-", "");
      return fmt::format("{:>8.1f}% {:>+8.1f}% EP {:<3}", 100 * sum / n, 100 * (worst->*error)(), worst->measured.ep);
    };
    out += fmt::format("{:<16} {:<9} {} {} {:>7}\n", key.first, key.second, summary(&EpPoint::error),
                       summary(&EpPoint::drawn_error), pts.size());
  }
  out += fmt::format("\n{:<16} {:<9} {:>4} {:>12} {:>12} {:>8} {:>12} {:>8}\n", "table", "op", "EP", "measured",
                     "expected", "error", "drawn", "error");
  for (const EpPoint& p : v.points) {
    const bool over = std::abs(p.error()) > max_error || std::abs(p.drawn_error()) > max_error;
    out += fmt::format("{:<16} {:<9} {:>4} {:>10.1f}us {:>10.1f}us {:>+7.1f}% {:>10.1f}us {:>+7.1f}%{}{}\n",
                       p.measured.table, p.measured.op, p.measured.ep, 1e6 * p.measured.latency_s, 1e6 * p.simulated_s,
                       100 * p.error(), 1e6 * p.drawn_s, 100 * p.drawn_error(), p.calibration ? " *" : "",
                       over ? "  over the bound" : "");
  }
  return out;
}

} // namespace xattn::validate
