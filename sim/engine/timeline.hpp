// A timeline of a run in Chrome's trace-event format (the JSON Object Format), which
// ui.perfetto.dev and chrome://tracing open: `xattn run --timeline FILE [--window FROM:TO]`. The
// layout (processes, tracks, event names, args, counters) is documented in docs/file-formats.md,
// "Timeline"; in short, a process per requester or holder GPU and one for the network, per policy.
//
// Each policy's simulation streams its events to a fragment file as they end (nothing is kept in
// memory beyond what is in flight); the driver joins the fragments into FILE atomically. Only
// events overlapping the window are written, and a fragment stops taking new events past
// kMaxFragmentBytes. The engine holds a null Timeline when none was asked for: each hook then
// costs the branch on that pointer and nothing else.
#pragma once

#include "sim/core/units.hpp"
#include "sim/engine/scenario.hpp"
#include "sim/engine/time_window.hpp"
#include "sim/model/primitive.hpp"
#include "topologies/topology.hpp"

#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace xattn::sim::engine
{

class Network;

/// Throws core::InputError unless `path` names a file in an existing folder (before a run starts).
void check_timeline_path(const std::string& path);
/// Joins the policies' fragments (`<policy>.timeline.json` in `parts`, the scenario's policy
/// order) into `path` atomically.
void write_timeline(const Scenario& sc, const std::filesystem::path& parts, const std::string& path,
                    const TimeWindow& window);

/// A fragment grows past this only by the events already in flight when it got there (then a warning).
inline constexpr std::size_t kMaxFragmentBytes = std::size_t{256} << 20;

/// The legs of a call the timeline shows, named as the engine's prices name them (ExchangePrice,
/// MovePrice in sim/model/pricing.hpp). kLegNames spells them.
enum class Leg {
  kQuery,
  kProbe,
  kKernel,
  kAnswer,
  kIndex,
  kCopy,
  kSplice,
  kPrefill,
  kAttend,
  kMerge,
  kGemm,
  kOther,
  kMoe
};
inline constexpr std::array<const char*, 13> kLegNames{"query", "probe",  "kernel",     "answer", "index",
                                                       "copy",  "splice", "re-prefill", "attend", "merge",
                                                       "gemm",  "other",  "moe"};
inline const char* to_string(Leg l)
{
  return kLegNames[static_cast<std::size_t>(l)];
}

/// The call an event belongs to: the requester GPU's iteration, the call's lane (its index among
/// the iteration's calls), its holder, and the requests it serves.
struct CallRef {
  std::uint64_t iteration = 0;
  topo::GpuId requester = 0, holder = 0;
  int lane = 0;
  const std::vector<std::uint64_t>* requests = nullptr;
};

struct TimelineSetup {
  std::string path; ///< the fragment to write ("": no timeline)
  TimeWindow window;
  int policy_index = 0; ///< in the scenario's policy order: places this policy's processes
};

/// The recorder of one simulation. Every hook is called when what it records ends (now()).
class Timeline
{
public:
  /// Opens the fragment. Throws core::InputError when it cannot be written.
  Timeline(const TimelineSetup& setup, const std::string& policy, const Scenario& sc, const Network& net);
  ~Timeline();
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;
  /// Closes the fragment. Throws core::InputError when it could not be written whole.
  void finish();

  /// A decode step of a requester GPU: one iteration, in which every request of `requests` took
  /// its step `steps[i]` (0-based), from `start` to now.
  void step(topo::GpuId gpu, std::uint64_t iteration, double start, const std::vector<std::uint64_t>& requests,
            const std::vector<std::int64_t>& steps);
  /// The requester's own time at the end of an iteration's round, from `start` to now: its
  /// attention (`attend_s`), the merge (`merge_s`), the model's GEMMs (`gemm_s`, engine.step
  /// full), then the other per-step time.
  void tail(topo::GpuId gpu, std::uint64_t iteration, double start, double attend_s, double merge_s, double gemm_s);
  /// A round's MoE layers on `gpu` (engine.step full, ep > 1): from reaching them (the group's
  /// wait included) to their results back.
  void moe(topo::GpuId gpu, std::uint64_t iteration, double start);
  /// A requester-side leg of a call, on the call's lane.
  void leg(Leg leg, const CallRef& c, double start, double end, double bytes = 0);
  /// A whole call (route, fetch or local) from `start` to now, its legs nested in it.
  void call(Primitive p, const CallRef& c, double start, double bytes);
  /// A holder-side leg (kKernel on a compute lane, kCopy on a copy stream) begins now: returns its
  /// lane on the holder and links it to the call with a flow.
  int holder_begin(Leg leg, const CallRef& c);
  void holder_end(Leg leg, const CallRef& c, int lane, double start, double bytes = 0);
  /// A holder's kernels running (kKernel) or copies waiting for a stream (kCopy), now.
  void queue(Leg leg, topo::GpuId holder, int depth);
  /// Some requester is decoding again / none is: the link counters resume / drop to zero.
  void busy();
  void idle();

private:
  enum Kind { kDecode, kCalls, kCompute, kCopies };
  struct Counter {
    double last = 0;
    bool shown = false;
  };
  bool in_window(double start, double end) const { return start <= to_ && end >= from_; }
  void tick();
  void sample();
  bool open_event(const char* ph, topo::GpuId gpu, Kind kind, int lane, std::string_view name, const char* cat,
                  double start, double end);
  void put_call(const CallRef& c);
  void separate();
  void close_event();
  void defer_event(topo::GpuId gpu, Kind kind, int lane);
  void close_parent(topo::GpuId gpu, Kind kind, int lane);
  void drop_held(topo::GpuId gpu, Kind kind, int lane);
  void put_meta(int pid, int tid, const char* what, const std::string& args);
  void name_track(topo::GpuId gpu, Kind kind, int lane);
  int pid(topo::GpuId gpu) const { return pid_base_ + 1 + static_cast<int>(gpu); }
  int network_pid() const { return pid_base_ + 1 + static_cast<int>(gpus_); }
  void counter(int pid, const std::string& name, const char* key, double ts, double value);
  void show(Counter& c, int pid, const std::string& name, const char* key, double value);
  void flush_line();

  std::string path_, policy_;
  const Scenario& sc_;
  const Network& net_;
  std::FILE* out_ = nullptr;
  std::string line_;                                    ///< events to write, joined by ",\n"
  std::unordered_map<std::uint64_t, std::string> held_; ///< legs waiting for their call or step, by track
  std::size_t bytes_ = 0;
  bool any_ = false, capped_ = false;
  double from_, to_;
  int pid_base_;
  std::size_t gpus_;
  /// Per GPU and Kind, the tracks named so far; [kDecode] is -1 before the process is named, 0
  /// after, 1 once its decode track is.
  std::vector<std::array<int, 4>> named_;
  bool network_named_ = false;
  std::vector<std::vector<char>> compute_lanes_, copy_lanes_; ///< per GPU: lanes in use
  std::vector<Counter> kernels_, copies_;                     ///< per GPU
  std::uint64_t flows_ = 0;
  // Link utilisation: bytes moved per link direction at the last sample.
  std::vector<double> moved_, prev_;
  std::vector<Counter> links_;
  std::vector<std::string> link_names_;
  double sample_t_ = 0, next_sample_ = 0, period_ = 0;
  bool idle_ = true;
};

} // namespace xattn::sim::engine
