// The measurements that need no SimGrid engine: the closed-form predicate and trace import.
#include "sim/bench/bench.hpp"
#include "sim/model/cost_model.hpp"
#include "sim/model/pricing.hpp"
#include "workloads/trace_format.hpp"

#include <sys/resource.h>

#include <array>
#include <ctime>

namespace xattn::bench
{

double peak_rss_mib()
{
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

double cpu_seconds()
{
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

nlohmann::json predicate_rate(std::uint64_t n)
{
  const sim::ModelSpec model = sim::load_model("deepseek-v3.2");
  const calibrate::Profile prof = calibrate::load_profile("h100-ndr200-ibgda");
  const std::array fabrics = {core::FabricClass::kNvlink, core::FabricClass::kPcie, core::FabricClass::kIbSameLeaf,
                              core::FabricClass::kIbSpine};
  std::array<sim::PathCost, 4> paths{};
  for (std::size_t i = 0; i < fabrics.size(); ++i)
    paths[i] = sim::nominal_path(prof, fabrics[i]);
  // Shapes vary every call (rows, tokens, holders, runs, selection, transport, reuse), so nothing
  // is hoisted out of the loop; the checksum keeps the compiler from dropping the work.
  std::array<std::uint64_t, 3> chosen{};
  double checksum = 0;
  const double cpu0 = cpu_seconds();
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t i = 0; i < n; ++i) {
    sim::CallShape s;
    s.rows = static_cast<double>(16u << (i % 6));
    s.tokens = static_cast<double>(256 + (i * 7919) % 65536);
    s.holders = 1 + static_cast<int>(i % 8);
    s.runs = 1 + static_cast<int>((i >> 3) % 4);
    s.sparse = (i & 32) != 0;
    s.transport = (i & 64) != 0 ? core::Transport::kProxy : core::Transport::kGpu;
    const sim::CallCost c = sim::price_call(model, prof, s, paths[i % 4]);
    const sim::Decision d = sim::decide(c, static_cast<double>(i % 500));
    ++chosen[static_cast<int>(d.choice)];
    checksum += d.route_total.value();
  }
  const double s = since(start);
  const double cpu = cpu_seconds() - cpu0;
  return {{"decisions", n},
          {"seconds", s},
          {"cpu_seconds", cpu},
          {"decisions_per_s", static_cast<double>(n) / s},
          {"decisions_per_cpu_s", static_cast<double>(n) / cpu},
          {"chosen", {{"route", chosen[0]}, {"fetch", chosen[1]}, {"local", chosen[2]}}},
          {"checksum", checksum}};
}

nlohmann::json trace_import(const std::string& path, const std::string& format, int repeat)
{
  const workloads::TraceFormat f = *workloads::parse_format(format);
  std::uint64_t requests = 0, refs = 0;
  const double cpu0 = cpu_seconds();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < repeat; ++i) {
    auto src = workloads::open_trace(path, f);
    workloads::Request r;
    while (src->next(r)) {
      ++requests;
      refs += r.blocks.size();
    }
  }
  const double s = since(start);
  const double cpu = cpu_seconds() - cpu0;
  return {{"file", path},
          {"cpu_seconds", cpu},
          {"block_refs_per_cpu_s", static_cast<double>(refs) / cpu},
          {"format", format},
          {"passes", repeat},
          {"requests", requests},
          {"block_refs", refs},
          {"seconds", s},
          {"requests_per_s", static_cast<double>(requests) / s},
          {"block_refs_per_s", static_cast<double>(refs) / s}};
}

} // namespace xattn::bench
