#include "sim/core/atomic_file.hpp"

#include "sim/core/error.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace xattn::core
{
namespace fs = std::filesystem;
namespace
{
constexpr std::string_view kTmpMark = ".tmp";
constexpr std::string_view kPartialPrefix = ".partial-";

fs::path folder_of(const fs::path& path)
{
  return path.parent_path().empty() ? fs::path(".") : path.parent_path();
}

[[noreturn]] void give_up(const fs::path& tmp, const fs::path& path, std::string_view key, const std::string& why)
{
  std::error_code ec;
  fs::remove(tmp, ec);
  fail(path.string(), 0, 0, std::string(key), why);
}

// fsync of a file or a folder by its name; false (errno set) when it cannot be done.
bool sync_path(const fs::path& p, bool folder)
{
  const int fd = ::open(p.c_str(), (folder ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::fsync(fd) == 0 || errno == EINVAL; // EINVAL: a file system that cannot sync
  const int saved = errno;
  ::close(fd);
  errno = saved;
  return ok;
}

// The process id a temporary's name ends with, or 0 when `name` is not a temporary's name.
long temporary_pid(std::string_view name)
{
  std::string_view digits;
  if (name.starts_with(kPartialPrefix))
    digits = name.substr(kPartialPrefix.size());
  else if (name.starts_with(".") && name.rfind(kTmpMark) != std::string_view::npos)
    digits = name.substr(name.rfind(kTmpMark) + kTmpMark.size());
  long pid = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || pid <= 0) return 0;
  return pid;
}

// Whether process `pid` still runs here. A zombie does not: it has ended, and only its parent (or
// init, which may take a while) has yet to collect its exit status.
bool running(long pid)
{
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const std::size_t name_end = line.rfind(')'); // "PID (COMMAND) STATE ...", COMMAND may hold spaces
  return name_end == std::string::npos || name_end + 2 >= line.size() || line[name_end + 2] != 'Z';
}
} // namespace

fs::path temporary_name(const fs::path& path)
{
  return folder_of(path) / ("." + path.filename().string() + std::string(kTmpMark) + std::to_string(::getpid()));
}

fs::path partial_folder(const fs::path& out_dir)
{
  return out_dir / (std::string(kPartialPrefix) + std::to_string(::getpid()));
}

void commit_file(const fs::path& tmp, const fs::path& path, std::string_view key)
{
  // The bytes reach the disk before the name does: a crash cannot leave the new name on old blocks.
  if (!sync_path(tmp, false)) give_up(tmp, path, key, std::string("cannot flush to the disk: ") + std::strerror(errno));
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) give_up(tmp, path, key, "cannot move the finished file into place: " + ec.message());
  // The rename reaches the disk before anything the caller writes after it (a completion marker).
  sync_path(folder_of(path), true);
}

void write_file_atomically(const fs::path& path, std::string_view text, std::string_view key)
{
  const fs::path tmp = temporary_name(path);
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) give_up(tmp, path, key, std::string("cannot write: ") + std::strerror(errno));
  const bool wrote = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int saved = errno;
  if (std::fclose(f) != 0 || !wrote)
    give_up(tmp, path, key, std::string("write failed: ") + std::strerror(wrote ? errno : saved));
  commit_file(tmp, path, key);
}

void write_file_atomically(const fs::path& path, const std::function<void(std::ostream&)>& fill, std::string_view key)
{
  const fs::path tmp = temporary_name(path);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) give_up(tmp, path, key, std::string("cannot write: ") + std::strerror(errno));
    try {
      fill(out);
    } catch (...) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw;
    }
    out.flush();
    if (!out) give_up(tmp, path, key, "write failed");
  }
  commit_file(tmp, path, key);
}

int remove_temporaries(const fs::path& dir, bool dead_only)
{
  std::vector<fs::path> stale;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const long pid = temporary_pid(it->path().filename().string());
    if (pid == 0) continue;
    if (dead_only && running(pid)) continue;
    stale.push_back(it->path());
  }
  int removed = 0;
  for (const fs::path& p : stale) {
    std::error_code rm;
    if (fs::remove_all(p, rm) > 0 && !rm) ++removed;
  }
  return removed;
}

} // namespace xattn::core
