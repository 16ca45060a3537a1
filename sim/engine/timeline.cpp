#include "sim/engine/timeline.hpp"

#include "sim/engine/clock.hpp"
#include "sim/engine/network.hpp"

#include "sim/core/error.hpp"

#include <fmt/format.h>
#include <xbt/log.h>

#include <algorithm>
#include <cmath>
#include <iterator>

XBT_LOG_NEW_DEFAULT_CATEGORY(xattn_timeline, "xattn timeline of a run");

namespace xattn::sim::engine
{
namespace
{
constexpr double kSamplesPerWindow = 250; // link utilisation samples over a bounded window
constexpr double kUnboundedSample_s = 10e-3;

// Track ids within a GPU's process: 1 its decode steps, then the call lanes, compute lanes and
// copy streams interleaved, so that each kind may grow without bound.
int tid_of(int kind, int lane)
{
  return kind == 0 ? 1 : 2 + 3 * lane + (kind - 1);
}

std::int64_t to_ns(double t_s)
{
  return std::llround(t_s * 1e9);
}

// Microseconds with three decimals, exactly from whole nanoseconds (no rounding drift between ts
// and ts + dur).
void put_us(std::string& out, std::int64_t ns)
{
  fmt::format_to(std::back_inserter(out), "{}.{:03}", ns / 1000, ns % 1000);
}

int take_lane(std::vector<char>& lanes)
{
  auto it = std::find(lanes.begin(), lanes.end(), 0);
  if (it == lanes.end()) it = lanes.insert(lanes.end(), 0);
  *it = 1;
  return static_cast<int>(it - lanes.begin());
}
} // namespace

Timeline::Timeline(const TimelineSetup& setup, const std::string& policy, const Scenario& sc, const Network& net)
    : path_(setup.path), policy_(policy), sc_(sc), net_(net), from_(setup.window.from.value()),
      to_(setup.window.to.value()), gpus_(sc.topology->gpu_count())
{
  out_ = std::fopen(path_.c_str(), "wb");
  if (out_ == nullptr) core::fail(path_, 0, 0, "--timeline", "cannot write");
  std::setvbuf(out_, nullptr, _IOFBF, 1 << 20);
  pid_base_ = setup.policy_index * static_cast<int>(gpus_ + 1);
  named_.assign(gpus_, {-1, 0, 0, 0});
  compute_lanes_.resize(gpus_);
  copy_lanes_.resize(gpus_);
  kernels_.resize(gpus_);
  copies_.resize(gpus_);
  const std::size_t resources = 2 * sc.topology->link_count();
  prev_.assign(resources, 0.0);
  links_.resize(resources);
  for (topo::LinkId id = 0; id < sc.topology->link_count(); ++id) {
    link_names_.push_back(sc.topology->link(id).name + " up");
    link_names_.push_back(sc.topology->link(id).name + " down");
  }
  period_ = std::isfinite(to_) ? (to_ - from_) / kSamplesPerWindow : kUnboundedSample_s;
  next_sample_ = from_;
}

Timeline::~Timeline()
{
  if (out_ != nullptr) std::fclose(out_);
}

void Timeline::finish()
{
  if (out_ == nullptr) return;
  flush_line(); // names of tracks that only counters used
  const bool bad = std::fflush(out_) != 0 || std::ferror(out_) != 0;
  const bool closed = std::fclose(out_) == 0;
  out_ = nullptr;
  if (bad || !closed) core::fail(path_, 0, 0, "--timeline", "the timeline could not be written whole");
}

void Timeline::separate()
{
  if (!line_.empty()) line_ += ",\n";
}

void Timeline::flush_line()
{
  if (line_.empty()) return;
  if (any_) std::fputs(",\n", out_);
  std::fwrite(line_.data(), 1, line_.size(), out_);
  bytes_ += line_.size() + 2;
  any_ = true;
  line_.clear();
  if (bytes_ > kMaxFragmentBytes && !capped_) {
    capped_ = true;
    to_ = std::min(to_, now());
    XBT_WARN("timeline of %s: past %zu MiB at %.6f s simulated; later events are left out (use --window FROM:TO)",
             policy_.c_str(), kMaxFragmentBytes >> 20, now());
  }
}

void Timeline::put_meta(int pid, int tid, const char* what, const std::string& args)
{
  separate();
  fmt::format_to(std::back_inserter(line_), R"({{"ph":"M","name":"{}","pid":{})", what, pid);
  if (tid > 0) fmt::format_to(std::back_inserter(line_), R"(,"tid":{})", tid);
  fmt::format_to(std::back_inserter(line_), R"(,"args":{{{}}}}})", args);
}

void Timeline::name_track(topo::GpuId gpu, Kind kind, int lane)
{
  std::array<int, 4>& named = named_[gpu];
  auto meta = [&](const char* what, int tid, const std::string& args) { put_meta(pid(gpu), tid, what, args); };
  if (named[0] < 0) {
    const bool requests = std::find(sc_.requesters.begin(), sc_.requesters.end(), gpu) != sc_.requesters.end();
    const bool holds = std::find(sc_.holders.begin(), sc_.holders.end(), gpu) != sc_.holders.end();
    const char* role = requests && holds ? "requester, holder" : requests ? "requester" : "holder";
    meta("process_name", 0,
         fmt::format(R"j("name":"{}: {} (gpu {}, {})")j", policy_, sc_.topology->gpu_name(gpu), gpu, role));
    meta("process_sort_index", 0, fmt::format(R"("sort_index":{})", pid(gpu)));
    named[0] = 0;
  }
  static const char* kTrack[4] = {"decode", "call", "compute", "copy stream"};
  for (int k = kind == kDecode ? named[0] : named[kind]; k <= lane; ++k) {
    const std::string name = kind == kDecode ? std::string(kTrack[0]) : fmt::format("{} {}", kTrack[kind], k);
    meta("thread_name", tid_of(kind, k), fmt::format(R"("name":"{}")", name));
    meta("thread_sort_index", tid_of(kind, k), fmt::format(R"("sort_index":{})", kind * 1000000 + k));
  }
  if (kind == kDecode)
    named[0] = std::max(named[0], 1);
  else
    named[kind] = std::max(named[kind], lane + 1);
}

bool Timeline::open_event(const char* ph, topo::GpuId gpu, Kind kind, int lane, std::string_view name, const char* cat,
                          double start, double end)
{
  if (out_ == nullptr || !in_window(start, end)) return false;
  if ((kind == kDecode ? named_[gpu][0] < 1 : named_[gpu][kind] <= lane)) name_track(gpu, kind, lane);
  separate();
  const std::int64_t a = to_ns(start), b = to_ns(std::max(start, end));
  fmt::format_to(std::back_inserter(line_), R"({{"ph":"{}","name":"{}","cat":"{}","pid":{},"tid":{},"ts":)", ph, name,
                 cat, pid(gpu), tid_of(kind, lane));
  put_us(line_, a);
  if (ph[0] == 'X') {
    line_ += R"(,"dur":)";
    put_us(line_, b - a);
  }
  if (ph[0] == 'X') fmt::format_to(std::back_inserter(line_), R"(,"args":{{"policy":"{}")", policy_);
  return true;
}

void Timeline::put_call(const CallRef& c)
{
  fmt::format_to(std::back_inserter(line_), R"(,"iteration":{},"requester":{},"holder":{},"requests":[{}])",
                 c.iteration, c.requester, c.holder, fmt::join(*c.requests, ","));
}

void Timeline::close_event()
{
  line_ += "}}";
  flush_line();
}

// A leg is written after the call or step that holds it, which ends later: viewers that order
// slices of one start time by their order in the file then nest them right.
void Timeline::defer_event(topo::GpuId gpu, Kind kind, int lane)
{
  line_ += "}}";
  std::string& held = held_[(std::uint64_t{gpu} << 32) | static_cast<std::uint32_t>(tid_of(kind, lane))];
  held += held.empty() ? "" : ",\n";
  held += line_;
  line_.clear();
}

void Timeline::close_parent(topo::GpuId gpu, Kind kind, int lane)
{
  auto it = held_.find((std::uint64_t{gpu} << 32) | static_cast<std::uint32_t>(tid_of(kind, lane)));
  line_ += "}}";
  if (it != held_.end()) {
    line_ += ",\n" + it->second;
    held_.erase(it);
  }
  flush_line();
}

void Timeline::drop_held(topo::GpuId gpu, Kind kind, int lane)
{
  held_.erase((std::uint64_t{gpu} << 32) | static_cast<std::uint32_t>(tid_of(kind, lane)));
}

void Timeline::step(topo::GpuId gpu, std::uint64_t iteration, double start, const std::vector<std::uint64_t>& requests,
                    const std::vector<std::int64_t>& steps)
{
  tick();
  if (!open_event("X", gpu, kDecode, 0, "step", "step", start, now())) {
    drop_held(gpu, kDecode, 0);
    return;
  }
  fmt::format_to(std::back_inserter(line_), R"(,"iteration":{},"requester":{},"requests":[{}],"steps":[{}])", iteration,
                 gpu, fmt::join(requests, ","), fmt::join(steps, ","));
  close_parent(gpu, kDecode, 0);
}

void Timeline::tail(topo::GpuId gpu, std::uint64_t iteration, double start, double attend_s, double merge_s,
                    double gemm_s)
{
  tick();
  const double end = now();
  const double bounds[5] = {start, std::min(end, start + attend_s), std::min(end, start + attend_s + merge_s),
                            std::min(end, start + attend_s + merge_s + gemm_s), end};
  for (int i = 0; i < 4; ++i) {
    if (to_ns(bounds[i + 1]) <= to_ns(bounds[i])) continue; // takes no time (to the nanosecond)
    if (!open_event("X", gpu, kDecode, 0, kLegNames[static_cast<std::size_t>(Leg::kAttend) + i], "leg", bounds[i],
                    bounds[i + 1]))
      continue;
    fmt::format_to(std::back_inserter(line_), R"(,"iteration":{},"requester":{})", iteration, gpu);
    defer_event(gpu, kDecode, 0);
  }
}

void Timeline::moe(topo::GpuId gpu, std::uint64_t iteration, double start)
{
  tick();
  if (to_ns(now()) <= to_ns(start) || !open_event("X", gpu, kDecode, 0, to_string(Leg::kMoe), "leg", start, now()))
    return;
  fmt::format_to(std::back_inserter(line_), R"(,"iteration":{},"requester":{})", iteration, gpu);
  defer_event(gpu, kDecode, 0);
}

void Timeline::leg(Leg leg, const CallRef& c, double start, double end, double bytes)
{
  tick();
  if (to_ns(end) <= to_ns(start) || !open_event("X", c.requester, kCalls, c.lane, to_string(leg), "leg", start, end))
    return;
  put_call(c);
  if (bytes > 0) fmt::format_to(std::back_inserter(line_), R"(,"bytes":{:.0f})", bytes);
  defer_event(c.requester, kCalls, c.lane);
}

void Timeline::call(Primitive p, const CallRef& c, double start, double bytes)
{
  tick();
  if (!open_event("X", c.requester, kCalls, c.lane, to_string(p), "call", start, now())) {
    drop_held(c.requester, kCalls, c.lane);
    return;
  }
  put_call(c);
  if (bytes > 0) fmt::format_to(std::back_inserter(line_), R"(,"bytes":{:.0f})", bytes);
  close_parent(c.requester, kCalls, c.lane);
}

int Timeline::holder_begin(Leg leg, const CallRef& c)
{
  tick();
  const int lane = take_lane(leg == Leg::kKernel ? compute_lanes_[c.holder] : copy_lanes_[c.holder]);
  const double t = now();
  // A flow from the call on the requester to the holder's leg (Perfetto draws it as an arrow).
  const Kind kind = leg == Leg::kKernel ? kCompute : kCopies;
  if (open_event("s", c.requester, kCalls, c.lane, to_string(leg), "flow", t, t)) {
    fmt::format_to(std::back_inserter(line_), R"(,"id":{}}})", flows_);
    open_event("f", c.holder, kind, lane, to_string(leg), "flow", t, t);
    fmt::format_to(std::back_inserter(line_), R"(,"id":{},"bp":"e"}})", flows_++);
    flush_line();
  }
  return lane;
}

void Timeline::holder_end(Leg leg, const CallRef& c, int lane, double start, double bytes)
{
  tick();
  (leg == Leg::kKernel ? compute_lanes_[c.holder] : copy_lanes_[c.holder])[lane] = 0;
  if (!open_event("X", c.holder, leg == Leg::kKernel ? kCompute : kCopies, lane, to_string(leg), "leg", start, now()))
    return;
  put_call(c);
  if (bytes > 0) fmt::format_to(std::back_inserter(line_), R"(,"bytes":{:.0f})", bytes);
  close_event();
}

void Timeline::counter(int pid, const std::string& name, const char* key, double ts, double value)
{
  separate();
  fmt::format_to(std::back_inserter(line_), R"({{"ph":"C","name":"{}","pid":{},"tid":0,"ts":)", name, pid);
  put_us(line_, to_ns(ts));
  fmt::format_to(std::back_inserter(line_), R"(,"args":{{"{}":{:.6g}}}}})", key, value);
  flush_line();
}

void Timeline::show(Counter& c, int pid, const std::string& name, const char* key, double value)
{
  const double t = now();
  if (value == c.last || out_ == nullptr) return;
  if (t < from_ || t > to_) {
    c.last = value;
    return;
  }
  if (!c.shown && c.last != 0 && t > from_) counter(pid, name, key, from_, c.last); // its value as the window opens
  counter(pid, name, key, t, value);
  c.last = value;
  c.shown = true;
}

void Timeline::queue(Leg leg, topo::GpuId holder, int depth)
{
  tick();
  if (named_[holder][0] < 0 && now() >= from_ && now() <= to_) name_track(holder, kCompute, -1); // the process alone
  if (leg == Leg::kKernel)
    show(kernels_[holder], pid(holder), "kernels", "running", depth);
  else
    show(copies_[holder], pid(holder), "copy queue", "waiting", depth);
}

void Timeline::tick()
{
  if (now() >= next_sample_ && !idle_) sample();
}

void Timeline::sample()
{
  const double t = now();
  net_.moved_bytes(moved_);
  const double a = sample_t_;
  if (t > a && a >= from_ && a <= to_ && out_ != nullptr) { // (a sample before the window is a baseline)
    if (!network_named_) {
      put_meta(network_pid(), 0, "process_name", fmt::format(R"j("name":"{}: network (link utilisation)")j", policy_));
      put_meta(network_pid(), 0, "process_sort_index", fmt::format(R"("sort_index":{})", network_pid()));
      network_named_ = true;
    }
    for (std::size_t r = 0; r < moved_.size(); ++r) {
      if (moved_[r] == prev_[r] && links_[r].last == 0) continue;
      const double capacity = sc_.topology->link(static_cast<topo::LinkId>(r / 2)).bandwidth.value();
      const double u = std::round(std::max(0.0, moved_[r] - prev_[r]) / (capacity * (t - a)) * 1e6) / 1e6;
      if (u == links_[r].last) continue;
      counter(network_pid(), link_names_[r], "utilisation", a, u);
      links_[r].last = u;
    }
  }
  prev_.swap(moved_);
  sample_t_ = t;
  next_sample_ = t >= to_ ? std::numeric_limits<double>::infinity() : t < from_ ? from_ : t + period_;
}

void Timeline::busy()
{
  if (!idle_) return;
  idle_ = false;
  sample_t_ = now(); // nothing moved while idle: the last sample's bytes still hold
}

void Timeline::idle()
{
  if (idle_) return;
  sample();
  idle_ = true;
  const double t = now();
  if (out_ == nullptr || !in_window(t, t)) return;
  for (std::size_t r = 0; r < links_.size(); ++r)
    if (links_[r].last != 0) {
      counter(network_pid(), link_names_[r], "utilisation", t, 0);
      links_[r].last = 0;
    }
}

} // namespace xattn::sim::engine
