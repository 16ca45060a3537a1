#include "sim/engine/driver.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/failure.hpp"
#include "sim/core/memory.hpp"

#include "sim/engine/child_failure.hpp"
#include "sim/engine/ensemble.hpp"
#include "sim/engine/output.hpp"
#include "sim/engine/run_folder.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/engine/stop.hpp"
#include "sim/engine/timeline.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace xattn::sim::engine
{
namespace fs = std::filesystem;
namespace
{

std::string read_file(const fs::path& p)
{
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// One simulation to run: a policy on the scenario as given (member -1) or on ensemble member k.
struct Task {
  std::string policy;
  int member = -1;
  std::string stem() const { return member < 0 ? policy : policy + ".member" + std::to_string(member); }
};

// How long the children of a stopped run may take to hand in their figures before they are killed.
constexpr auto kStopGrace = std::chrono::seconds(10);

// Whole or absent: the driver may read it while this process is being killed.
void write_partial(Simulation& sim, const fs::path& tmp, const std::string& name)
{
  core::write_file_atomically(tmp / (name + ".partial.json"), to_json(sim.partial_results()).dump());
}

// The child: one policy, one SimGrid engine, `memory` bytes at most. Never returns. Ensemble
// members write no CSVs and no timeline. Stopped by a signal or its memory guard, it hands in its
// figures so far (NAME.partial.json) and ends with 130 or the guard's exit code.
[[noreturn]] void child(const Scenario& sc, const Task& task, const PlacedCorpus& placed, const fs::path& tmp,
                        const RunOptions& opt, core::Bytes memory, const std::string& memory_origin, pid_t parent)
{
  // Nothing of a simulation is of use once its parent is gone (killed, even by SIGKILL): it goes too.
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(core::code(core::ExitCode::kInternal));
  const std::string name = task.stem();
  core::memory_guard().arm(memory, "engine.max_memory", memory_origin);
  int code = 0;
  try {
    SimulationOptions so;
    if (task.member < 0) {
      so.requests_csv = (tmp / (name + ".requests.csv")).string();
      so.links_csv = (tmp / (name + ".links.csv")).string();
      so.holders_csv = (tmp / (name + ".holders.csv")).string();
      if (!opt.timeline.empty()) {
        so.timeline.path = (tmp / (name + ".timeline.json")).string();
        so.timeline.window = opt.window;
        so.timeline.policy_index =
            static_cast<int>(std::find(sc.policies.begin(), sc.policies.end(), task.policy) - sc.policies.begin());
      }
    }
    so.progress = opt.progress && task.member < 0;
    so.catch_signals = true;
    Simulation sim(sc, task.policy, placed, so);
    try {
      const std::string result = to_json(sim.run()).dump();
      core::write_file_atomically(tmp / (name + ".json"), result);
    } catch (const Interrupted&) {
      write_partial(sim, tmp, name);
      code = core::code(core::ExitCode::kInterrupted);
    } catch (const core::LimitError&) {
      write_partial(sim, tmp, name);
      throw;
    }
  } catch (const Interrupted&) { // before the first event: nothing done yet
    code = core::code(core::ExitCode::kInterrupted);
  } catch (const std::exception& e) {
    code = write_child_failure(tmp, name, e); // the parent rethrows the same type
  }
  std::fflush(nullptr);
  _exit(code);
}

// Asks the running children to stop (SIGTERM: each hands in its figures so far) and reaps them;
// one still running after kStopGrace is killed.
void stop_children(const std::vector<std::pair<pid_t, std::string>>& running)
{
  for (const auto& [pid, name] : running)
    kill(pid, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + kStopGrace;
  for (const auto& [pid, name] : running) {
    for (;;) {
      const pid_t r = waitpid(pid, nullptr, WNOHANG);
      if (r == pid || (r < 0 && errno != EINTR)) break;
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
}

// The policies' results in the scenario's order: complete ones, and with `partial` the figures so
// far of those stopped part-way.
std::vector<std::pair<std::string, PolicyResult>> gather(const Scenario& sc, const fs::path& tmp, bool partial)
{
  std::vector<std::pair<std::string, PolicyResult>> policies;
  for (const std::string& p : sc.policies) {
    const fs::path whole = tmp / (p + ".json"), part = tmp / (p + ".partial.json");
    if (fs::exists(whole))
      policies.emplace_back(p, policy_result(nlohmann::json::parse(read_file(whole))));
    else if (partial && fs::exists(part))
      policies.emplace_back(p, policy_result(nlohmann::json::parse(read_file(part))));
  }
  return policies;
}

// Arms the process's memory guard for its lifetime.
struct GuardScope {
  GuardScope(core::Bytes limit, const std::string& origin)
  {
    core::memory_guard().arm(limit, "engine.max_memory", origin);
  }
  ~GuardScope() { core::memory_guard().disarm(); }
  GuardScope(const GuardScope&) = delete;
  GuardScope& operator=(const GuardScope&) = delete;
};

} // namespace

namespace
{
// The run's output folder, with its parents and its partial folder (returned). `created`: the
// folders this run made, deepest first, removed again if the run fails on bad input, so that a
// failed run leaves nothing behind (docs/file-formats.md).
fs::path make_folders(const std::string& dir, std::vector<fs::path>& created)
{
  std::error_code ec;
  for (fs::path p = fs::absolute(dir, ec); !p.empty() && !fs::exists(p, ec); p = p.parent_path())
    created.push_back(p);
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) core::fail(dir, 0, 0, "--out", "cannot create the output folder");
  const fs::path tmp = core::partial_folder(dir);
  fs::create_directories(tmp);
  return tmp;
}

// The policies' processes: those still running, those that failed, and the one whose memory guard
// stopped it (the run then stops).
struct Children {
  std::vector<std::pair<pid_t, std::string>> running;
  std::vector<ChildFailure> failures;
  std::optional<ChildFailure> limit;
};

// Runs every task in a process of its own, `jobs` at once, until all have ended, a signal came, or
// a process's memory guard stopped it. engine.max_memory is the whole run's: each of the processes
// running at once gets its share.
Children run_children(const Scenario& sc, const std::vector<Task>& tasks, const std::vector<Scenario>& members,
                      const PlacedCorpus& placed, const fs::path& tmp, const RunOptions& opt, int jobs)
{
  const int at_once = std::max(1, std::min(jobs, static_cast<int>(tasks.size())));
  const core::Bytes share = sc.max_memory / at_once;
  const std::string share_origin =
      at_once == 1 ? "this policy's process, all of " + sc.max_memory_origin
                   : fmt::format("this policy's process, 1/{} of {}", at_once, sc.max_memory_origin);
  Children c;
  std::size_t next = 0;
  std::fflush(nullptr);
  while ((next < tasks.size() || !c.running.empty()) && stop_signal() == 0 && !c.limit) {
    while (next < tasks.size() && static_cast<int>(c.running.size()) < jobs) {
      const Task& task = tasks[next];
      const pid_t parent = getpid();
      pid_t pid = fork();
      if (pid == 0)
        child(task.member < 0 ? sc : members[static_cast<std::size_t>(task.member)], task, placed, tmp, opt, share,
              share_origin, parent);
      if (pid < 0) throw core::InternalError(std::string("fork failed: ") + std::strerror(errno));
      c.running.emplace_back(pid, tasks[next++].stem());
    }
    int status = 0;
    pid_t done = waitpid(-1, &status, 0);
    if (done < 0) continue; // interrupted by a signal: the loop checks stop_signal()
    auto it = std::find_if(c.running.begin(), c.running.end(), [done](const auto& r) { return r.first == done; });
    if (it == c.running.end()) continue;
    const std::string name = it->second;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      ChildFailure f = read_child_failure(tmp, name, status);
      if (f.kind == core::FailureKind::kLimit && !c.limit) c.limit = f;
      c.failures.push_back(std::move(f));
    }
    c.running.erase(it);
  }
  return c;
}

// Stopped early (a signal, a memory guard, or while reading the workload): what finished, and the
// others' figures so far (docs/file-formats.md).
RunOutcome stopped_early(const Scenario& sc, RunOutcome outcome, const RunFolder& folder, const fs::path& tmp,
                         Children& c)
{
  std::error_code ec;
  stop_children(c.running);
  outcome.result = make_result(sc, gather(sc, tmp, true));
  outcome.result.run_id = folder.id;
  outcome.result.interrupted = true;
  outcome.result.signal = stop_signal();
  const fs::path summary = fs::path(outcome.out_dir) / "summary.interrupted.json";
  if (c.limit) {
    outcome.result.limit = c.limit->name;
    outcome.result.limit_message = c.limit->policy + ": " + c.limit->message;
  }
  outcome.summary = to_json(outcome.result);
  core::write_file_atomically(summary.string(), outcome.summary.dump(2) + "\n");
  fs::remove_all(tmp, ec);
  if (c.limit) {
    for (ChildFailure& f : c.failures)
      if (f.kind == core::FailureKind::kLimit) f.message += " (figures so far in " + summary.string() + ")";
    throw_child_failures(sc.file, c.failures);
  }
  outcome.exit_code = core::code(core::ExitCode::kInterrupted);
  return outcome;
}
} // namespace

RunOutcome run_scenario(const Scenario& sc, const RunOptions& opt)
{
  const StopSignals signals;
  if (!opt.timeline.empty()) check_timeline_path(opt.timeline);
  PlacedCorpus placed;
  bool stopped_before = false;
  {
    // Reading the workload (a corpus prescan) is this process's alone: the whole limit.
    const GuardScope guard(sc.max_memory, "reading the workload, all of " + sc.max_memory_origin);
    try {
      placed = place_corpus(sc); // bad input surfaces here, before anything is written
    } catch (const Interrupted&) {
      stopped_before = true;
    }
  }
  const RunFolder folder = choose_folder(sc, opt);
  RunOutcome outcome;
  outcome.out_dir = folder.dir;
  std::error_code ec;
  std::vector<fs::path> created;
  const fs::path tmp = make_folders(outcome.out_dir, created);

  const int jobs = opt.jobs > 0 ? opt.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<Task> tasks;
  for (const std::string& p : sc.policies)
    tasks.push_back({p, -1});
  const std::vector<Scenario> members = stopped_before ? std::vector<Scenario>{} : ensemble_members(sc, opt.ensemble);
  for (int k = 0; k < static_cast<int>(members.size()); ++k)
    for (const std::string& p : sc.policies)
      tasks.push_back({p, k});
  Children children;
  if (!stopped_before) children = run_children(sc, tasks, members, placed, tmp, opt, jobs);
  if (stop_signal() != 0 || children.limit || stopped_before) return stopped_early(sc, outcome, folder, tmp, children);
  if (!children.failures.empty()) {
    fs::remove_all(tmp, ec);
    for (const fs::path& p : created)
      fs::remove(p, ec); // only an empty folder goes
    throw_child_failures(sc.file, children.failures);
  }
  outcome.result = make_result(sc, gather(sc, tmp, false));
  outcome.result.run_id = folder.id;
  if (!members.empty()) {
    std::vector<std::vector<std::pair<std::string, PolicyResult>>> runs(members.size());
    for (std::size_t k = 0; k < members.size(); ++k)
      for (const std::string& p : sc.policies)
        runs[k].emplace_back(
            p, policy_result(nlohmann::json::parse(read_file(tmp / (Task{p, static_cast<int>(k)}.stem() + ".json")))));
    outcome.result.ensemble = summarise_ensemble(runs, !sc.profile.uncertainty.empty());
    outcome.result.ok = outcome.result.ok && outcome.result.ensemble->ok;
  }
  outcome.summary = to_json(outcome.result);
  if (!opt.timeline.empty()) write_timeline(sc, tmp, opt.timeline, opt.window);
  write_outputs(sc, outcome.result, tmp, outcome.out_dir);
  fs::remove_all(tmp, ec);
  link_latest(folder);
  if (!folder.latest.empty()) outcome.latest = folder.latest.string();
  outcome.table = comparison_table(outcome.result);
  outcome.exit_code = core::code(outcome.result.ok ? core::ExitCode::kOk : core::ExitCode::kCheckFailed);
  return outcome;
}

} // namespace xattn::sim::engine
