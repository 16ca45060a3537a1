#include "sim/study/local.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/error.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <stdexcept>
#include <thread>

namespace xattn::sim::study
{
namespace fs = std::filesystem;

namespace
{
volatile std::sig_atomic_t g_stop = 0;
void on_signal(int sig)
{
  g_stop = sig;
}

using Clock = std::chrono::steady_clock;

struct Running {
  const ManifestPoint* point;
  Clock::time_point start;
};

/// Starts `xattn run` for one point in its own process group, output to the point's run.log.
pid_t launch(const Manifest& m, const ManifestPoint& p, const std::string& dir, int jobs)
{
  const std::string pd = point_dir(dir, p.id);
  fs::create_directories(pd);
  std::error_code gone;
  fs::remove(refusal_path(dir, p.id), gone); // an earlier run's: this one leaves its own
  std::vector<std::string> args = run_args(m, p, dir, jobs);
  args.insert(args.begin(), m.exe);
  std::vector<char*> argv;
  for (std::string& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string log = pd + "/run.log";
  std::fflush(nullptr);
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    setpgid(0, 0);
    // A point's run dies with the sweep (even a SIGKILLed one): a resumed sweep must not find it
    // still writing into the folder it reruns.
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(127);
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    execv(argv[0], argv.data());
    std::perror(("cannot run " + args[0]).c_str());
    _exit(127);
  }
  setpgid(pid, pid); // both sides set it: no race with an early signal
  return pid;
}

// DIR/.lock, held (flock) by the driver and, inherited, by every process it starts, so that it is
// free only once all of them are gone: one local sweep writes into a folder at a time, and a
// resumed sweep starts only after every process of a killed one has ended. The descriptor stays
// open in the children on purpose (no close-on-exec).
class SweepLock
{
public:
  explicit SweepLock(const std::string& dir)
  {
    const std::string path = (fs::path(dir) / ".lock").string();
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT, 0644);
    if (fd_ < 0) core::fail(path, 0, 0, "--out", "cannot open the sweep's lock file");
    // A killed sweep's processes end within milliseconds (they die with their parent); another
    // sweep at work in the folder holds it for good.
    const auto give_up = Clock::now() + std::chrono::seconds(10);
    while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      if (Clock::now() > give_up) {
        ::close(fd_);
        core::fail(dir, 0, 0, "--out",
                   "another sweep is running in this folder (its processes hold .lock): wait for it to end or "
                   "choose another --out");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ~SweepLock() { ::close(fd_); }
  SweepLock(const SweepLock&) = delete;
  SweepLock& operator=(const SweepLock&) = delete;

private:
  int fd_ = -1;
};

std::string describe(const ManifestPoint& p)
{
  std::string s;
  for (const auto& [k, v] : p.values)
    s += k + "=" + v + " ";
  return s + "seed=" + std::to_string(p.seed);
}
// The manifest's points still to run (of opt.only, where given), in order; `skipped` counts the
// complete ones. Each point's folder loses what killed runs left behind.
std::vector<const ManifestPoint*> points_to_run(const Manifest& m, const std::string& dir, const LocalOptions& opt,
                                                int& skipped)
{
  std::vector<const ManifestPoint*> todo;
  for (const ManifestPoint& p : m.points) {
    core::remove_temporaries(point_dir(dir, p.id), true);
    if (!opt.only.empty() && std::find(opt.only.begin(), opt.only.end(), p.id) == opt.only.end()) continue;
    if (point_complete(dir, p.id)) {
      ++skipped;
      continue;
    }
    todo.push_back(&p);
  }
  return todo;
}
} // namespace

LocalOutcome run_local(const Manifest& m, const std::string& dir, const LocalOptions& opt)
{
  const auto t0 = Clock::now();
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int workers = opt.workers > 0 ? opt.workers : cores;
  const int jobs = std::max(1, cores / workers); // policies at once inside each point
  LocalOutcome out;
  const SweepLock lock(dir);
  // What killed runs left behind: temporaries whose process is gone (the lock says every process of
  // an earlier sweep is), which no reader takes for a result but which would stay forever.
  core::remove_temporaries(dir, true);

  const std::vector<const ManifestPoint*> todo = points_to_run(m, dir, opt, out.skipped);
  log_line(dir, "local: " + std::to_string(todo.size()) + " points to run, " + std::to_string(out.skipped) +
                    " complete, " + std::to_string(workers) + " workers");

  g_stop = 0;
  struct sigaction sa {
  }, old_int{}, old_term{};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);

  std::map<pid_t, Running> running;
  std::size_t next = 0, finished = 0;
  const bool tty = isatty(STDERR_FILENO) == 1;
  bool status_shown = false; // a terminal status line awaits its newline
  bool signalled = false;
  Clock::time_point stop_at{};
  while (next < todo.size() || !running.empty()) {
    if (g_stop != 0 && !signalled) {
      signalled = true;
      stop_at = Clock::now();
      log_line(dir, "interrupted (signal " + std::to_string(static_cast<int>(g_stop)) + "): stopping " +
                        std::to_string(running.size()) + " running points");
      for (const auto& [pid, r] : running)
        kill(-pid, SIGINT);
    }
    if (signalled && Clock::now() - stop_at > std::chrono::seconds(20))
      for (const auto& [pid, r] : running)
        kill(-pid, SIGKILL);
    while (g_stop == 0 && next < todo.size() && static_cast<int>(running.size()) < workers) {
      const ManifestPoint* p = todo[next++];
      pid_t pid = launch(m, *p, dir, jobs);
      running[pid] = {p, Clock::now()};
      log_line(dir, "start " + p->id + " " + describe(*p));
    }
    if (g_stop != 0 && running.empty()) break;
    int status = 0;
    pid_t done = waitpid(-1, &status, WNOHANG);
    if (done <= 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    auto it = running.find(done);
    if (it == running.end()) continue;
    const ManifestPoint& p = *it->second.point;
    const double secs = std::chrono::duration<double>(Clock::now() - it->second.start).count();
    const int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    running.erase(it);
    core::remove_temporaries(point_dir(dir, p.id), true); // a killed run's, now that it has ended
    ++finished;
    if (point_complete(dir, p.id)) {
      ++out.ran;
      log_line(dir, "done " + p.id + " rc=" + std::to_string(rc) + " " + std::to_string(secs) + "s");
      if (opt.progress) {
        // On a terminal one line, rewritten in place; in a log one line per point (ids are in sweep.log).
        const std::string line = fmt::format("[{}/{}] {} ({:.1f} s)", finished, todo.size(), describe(p), secs);
        std::cerr << (tty ? "\r" + line + "\033[K" : line + "\n") << std::flush;
        status_shown = tty;
      }
    } else if (g_stop == 0) {
      ++out.failed;
      out.failed_ids.push_back(p.id);
      // A refused point (its data does not fit, refusal_path) is a failure a plan judges, not a crash.
      const bool refused = read_refusal(dir, p.id).has_value();
      const std::string word = refused ? "REFUSED" : "FAILED";
      log_line(dir, word + " " + p.id + " rc=" + std::to_string(rc) + " log " + point_dir(dir, p.id) + "/run.log");
      if (opt.progress) {
        std::cerr << (status_shown ? "\n" : "") << "[" << finished << "/" << todo.size() << "] " << word << " "
                  << describe(p)
                  << (refused ? ": its data does not fit in memory" : " (exit " + std::to_string(rc) + ")") << ": see "
                  << point_dir(dir, p.id) << "/run.log\n";
        status_shown = false;
      }
    }
  }
  if (status_shown) std::cerr << "\n";
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  out.interrupted = g_stop != 0;
  out.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  log_line(dir, "local: ran " + std::to_string(out.ran) + ", skipped " + std::to_string(out.skipped) + ", failed " +
                    std::to_string(out.failed) + (out.interrupted ? ", interrupted" : "") + " in " +
                    std::to_string(out.wall_s) + "s");
  return out;
}

} // namespace xattn::sim::study
