#include "sim/core/resources.hpp"
#include "sim/core/suggest.hpp"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>
#include <system_error>

#ifndef XATTN_SOURCE_DIR
#define XATTN_SOURCE_DIR ""
#endif

namespace xattn::core
{
namespace fs = std::filesystem;

std::vector<fs::path> data_dirs()
{
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("XATTN_DATA_DIR"); env && *env) dirs.emplace_back(env);
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back(exe.parent_path().parent_path() / "share" / "xattn");
  if (std::string(XATTN_SOURCE_DIR).size() > 0) dirs.emplace_back(XATTN_SOURCE_DIR);
  return dirs;
}

std::optional<fs::path> find_data(std::string_view relative)
{
  std::error_code ec;
  for (const fs::path& d : data_dirs()) {
    fs::path p = d / fs::path(relative);
    if (fs::is_regular_file(p, ec)) return p;
  }
  return std::nullopt;
}

std::optional<fs::path> resolve_preset(std::string_view name_or_path, std::string_view folder,
                                       std::string_view extension)
{
  std::error_code ec;
  fs::path as_path(name_or_path);
  if (fs::is_regular_file(as_path, ec)) return as_path;
  if (name_or_path.find('/') != std::string_view::npos)
    return std::nullopt; // a path that does not exist is not a preset name either
  return find_data(std::string(folder) + "/" + std::string(name_or_path) + std::string(extension));
}

std::vector<std::string> list_presets(std::string_view folder, std::string_view extension)
{
  std::set<std::string> names;
  std::error_code ec;
  for (const fs::path& d : data_dirs()) {
    fs::path dir = d / fs::path(folder);
    if (!fs::is_directory(dir, ec)) continue;
    for (const auto& entry : fs::directory_iterator(dir, ec))
      if (entry.path().extension() == extension) names.insert(entry.path().stem().string());
  }
  return {names.begin(), names.end()};
}

std::vector<fs::path> trace_data_dirs()
{
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("XATTN_DATA"); env && *env) dirs.emplace_back(env);
  for (const fs::path& d : data_dirs())
    dirs.push_back(d / fs::path(kTraceDataFolder));
  return dirs;
}

std::optional<fs::path> find_input(std::string_view path, const fs::path& beside)
{
  std::error_code ec; // a name the file system refuses (too long, say) is simply not found
  const fs::path p(path);
  if (p.empty()) return std::nullopt;
  if (p.is_absolute()) return fs::is_regular_file(p, ec) ? std::optional<fs::path>(p) : std::nullopt;
  if (fs::is_regular_file(beside / p, ec)) return beside / p;
  for (const fs::path& d : trace_data_dirs())
    if (fs::is_regular_file(d / p, ec)) return d / p;
  return std::nullopt;
}

std::string no_preset_message(std::string_view kind, std::string_view name, std::string_view folder)
{
  return "no " + std::string(kind) + " file or preset named '" + std::string(name) + "' " +
         hint_and_list(name, list_presets(folder), "presets");
}

} // namespace xattn::core
