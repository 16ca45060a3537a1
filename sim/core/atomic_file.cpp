#include "sim/core/atomic_file.hpp"

#include "sim/core/error.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

namespace xattn::core
{

void write_file_atomically(const std::filesystem::path& path, std::string_view text, std::string_view key)
{
  const std::filesystem::path dir = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
  const std::filesystem::path tmp = dir / ("." + path.filename().string() + ".tmp" + std::to_string(::getpid()));
  auto give_up = [&](const std::string& why) {
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    fail(path.string(), 0, 0, std::string(key), why);
  };
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) give_up(std::string("cannot write: ") + std::strerror(errno));
  const bool wrote = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int saved = errno;
  if (std::fclose(f) != 0 || !wrote) give_up(std::string("write failed: ") + std::strerror(wrote ? errno : saved));
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) give_up("cannot move the finished file into place: " + ec.message());
}

} // namespace xattn::core
