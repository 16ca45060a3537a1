// xattn_bench: measures, in one run, what issue 9 asks and writes one JSON of figures.
//   xattn_bench [--out FILE] [--quick] [--xattn PATH] [--scenario FILE] [--mooncake FILE]
// Figures: platform build of the 1,024- and 8,192-GPU presets; closed-form predicate decisions
// per second; trace import (Mooncake) requests and block references per second; the engine's
// exchanges per wall second on a replay against a bare SimGrid loop of as many messages of the
// same mean size (the ceiling); the peak memory of each. BENCHMARKS.md records a run.
#include "sim/bench/bench.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/resources.hpp"
#include "sim/engine/driver.hpp"

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/version.h>

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

namespace fs = std::filesystem;
using nlohmann::json;
using namespace xattn;

namespace
{
std::string cpu_model()
{
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

std::string load_average()
{
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

std::string data(const std::string& rel)
{
  auto p = core::find_data(rel);
  return p ? p->string() : std::string();
}

void say(const std::string& what, const json& j)
{
  std::cerr << "xattn_bench: " << what << ": " << j.dump() << "\n";
}
} // namespace

int main(int argc, char** argv)
{
  std::string out = "bench.json", xattn, scenario, mooncake;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "xattn_bench: " << a << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--out")
      out = value();
    else if (a == "--quick")
      quick = true;
    else if (a == "--xattn")
      xattn = value();
    else if (a == "--scenario")
      scenario = value();
    else if (a == "--mooncake")
      mooncake = value();
    else {
      std::cerr << "usage: xattn_bench [--out FILE] [--quick] [--xattn PATH] [--scenario FILE] [--mooncake FILE]\n";
      return 2;
    }
  }
  std::error_code ec;
  if (xattn.empty())
    xattn = (fs::read_symlink("/proc/self/exe", ec).parent_path().parent_path().parent_path() / "xattn").string();
  if (scenario.empty())
    scenario = !data("scenarios/mooncake-1024.yaml").empty() ? data("scenarios/mooncake-1024.yaml")
                                                             : data("scenarios/quickstart.yaml");
  if (mooncake.empty()) // the bundled trace (zstd: the import rate includes decompressing it)
    mooncake = data("workloads/data/mooncake/conversation_trace.jsonl.zst");

  json r;
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  r["machine"] = {{"cpu", cpu_model()},
                  {"nproc", std::thread::hardware_concurrency()},
                  {"date", date},
                  {"simgrid", std::to_string(SIMGRID_VERSION_MAJOR) + "." + std::to_string(SIMGRID_VERSION_MINOR)},
                  {"compiler", __VERSION__},
                  {"quick", quick},
                  {"load_average_at_start", load_average()}};

  for (auto [key, file] : {std::pair{"platform_1024", "topologies/ndr400-128.yaml"},
                           std::pair{"platform_8192", "topologies/ndr400-1024.yaml"}}) {
    const std::string path = data(file);
    r[key] = bench::in_child([&] { return bench::platform_build(path); });
    say(key, r[key]);
  }

  r["predicate"] = bench::in_child([&] { return bench::predicate_rate(quick ? 2'000'000 : 20'000'000); });
  say("predicate", r["predicate"]);

  if (!mooncake.empty()) {
    r["trace_import"] = bench::in_child([&] { return bench::trace_import(mooncake, "mooncake", quick ? 2 : 10); });
    say("trace_import", r["trace_import"]);
  } else {
    r["trace_import"] = {{"skipped", "no Mooncake trace in workloads/data (pass --mooncake FILE)"}};
  }

  r["engine_replay"] = bench::in_child([&] { return bench::engine_replay(xattn, scenario, "predicate", ""); });
  say("engine_replay", r["engine_replay"]);

  // The ceiling: as many messages as the replay handed SimGrid (at most 500,000), of the same mean
  // size, on the 1,024-GPU preset, with at most 64 in flight and with at most 8 (a completion
  // costs O(comms in flight): docs/architecture.md).
  std::uint64_t messages = quick ? 20'000 : 200'000;
  std::uint64_t bytes = 1 << 20;
  const json& eng = r["engine_replay"];
  if (eng.contains("engine") && eng["engine"].value("simgrid_comms", 0ull) > 0) {
    const double comms = eng["engine"]["simgrid_comms"].get<double>();
    messages = static_cast<std::uint64_t>(std::clamp(comms, 10'000.0, quick ? 50'000.0 : 500'000.0));
    if (eng["engine"].value("simgrid_bytes", 0.0) > 0)
      bytes = static_cast<std::uint64_t>(eng["engine"]["simgrid_bytes"].get<double>() / comms);
  }
  const std::string t1024 = data("topologies/ndr400-128.yaml");
  for (int in_flight : {64, 8}) {
    const std::string key = "bare_simgrid_" + std::to_string(in_flight);
    r[key] = bench::in_child([&] { return bench::bare_simgrid(t1024, messages, bytes, in_flight); });
    say(key, r[key]);
    if (eng.contains("simgrid_comms_per_s") && r[key].contains("messages_per_s"))
      r["engine_vs_" + key] = eng["simgrid_comms_per_s"].get<double>() / r[key]["messages_per_s"].get<double>();
  }

  r["targets"] = {{"predicate_decisions_per_s", 10e6}, {"import_block_refs_per_s", 1e6}};
  r["bench_peak_rss_mib"] = bench::peak_rss_mib();
  try {
    core::write_file_atomically(out, r.dump(2) + "\n");
  } catch (const std::exception& e) {
    std::cerr << "xattn_bench: cannot write " << out << ": " << e.what() << "\n";
    return 2;
  }
  std::cerr << "xattn_bench: figures in " << out << "\n";
  return 0;
}
