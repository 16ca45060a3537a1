#include "sim/engine/driver.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/failure.hpp"

#include "sim/engine/child_failure.hpp"
#include "sim/engine/ensemble.hpp"
#include "sim/engine/output.hpp"
#include "sim/engine/simulation.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace xattn::sim::engine
{
namespace fs = std::filesystem;
namespace
{

volatile std::sig_atomic_t g_stop = 0;
void on_signal(int sig)
{
  g_stop = sig;
}

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

// The child: one policy, one SimGrid engine. Never returns. Ensemble members write no CSVs and no
// timeline.
[[noreturn]] void child(const Scenario& sc, const Task& task, const CorpusPlan& plan, const fs::path& tmp,
                        const RunOptions& opt)
{
  const std::string& policy = task.policy;
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  const std::string name = task.stem();
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
            static_cast<int>(std::find(sc.policies.begin(), sc.policies.end(), policy) - sc.policies.begin());
      }
    }
    so.progress = opt.progress && task.member < 0;
    Simulation sim(sc, policy, plan, so);
    const std::string result = to_json(sim.run()).dump();
    // Whole or absent: the driver may read it while this process is being killed.
    core::write_file_atomically(tmp / (name + ".json"), result);
  } catch (const std::exception& e) {
    code = write_child_failure(tmp, name, e); // the parent rethrows the same type
  }
  std::fflush(nullptr);
  _exit(code);
}

// Catches SIGINT and SIGTERM for the whole run, from before the corpus is planned (a large trace
// takes seconds), and puts the previous handlers back however the run ends.
struct SignalGuard {
  struct sigaction old_int {
  }, old_term{};
  SignalGuard()
  {
    g_stop = 0;
    struct sigaction sa {
    };
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
  }
  ~SignalGuard()
  {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
  }
};

} // namespace

RunOutcome run_scenario(const Scenario& sc, const RunOptions& opt)
{
  const SignalGuard signals;
  if (!opt.timeline.empty()) check_timeline_path(opt.timeline);
  CorpusPlan plan = plan_corpus(sc); // bad input surfaces here, before anything is written
  RunOutcome outcome;
  outcome.out_dir = !opt.out_dir.empty() ? opt.out_dir : !sc.out_dir.empty() ? sc.out_dir : "out/" + sc.name;
  std::error_code ec;
  // The folders this run creates, deepest first: removed again if the run fails on bad input, so
  // that a failed run leaves nothing behind (docs/file-formats.md).
  std::vector<fs::path> created;
  for (fs::path p = fs::absolute(outcome.out_dir, ec); !p.empty() && !fs::exists(p, ec); p = p.parent_path())
    created.push_back(p);
  fs::create_directories(outcome.out_dir, ec);
  if (ec || !fs::is_directory(outcome.out_dir))
    core::fail(outcome.out_dir, 0, 0, "--out", "cannot create the output folder");
  const fs::path tmp = fs::path(outcome.out_dir) / (".partial-" + std::to_string(getpid()));
  fs::create_directories(tmp);

  const int jobs = opt.jobs > 0 ? opt.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<Task> tasks;
  for (const std::string& p : sc.policies)
    tasks.push_back({p, -1});
  const std::vector<Scenario> members = ensemble_members(sc, opt.ensemble);
  for (int k = 0; k < static_cast<int>(members.size()); ++k)
    for (const std::string& p : sc.policies)
      tasks.push_back({p, k});
  std::vector<std::pair<pid_t, std::string>> running;
  std::size_t next = 0;
  std::vector<ChildFailure> failures;
  std::fflush(nullptr);
  while ((next < tasks.size() || !running.empty()) && g_stop == 0) {
    while (next < tasks.size() && static_cast<int>(running.size()) < jobs) {
      const Task& task = tasks[next];
      pid_t pid = fork();
      if (pid == 0) child(task.member < 0 ? sc : members[static_cast<std::size_t>(task.member)], task, plan, tmp, opt);
      if (pid < 0) throw core::InternalError(std::string("fork failed: ") + std::strerror(errno));
      running.emplace_back(pid, tasks[next++].stem());
    }
    int status = 0;
    pid_t done = waitpid(-1, &status, 0);
    if (done < 0) continue; // interrupted by a signal: the loop checks g_stop
    auto it = std::find_if(running.begin(), running.end(), [done](const auto& r) { return r.first == done; });
    if (it == running.end()) continue;
    const std::string name = it->second;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failures.push_back(read_child_failure(tmp, name, status));
    running.erase(it);
  }

  // Gather what finished.
  std::vector<std::pair<std::string, PolicyResult>> policies;
  for (const std::string& p : sc.policies) {
    const fs::path j = tmp / (p + ".json");
    if (fs::exists(j)) policies.emplace_back(p, policy_result(nlohmann::json::parse(read_file(j))));
  }
  if (g_stop != 0) {
    for (auto& [pid, p] : running)
      kill(pid, SIGTERM);
    for (auto& [pid, p] : running)
      waitpid(pid, nullptr, 0);
    outcome.result = make_result(sc, std::move(policies));
    outcome.result.interrupted = true;
    outcome.result.signal = static_cast<int>(g_stop);
    outcome.summary = to_json(outcome.result);
    core::write_file_atomically((fs::path(outcome.out_dir) / "summary.interrupted.json").string(),
                                outcome.summary.dump(2) + "\n");
    fs::remove_all(tmp, ec);
    outcome.exit_code = core::code(core::ExitCode::kInterrupted);
    return outcome;
  }
  if (!failures.empty()) {
    fs::remove_all(tmp, ec);
    for (const fs::path& p : created)
      fs::remove(p, ec); // only an empty folder goes
    throw_child_failures(sc.file, failures);
  }
  outcome.result = make_result(sc, std::move(policies));
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
  outcome.table = comparison_table(outcome.result);
  outcome.exit_code = core::code(outcome.result.ok ? core::ExitCode::kOk : core::ExitCode::kCheckFailed);
  return outcome;
}

} // namespace xattn::sim::engine
