// The long tier (sim/bench/long.tsv): checks and speed ratios of minutes each, run one after the
// other as whole processes. A check holds when its command exits 0 (77: skipped, a file it needs is
// absent); a ratio is the command's wall time over its reference's, both measured in this run, so
// that a busy machine slows both and moves the ratio less than either time.
#include "sim/bench/bench.hpp"
#include "sim/core/error.hpp"

#include <fmt/format.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

namespace xattn::bench
{
namespace fs = std::filesystem;

namespace
{
std::vector<std::string> split_tabs(const std::string& line)
{
  std::vector<std::string> cells;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, '\t'))
    cells.push_back(cell);
  return cells;
}

std::string expand(std::string command, const std::string& xattn, const std::string& src)
{
  const std::string build = fs::path(xattn).parent_path().string();
  for (auto [key, value] : {std::pair{std::string("{xattn}"), xattn}, std::pair{std::string("{src}"), src},
                            std::pair{std::string("{build}"), build}})
    for (std::size_t at; (at = command.find(key)) != std::string::npos;)
      command.replace(at, key.size(), value);
  return command;
}

struct Ran {
  int exit = -1;
  double wall_s = 0;
  double peak_rss_mib = 0;
  std::string log; ///< the command's stdout and stderr
};

/// Runs `command` with bash in `dir`, its output into `dir`/NAME.log.
Ran run(const std::string& command, const fs::path& dir, const std::string& name)
{
  fs::create_directories(dir);
  const fs::path log = dir / (name + ".log");
  const auto start = std::chrono::steady_clock::now();
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || chdir(dir.c_str()) != 0) _exit(126);
    dup2(fd, 1);
    dup2(fd, 2);
    execl("/bin/bash", "bash", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  Ran r;
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  r.wall_s = since(start);
  r.exit = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.peak_rss_mib = static_cast<double>(usage.ru_maxrss) / 1024.0;
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  r.log = text.str();
  return r;
}

/// The lines of a check's output that state a figure against its bound or the verdict.
std::string figures(const std::string& log)
{
  std::string out;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("ok ", 0) == 0 || line.rfind("FAIL", 0) == 0 || line.rfind("PASS", 0) == 0 ||
        line.rfind("skip", 0) == 0)
      out += "    " + line + "\n";
  return out;
}

std::string tail(const std::string& log, int lines)
{
  std::size_t at = log.size();
  for (int n = 0; n <= lines && at > 0; ++n)
    at = log.rfind('\n', at - 1);
  return log.substr(at == std::string::npos ? 0 : at + 1);
}
} // namespace

std::vector<LongItem> load_long_items(const std::string& path)
{
  std::ifstream in(path);
  if (!in) core::fail(path, 0, 0, "", "cannot read the long tier's list");
  std::vector<LongItem> items;
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> c = split_tabs(line);
    const auto bad = [&](const std::string& what) { core::fail(path, line_no, 0, "", what); };
    if (c.size() != 6) bad(fmt::format("expected 6 tab-separated columns, got {}", c.size()));
    LongItem it{.name = c[0], .command = c[3], .reference = c[4], .why = c[5]};
    if (c[1] == "check") {
      it.ratio = false;
      if (c[2] != "-" || c[4] != "-") bad("a check has no bound and no reference: write -");
    } else if (c[1] == "ratio") {
      it.ratio = true;
      std::istringstream b(c[2]);
      std::string op;
      b >> op >> it.bound;
      if ((op != "<=" && op != ">=") || b.fail() || !(it.bound > 0))
        bad("bound: expected '<= X' or '>= X', got '" + c[2] + "'");
      it.at_most = op == "<=";
      if (c[4] == "-") bad("a ratio needs a reference command");
    } else {
      bad("kind: expected check or ratio, got '" + c[1] + "'");
    }
    items.push_back(std::move(it));
  }
  return items;
}

nlohmann::json run_long_item(const LongItem& item, const std::string& xattn, const std::string& src,
                             const std::string& work)
{
  const fs::path dir = fs::path(work) / item.name;
  std::error_code ec;
  fs::remove_all(dir, ec); // outputs of an earlier bench run
  const std::string command = expand(item.command, xattn, src);
  nlohmann::json j{
      {"name", item.name}, {"kind", item.ratio ? "ratio" : "check"}, {"command", command}, {"why", item.why}};
  std::cout << fmt::format("long: {} ({})\n  $ {}\n", item.name, item.why, command) << std::flush;
  const Ran a = run(command, dir, "command");
  j["wall_s"] = a.wall_s;
  j["exit"] = a.exit;
  j["peak_rss_mib"] = a.peak_rss_mib;
  if (!item.ratio) {
    j["skipped"] = a.exit == 77;
    j["ok"] = a.exit == 0 || a.exit == 77;
    std::cout << figures(a.log);
    std::cout << fmt::format("  {}: exit {}, {:.1f} s, {:.0f} MiB\n",
                             a.exit == 0    ? "ok"
                             : a.exit == 77 ? "skipped"
                                            : "FAIL",
                             a.exit, a.wall_s, a.peak_rss_mib);
    if (a.exit != 0 && a.exit != 77) std::cout << tail(a.log, 20);
    return j;
  }
  const std::string reference = expand(item.reference, xattn, src);
  std::cout << fmt::format("  $ {}   (the reference)\n", reference) << std::flush;
  const Ran b = run(reference, dir, "reference");
  j["reference"] = {{"command", reference}, {"wall_s", b.wall_s}, {"exit", b.exit}, {"peak_rss_mib", b.peak_rss_mib}};
  const double ratio = a.wall_s / b.wall_s;
  const bool ran = a.exit == 0 && b.exit == 0;
  const bool within = item.at_most ? ratio <= item.bound : ratio >= item.bound;
  j["ratio"] = ratio;
  j["bound"] = fmt::format("{} {}", item.at_most ? "<=" : ">=", item.bound);
  j["ok"] = ran && within;
  std::cout << fmt::format("  {}: ratio {:.3f} ({} {}), {:.1f} s against {:.1f} s, {:.0f} and {:.0f} MiB\n",
                           !ran     ? "FAIL (a command failed)"
                           : within ? "ok"
                                    : "FAIL",
                           ratio, item.at_most ? "<=" : ">=", item.bound, a.wall_s, b.wall_s, a.peak_rss_mib,
                           b.peak_rss_mib);
  if (a.exit != 0) std::cout << tail(a.log, 20);
  if (b.exit != 0) std::cout << tail(b.log, 20);
  return j;
}

} // namespace xattn::bench
