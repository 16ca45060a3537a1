// Helpers for the engine's tests: a scenario and a trace written to a fresh folder, run through
// the real driver (one forked process per policy), the summary returned.
#pragma once

#include "sim/core/resources.hpp"
#include "sim/engine/driver.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace xattn::sim::engine::test
{

inline std::filesystem::path fresh_dir(const std::string& tag)
{
  static std::atomic<int> n{0};
  auto dir = std::filesystem::temp_directory_path() /
             ("xattn_engine_" + tag + "_" + std::to_string(getpid()) + "_" + std::to_string(n++));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

/// Writes `trace` (own JSONL, header added) and `scenario` (with `trace.jsonl` beside it), runs it.
inline nlohmann::json run(const std::string& scenario, const std::string& trace,
                          const std::vector<std::string>& sets = {}, std::filesystem::path* out_dir = nullptr)
{
  auto dir = fresh_dir("run");
  std::ofstream(dir / "trace.jsonl") << "{\"xattn_trace\": 1, \"source\": \"engine test\"}\n" << trace;
  std::ofstream(dir / "s.yaml") << scenario;
  Scenario sc = load_scenario((dir / "s.yaml").string(), sets);
  RunOptions opt;
  opt.out_dir = (dir / "out").string();
  opt.progress = false;
  RunOutcome r = run_scenario(sc, opt);
  if (out_dir != nullptr) *out_dir = dir / "out";
  REQUIRE(r.exit_code == 0);
  return r.summary;
}

/// A scenario's inline `topology:` block: two leaves of two 8-GPU nodes (NVLink 450 GB/s), one
/// NDR-200 NIC (25 GB/s) per GPU, one spine, each leaf-spine trunk carrying 2 nodes x 8 NICs x
/// 25 GB/s / `oversubscription`.
inline std::string two_leaf_topology(int oversubscription)
{
  return "topology:\n"
         "  name: two-leaf\n"
         "  nodes: 4\n"
         "  gpus_per_node: 8\n"
         "  nvlink: {bandwidth: 450GBps, latency: 0.4us}\n"
         "  pcie: {switches: 4, bandwidth: 64GBps, latency: 0.5us, host_bandwidth: 64GBps}\n"
         "  nics: {count: 8, latency: 0.5us}\n"
         "  fabric:\n"
         "    nodes_per_leaf: 2\n"
         "    leaves: 2\n"
         "    spines: 1\n"
         "    link: {bandwidth: 200Gbps, latency: 0.1us}\n"
         "    oversubscription: " +
         std::to_string(oversubscription) + "\n";
}

/// A copy of preset `name` of `folder` ("topologies", "calibrate/profiles") written into `dir`,
/// without its lines that begin with `drop` (none where empty) and with `lines` after its line
/// `section` ("fabric:"); its path.
inline std::filesystem::path edited_preset(const std::filesystem::path& dir, const std::string& name,
                                           const std::string& folder, const std::string& section,
                                           const std::string& lines, const std::string& drop)
{
  std::ifstream preset(*core::resolve_preset(name, folder, ".yaml"));
  REQUIRE(preset);
  std::ostringstream text;
  for (std::string line; std::getline(preset, line);)
    if (drop.empty() || line.rfind(drop, 0) != 0) text << line << "\n" << (line == section ? lines : "");
  const std::filesystem::path path = dir / (name + ".yaml");
  std::ofstream(path) << text.str();
  return path;
}

/// One request line of the own trace format: context blocks [first, first + n).
inline std::string request(int id, double t, int session, int first_block, int n_blocks, int out, int block_tokens = 64)
{
  std::string blocks;
  for (int b = first_block; b < first_block + n_blocks; ++b)
    blocks += (blocks.empty() ? "" : ",") + std::to_string(b);
  return "{\"id\":" + std::to_string(id) + ",\"t\":" + std::to_string(t) + ",\"session\":" + std::to_string(session) +
         ",\"agent\":" + std::to_string(session) + ",\"parent\":null,\"block_tokens\":" + std::to_string(block_tokens) +
         ",\"blocks\":[" + blocks + "],\"in\":" + std::to_string(n_blocks * block_tokens) +
         ",\"out\":" + std::to_string(out) + "}\n";
}

/// A CSV file a run wrote (no quoted cells): its header's names and its rows' cells.
struct Csv {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::size_t col(const std::string& name) const
  {
    const auto it = std::find(header.begin(), header.end(), name);
    REQUIRE(it != header.end());
    return static_cast<std::size_t>(it - header.begin());
  }
};
inline Csv read_csv(const std::filesystem::path& file)
{
  std::ifstream in(file);
  REQUIRE(in);
  auto cells = [](const std::string& line) {
    std::vector<std::string> out;
    std::stringstream s(line);
    for (std::string c; std::getline(s, c, ',');)
      out.push_back(c);
    return out;
  };
  Csv csv;
  std::string line;
  std::getline(in, line);
  csv.header = cells(line);
  while (std::getline(in, line))
    csv.rows.push_back(cells(line));
  return csv;
}

/// One column of a run's CSV by the text of another: csv_column(out / "holders.csv", "gpu", "kernels").
inline std::map<std::string, double> csv_column(const std::filesystem::path& file, const std::string& key,
                                                const std::string& column)
{
  const Csv csv = read_csv(file);
  const std::size_t k = csv.col(key), c = csv.col(column);
  std::map<std::string, double> values;
  for (const auto& row : csv.rows)
    values[row.at(k)] = std::stod(row.at(c));
  return values;
}

/// One column of a run's requests.csv (`policy`'s rows), by request id.
inline std::map<std::uint64_t, double> requests_column(const std::filesystem::path& out, const std::string& policy,
                                                       const std::string& column)
{
  const Csv csv = read_csv(out / "requests.csv");
  const std::size_t c = csv.col(column), id = csv.col("request"), pol = csv.col("policy");
  std::map<std::uint64_t, double> values;
  for (const auto& row : csv.rows)
    if (row.at(pol) == policy) values[std::stoull(row.at(id))] = std::stod(row.at(c));
  return values;
}

inline double step_mean(const nlohmann::json& summary, const std::string& policy)
{
  return summary["policies"][policy]["step_latency_s"]["mean"].get<double>();
}

} // namespace xattn::sim::engine::test
