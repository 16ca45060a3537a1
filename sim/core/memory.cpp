#include "sim/core/memory.hpp"

#include "sim/core/error.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>

namespace xattn::core
{
namespace
{
constexpr double kMiB = 1048576.0;

// Fields of /proc/self/statm, pages: size resident shared text lib data dt.
bool statm(double& size_pages, double& resident_pages)
{
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return false;
  unsigned long long size = 0, resident = 0;
  const bool ok = std::fscanf(f, "%llu %llu", &size, &resident) == 2;
  std::fclose(f);
  size_pages = static_cast<double>(size);
  resident_pages = static_cast<double>(resident);
  return ok;
}

double page_bytes()
{
  static const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  return page;
}

// A number from a one-value file (cgroup's memory.max, memory.current); nullopt for "max" or none.
std::optional<double> file_number(const char* path)
{
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text == "max") return std::nullopt;
  try {
    return std::stod(text);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

double meminfo_available()
{
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::istringstream ss(line.substr(13));
      double kb = 0;
      if (ss >> kb) return kb * 1024.0;
    }
  return 0;
}

double cgroup_left()
{
  // cgroup v2 (the process's namespace root), then v1. Limits above 2^60 mean "none" in v1.
  for (auto [max, cur] :
       {std::pair{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"},
        std::pair{"/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"}}) {
    const auto m = file_number(max);
    if (!m || *m >= 1.15e18) continue;
    return std::max(0.0, *m - file_number(cur).value_or(0.0));
  }
  return 0;
}

std::string gib(double b)
{
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1fGiB", b / (1024.0 * kMiB));
  return buf;
}
} // namespace

Bytes resident_bytes()
{
  double size = 0, resident = 0;
  return Bytes(statm(size, resident) ? resident * page_bytes() : 0.0);
}

Bytes address_space_bytes()
{
  double size = 0, resident = 0;
  return Bytes(statm(size, resident) ? size * page_bytes() : 0.0);
}

Bytes address_space_limit()
{
  rlimit rl{};
  if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return Bytes(0);
  return Bytes(static_cast<double>(rl.rlim_cur));
}

Bytes available_memory()
{
  const double avail = meminfo_available(), cg = cgroup_left();
  if (avail > 0 && cg > 0) return Bytes(std::min(avail, cg));
  return Bytes(std::max(avail, cg));
}

Bytes default_memory_limit()
{
  const double avail = available_memory().value();
  double limit = avail > 0 ? avail / 2 : 4096 * kMiB;
  if (const double as = address_space_limit().value(); as > 0) limit = std::min(limit, as * 0.75);
  return Bytes(std::max(limit, 256 * kMiB));
}

std::string default_memory_limit_origin()
{
  const double as = address_space_limit().value();
  const double avail = available_memory().value();
  if (as > 0 && as * 0.75 < avail / 2) return "3/4 of the " + gib(as) + " address-space limit (ulimit -v)";
  if (avail > 0) return "half of the " + gib(avail) + " available when the run started";
  return "4GiB: the available memory could not be read";
}

void MemoryGuard::arm(Bytes limit, std::string key, std::string what)
{
  limit_ = limit.value();
  as_limit_ = address_space_limit().value() * 0.9;
  key_ = std::move(key);
  what_ = std::move(what);
  ticks_ = 0;
}

void MemoryGuard::check() const
{
  if (limit_ <= 0) return;
  double size = 0, resident = 0;
  if (!statm(size, resident)) return;
  const double rss = resident * page_bytes(), vm = size * page_bytes();
  peak_ = std::max(peak_, rss);
  if (rss > limit_)
    throw LimitError(key_, "the process holds " + format_bytes(Bytes(rss)) + ", past its limit of " +
                               format_bytes(Bytes(limit_)) + " (" + what_ +
                               "); raise engine.max_memory or shrink the workload");
  if (as_limit_ > 0 && vm > as_limit_)
    throw LimitError(key_, "the process's address space reached " + format_bytes(Bytes(vm)) + ", 90% of the " +
                               format_bytes(Bytes(as_limit_ / 0.9)) +
                               " address-space limit (ulimit -v); raise the limit or shrink the workload");
}

MemoryGuard& memory_guard()
{
  static MemoryGuard guard;
  return guard;
}

} // namespace xattn::core
