#include "sim/core/atomic_file.hpp"

#include "sim/core/error.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

namespace xattn::core
{

namespace
{
std::filesystem::path temporary_for(const std::filesystem::path& path)
{
  const std::filesystem::path dir = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
  return dir / ("." + path.filename().string() + ".tmp" + std::to_string(::getpid()));
}

[[noreturn]] void give_up(const std::filesystem::path& tmp, const std::filesystem::path& path, std::string_view key,
                          const std::string& why)
{
  std::error_code ec;
  std::filesystem::remove(tmp, ec);
  fail(path.string(), 0, 0, std::string(key), why);
}

void move_into_place(const std::filesystem::path& tmp, const std::filesystem::path& path, std::string_view key)
{
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) give_up(tmp, path, key, "cannot move the finished file into place: " + ec.message());
}
} // namespace

void write_file_atomically(const std::filesystem::path& path, std::string_view text, std::string_view key)
{
  const std::filesystem::path tmp = temporary_for(path);
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) give_up(tmp, path, key, std::string("cannot write: ") + std::strerror(errno));
  const bool wrote = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int saved = errno;
  if (std::fclose(f) != 0 || !wrote)
    give_up(tmp, path, key, std::string("write failed: ") + std::strerror(wrote ? errno : saved));
  move_into_place(tmp, path, key);
}

void write_file_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& fill,
                           std::string_view key)
{
  const std::filesystem::path tmp = temporary_for(path);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) give_up(tmp, path, key, std::string("cannot write: ") + std::strerror(errno));
    try {
      fill(out);
    } catch (...) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      throw;
    }
    out.flush();
    if (!out) give_up(tmp, path, key, "write failed");
  }
  move_into_place(tmp, path, key);
}

} // namespace xattn::core
