// xattn_bench: the engine's speed and memory figures in one run, and the long tier (BENCHMARKS.md).
// Each measurement returns a JSON object; anything that creates a SimGrid engine runs in its own
// forked process (one simulation per process: docs/architecture.md), and its peak memory is that
// child's maximum resident set.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace xattn::bench
{

/// Wall seconds since `start`.
inline double since(std::chrono::steady_clock::time_point start)
{
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// CPU seconds this process has used (on a shared machine, rates per CPU second are the figures
/// that do not depend on what else runs; wall rates are reported beside them).
double cpu_seconds();

/// Runs `measure` in a forked child and returns its JSON, plus "peak_rss_mib" (the child's maximum
/// resident set) and "ok". A child that dies or throws gives {"ok": false, "error": ...}.
nlohmann::json in_child(const std::function<nlohmann::json()>& measure);

/// Peak resident set of this process so far, MiB.
double peak_rss_mib();

/// Closed-form predicate: price_call + decide over `n` varied call shapes; decisions per second.
nlohmann::json predicate_rate(std::uint64_t n);

/// Streams a trace `repeat` times; requests and block references per second.
nlohmann::json trace_import(const std::string& path, const std::string& format, int repeat);

/// Graph and SimGrid platform build of a topology file (call in a child).
nlohmann::json platform_build(const std::string& topology);

/// The ceiling: `messages` actor-less comms of `bytes` each between requester and holder GPUs of
/// the topology, chained from Activity::on_completion with at most `in_flight` at once (call in a
/// child).
nlohmann::json bare_simgrid(const std::string& topology, std::uint64_t messages, std::uint64_t bytes, int in_flight);

/// `xattn run` of a scenario (one policy, one job): wall time and the engine's own counters.
nlohmann::json engine_replay(const std::string& xattn, const std::string& scenario, const std::string& policy,
                             const std::string& extra_args);

/// One row of the long tier's list (sim/bench/long.tsv, which says what the columns mean).
struct LongItem {
  std::string name;
  bool ratio = false;  ///< a speed ratio against a reference; else a check (the exit status)
  double bound = 0;    ///< ratios: the bound on command / reference wall time
  bool at_most = true; ///< ratios: the bound is an upper one
  std::string command; ///< {xattn} and {src} stand for the binary and the source folder
  std::string reference;
  std::string why;
};

/// Reads the long tier's list; throws core::InputError naming the file and line of a bad row.
std::vector<LongItem> load_long_items(const std::string& path);

/// Runs one item (and, for a ratio, its reference) in `work`/NAME/, printing its figures beside
/// its bound on stdout; returns them as JSON with "ok".
nlohmann::json run_long_item(const LongItem& item, const std::string& xattn, const std::string& src,
                             const std::string& work);

} // namespace xattn::bench
