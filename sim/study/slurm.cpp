#include "sim/study/slurm.hpp"
#include "sim/core/atomic_file.hpp"

#include "sim/engine/driver.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace xattn::sim::study
{
namespace fs = std::filesystem;

namespace
{
std::string quote(const std::string& s)
{
  std::string q = "'";
  for (char c : s)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

struct Captured {
  int rc = 0;
  std::string out;
};

Captured capture(const std::string& cmd)
{
  Captured c;
  std::fflush(nullptr);
  FILE* f = popen((cmd + " 2>&1").c_str(), "r");
  if (f == nullptr) return {127, "cannot start: " + cmd};
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;)
    c.out.append(buf, n);
  int st = pclose(f);
  c.rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
  return c;
}

std::vector<std::string> lines_of(const fs::path& p)
{
  std::vector<std::string> out;
  std::ifstream in(p);
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) out.push_back(l);
  return out;
}
} // namespace

bool slurm_available()
{
  return capture("command -v sbatch >/dev/null && command -v squeue >/dev/null").rc == 0;
}

void write_slurm_files(const Manifest& m, const std::string& dir, const SlurmOptions& opt)
{
  const fs::path sd = fs::path(dir) / "slurm";
  fs::create_directories(sd / "logs");
  std::string tasks;
  for (const ManifestPoint& p : m.points) {
    tasks += p.id + "\n";
    fs::create_directories(point_dir(dir, p.id));
    std::string args;
    for (const std::string& a : run_args(m, p, dir, opt.cpus_per_task))
      args += a + "\n";
    core::write_file_atomically(point_dir(dir, p.id) + "/args", args);
  }
  core::write_file_atomically((sd / "tasks.txt").string(), tasks);
  std::string script = "#!/bin/bash\n"
                       "# Written by `xattn sweep --backend slurm`: array task i runs point i of tasks.txt.\n"
                       "set -u\n"
                       "DIR=" +
                       quote(fs::absolute(dir).string()) +
                       "\n"
                       "ID=$(sed -n \"$((SLURM_ARRAY_TASK_ID + 1))p\" \"$DIR/slurm/tasks.txt\")\n"
                       "echo \"xattn sweep: task $SLURM_ARRAY_TASK_ID point $ID on $(hostname)\"\n"
                       "mapfile -t ARGS < \"$DIR/points/$ID/args\"\n"
                       "exec " +
                       quote(m.exe) + " \"${ARGS[@]}\"\n";
  core::write_file_atomically((sd / "array.sh").string(), script);
  fs::permissions(sd / "array.sh", fs::perms::owner_exec | fs::perms::group_exec, fs::perm_options::add);
  std::string sargs = "--job-name=xattn-" + m.name + "\n--cpus-per-task=" + std::to_string(opt.cpus_per_task) + "\n";
  if (!opt.partition.empty()) sargs += "--partition=" + opt.partition + "\n";
  if (!opt.time.empty()) sargs += "--time=" + opt.time + "\n";
  for (const std::string& e : opt.extra)
    sargs += e + "\n";
  core::write_file_atomically((sd / "sbatch.args").string(), sargs);
}

std::string ranges(const std::vector<int>& tasks)
{
  std::vector<int> t = tasks;
  std::sort(t.begin(), t.end());
  std::string out;
  for (std::size_t i = 0; i < t.size();) {
    std::size_t j = i;
    while (j + 1 < t.size() && t[j + 1] == t[j] + 1)
      ++j;
    out += (out.empty() ? "" : ",") + std::to_string(t[i]) + (j > i ? "-" + std::to_string(t[j]) : "");
    i = j + 1;
  }
  return out;
}

std::vector<int> parse_task_ids(const std::string& field)
{
  std::string f = field.substr(0, field.find('%'));
  f.erase(std::remove_if(f.begin(), f.end(), [](char c) { return c == '[' || c == ']' || c == ' ' || c == '\n'; }),
          f.end());
  std::vector<int> out;
  std::stringstream ss(f);
  for (std::string part; std::getline(ss, part, ',');) {
    if (part.empty() || part == "N/A") continue;
    try {
      auto dash = part.find('-');
      int a = std::stoi(part.substr(0, dash));
      int b = dash == std::string::npos ? a : std::stoi(part.substr(dash + 1));
      for (int i = a; i <= b; ++i)
        out.push_back(i);
    } catch (const std::exception&) {
    }
  }
  return out;
}

Submission submit(const std::string& dir, const std::vector<int>& tasks)
{
  const fs::path sd = fs::absolute(fs::path(dir) / "slurm");
  std::string cmd = "sbatch --parsable --array=" + ranges(tasks) + " --output=" + quote((sd / "logs/%a.out").string()) +
                    " --chdir=" + quote(sd.string());
  for (const std::string& a : lines_of(sd / "sbatch.args"))
    cmd += " " + quote(a);
  cmd += " " + quote((sd / "array.sh").string());
  Captured c = capture(cmd);
  std::string id = c.out.substr(0, c.out.find_first_of(";\n"));
  if (c.rc != 0 || id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
    throw std::runtime_error("sbatch failed (exit " + std::to_string(c.rc) + "): " + c.out);
  std::ofstream(sd / "jobs.txt", std::ios::app) << id << " " << ranges(tasks) << "\n";
  log_line(dir, "slurm: submitted job " + id + " tasks " + ranges(tasks));
  return {id, tasks};
}

std::vector<int> active_tasks(const std::string& dir)
{
  std::set<int> active;
  for (const std::string& line : lines_of(fs::path(dir) / "slurm" / "jobs.txt")) {
    std::string job = line.substr(0, line.find(' '));
    // An id Slurm has forgotten makes squeue fail: then none of its tasks is queued.
    Captured c = capture("squeue -h -r -j " + quote(job) + " -o %K");
    if (c.rc != 0) continue;
    std::stringstream ss(c.out);
    for (std::string l; std::getline(ss, l);)
      for (int t : parse_task_ids(l))
        active.insert(t);
  }
  return {active.begin(), active.end()};
}

bool wait_for_tasks(const std::string& dir, double timeout_s, bool progress)
{
  const auto t0 = std::chrono::steady_clock::now();
  std::size_t last = static_cast<std::size_t>(-1);
  while (true) {
    std::vector<int> a = active_tasks(dir);
    if (a.empty()) return true;
    if (progress && a.size() != last) std::cerr << "slurm: " << a.size() << " tasks queued or running\n";
    last = a.size();
    if (timeout_s > 0 && std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > timeout_s)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

Collection collect(const Manifest& m, const std::string& dir)
{
  Collection c;
  c.table = write_table(m, dir);
  std::vector<int> queue = active_tasks(dir);
  for (std::size_t i = 0; i < m.points.size(); ++i) {
    if (point_complete(dir, m.points[i].id)) continue;
    int t = static_cast<int>(i);
    (std::find(queue.begin(), queue.end(), t) != queue.end() ? c.pending : c.failed).push_back(t);
  }
  log_line(dir, "collect: " + std::to_string(c.table.points_complete) + " complete, " +
                    std::to_string(c.pending.size()) + " pending, " + std::to_string(c.failed.size()) + " failed");
  return c;
}

std::string task_log(const std::string& dir, int task)
{
  return (fs::path(dir) / "slurm" / "logs" / (std::to_string(task) + ".out")).string();
}

} // namespace xattn::sim::study
