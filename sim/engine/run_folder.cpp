#include "sim/engine/run_folder.hpp"

#include "sim/core/error.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <ctime>
#include <fstream>
#include <string_view>

namespace xattn::sim::engine
{
namespace fs = std::filesystem;
namespace
{

std::string utc_stamp()
{
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  return buf;
}

// The first of an earlier run's outputs found in `dir`, named for the message ("summary.json of
// run X" when it can tell), or empty when it holds none.
std::string earlier_run(const fs::path& dir)
{
  std::error_code ec;
  for (const char* name : kRunFiles) {
    if (!fs::exists(dir / name, ec)) continue;
    std::string what = name;
    if (std::string_view(name).substr(0, 7) == "summary") {
      std::ifstream in(dir / name);
      const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
      if (j.is_object() && j.contains("run_id") && j["run_id"].is_string())
        what += " of run " + j["run_id"].get<std::string>();
    }
    return what;
  }
  return "";
}

} // namespace

RunFolder choose_folder(const Scenario& sc, const RunOptions& opt)
{
  RunFolder f;
  f.id = opt.run_id.empty() ? utc_stamp() : opt.run_id;
  const bool from_flag = !opt.out_dir.empty();
  if (from_flag || !sc.out_dir.empty()) {
    f.dir = from_flag ? opt.out_dir : sc.out_dir;
    if (!opt.replace)
      if (const std::string held = earlier_run(f.dir); !held.empty())
        core::fail(from_flag ? "command line" : sc.file, 0, 0, from_flag ? "--out" : "output.dir",
                   fmt::format("{} holds an earlier run's outputs ({}); pass --replace to replace them, or choose "
                               "another folder",
                               f.dir, held));
    return f;
  }
  // A folder of its own: out/<name>/<id>, "-2", "-3"... when two runs start in the same second.
  const fs::path base = fs::path("out") / sc.name;
  std::error_code ec;
  const std::string stamp = f.id;
  for (int n = 2; fs::exists(base / f.id, ec); ++n)
    f.id = fmt::format("{}-{}", stamp, n);
  f.dir = (base / f.id).string();
  f.latest = base / "latest";
  return f;
}

void link_latest(const RunFolder& f)
{
  if (f.latest.empty()) return;
  const fs::path tmp = f.latest.parent_path() / ".latest.tmp";
  std::error_code ec;
  fs::remove(tmp, ec);
  fs::create_directory_symlink(fs::path(f.dir).filename(), tmp, ec);
  if (!ec) fs::rename(tmp, f.latest, ec);
  if (ec) throw core::InternalError("cannot link " + f.latest.string() + " to " + f.dir + ": " + ec.message());
}

} // namespace xattn::sim::engine
