// xattn_bench: the engine's speed and memory figures in one run, written as one JSON.
//   xattn_bench [--out FILE] [--quick] [--xattn PATH] [--scenario FILE] [--mooncake FILE]
//   xattn_bench --long [--only NAME]... [--work DIR] [--out FILE] [--xattn PATH]
// Figures: platform build of the 1,024- and 8,192-GPU presets; closed-form predicate decisions
// per second; trace import (Mooncake) requests and block references per second; the engine's
// exchanges per wall second on a replay against a bare SimGrid loop of as many messages of the
// same mean size (the ceiling); the peak memory of each. BENCHMARKS.md records a run.
// --long runs the long tier instead (sim/bench/long.tsv: the whole-trace checks and the speed
// ratios), prints each figure beside its bound and exits 1 when one fails.
#include "sim/bench/bench.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/error.hpp"
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

json machine()
{
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return {{"cpu", cpu_model()},
          {"nproc", std::thread::hardware_concurrency()},
          {"date", date},
          {"simgrid", std::to_string(SIMGRID_VERSION_MAJOR) + "." + std::to_string(SIMGRID_VERSION_MINOR)},
          {"compiler", __VERSION__},
          {"load_average_at_start", load_average()}};
}

std::string data(const std::string& rel)
{
  auto p = core::find_data(rel);
  return p ? p->string() : std::string();
}

/// --long: every row of sim/bench/long.tsv (or those --only names), one after the other.
int run_long(const std::string& xattn, const std::vector<std::string>& only, const std::string& work,
             const std::string& out)
{
  const std::string list = data("sim/bench/long.tsv");
  if (list.empty()) {
    std::cerr << "xattn_bench: sim/bench/long.tsv not found (set XATTN_DATA_DIR to the source folder)\n";
    return 2;
  }
  std::vector<bench::LongItem> items;
  try {
    items = bench::load_long_items(list);
  } catch (const core::InputError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  for (const std::string& name : only)
    if (std::none_of(items.begin(), items.end(), [&](const bench::LongItem& i) { return i.name == name; })) {
      std::cerr << "xattn_bench: --only: no item '" << name << "' in " << list << "\n";
      return 2;
    }
  const std::string src = fs::path(list).parent_path().parent_path().parent_path().string();
  const std::string scratch = fs::absolute(work).string();
  json r = json::array();
  int failed = 0, skipped = 0;
  for (const bench::LongItem& item : items) {
    if (!only.empty() && std::find(only.begin(), only.end(), item.name) == only.end()) continue;
    r.push_back(bench::run_long_item(item, fs::absolute(xattn).string(), src, scratch));
    failed += r.back()["ok"].get<bool>() ? 0 : 1;
    skipped += r.back().value("skipped", false) ? 1 : 0;
  }
  const int ran = static_cast<int>(r.size());
  std::cout << "long: " << ran - failed - skipped << " passed, " << failed << " failed, " << skipped
            << " skipped (logs in " << scratch << ")\n";
  try {
    core::write_file_atomically(out, json{{"machine", machine()}, {"long", r}}.dump(2) + "\n");
  } catch (const std::exception& e) {
    std::cerr << "xattn_bench: cannot write " << out << ": " << e.what() << "\n";
    return 2;
  }
  if (failed > 0) return 1;
  return skipped == ran ? 77 : 0; // 77: ctest's skip code (nothing could run here)
}

void say(const std::string& what, const json& j)
{
  std::cerr << "xattn_bench: " << what << ": " << j.dump() << "\n";
}
} // namespace

namespace
{
// The command line; a bad one exits 2 with the usage.
struct Args {
  std::string out = "bench.json", xattn, scenario, mooncake, work = "bench-long";
  bool quick = false, long_tier = false;
  std::vector<std::string> only;
};

Args parse_args(int argc, char** argv)
{
  Args args;
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
      args.out = value();
    else if (a == "--quick")
      args.quick = true;
    else if (a == "--xattn")
      args.xattn = value();
    else if (a == "--scenario")
      args.scenario = value();
    else if (a == "--mooncake")
      args.mooncake = value();
    else if (a == "--long")
      args.long_tier = true;
    else if (a == "--only")
      args.only.push_back(value());
    else if (a == "--work")
      args.work = value();
    else {
      std::cerr << "usage: xattn_bench [--out FILE] [--quick] [--xattn PATH] [--scenario FILE] [--mooncake FILE]\n"
                   "       xattn_bench --long [--only NAME]... [--work DIR] [--out FILE] [--xattn PATH]\n";
      std::exit(2);
    }
  }
  return args;
}
} // namespace

int main(int argc, char** argv)
{
  Args args = parse_args(argc, argv);
  std::string &out = args.out, &xattn = args.xattn, &scenario = args.scenario, &mooncake = args.mooncake;
  const bool quick = args.quick;
  std::error_code ec;
  if (xattn.empty())
    xattn = (fs::read_symlink("/proc/self/exe", ec).parent_path().parent_path().parent_path() / "xattn").string();
  if (args.long_tier) return run_long(xattn, args.only, args.work, out);
  if (scenario.empty())
    scenario = !data("scenarios/mooncake-1024.yaml").empty() ? data("scenarios/mooncake-1024.yaml")
                                                             : data("scenarios/quickstart.yaml");
  if (mooncake.empty()) // the bundled trace (zstd: the import rate includes decompressing it)
    mooncake = data("workloads/data/mooncake/conversation_trace.jsonl.zst");

  json r;
  r["machine"] = machine();
  r["machine"]["quick"] = quick;

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
