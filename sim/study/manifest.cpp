#include "sim/study/manifest.hpp"
#include "sim/core/atomic_file.hpp"

#include "sim/engine/driver.hpp"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <deque>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace xattn::sim::study
{
namespace fs = std::filesystem;
using nlohmann::json;

Manifest make_manifest(const SweepSpec& s, const std::vector<Point>& points, const std::string& exe)
{
  Manifest m{.name = s.name, .base = s.base, .keys = s.keys(), .points = {}, .exe = exe};
  m.ensemble = s.ensemble;
  m.label = s.label;
  for (const Point& p : points)
    m.points.push_back({.id = p.id, .values = p.values, .seed = p.seed, .sets = p.overrides(s)});
  return m;
}

namespace
{
json to_json(const Manifest& m)
{
  json pts = json::array();
  for (const ManifestPoint& p : m.points) {
    json values = json::array();
    for (const auto& [k, v] : p.values)
      values.push_back({k, v});
    pts.push_back({{"id", p.id}, {"values", values}, {"seed", p.seed}, {"sets", p.sets}});
  }
  return {{"name", m.name},   {"base", m.base},         {"keys", m.keys}, {"exe", m.exe},
          {"label", m.label}, {"ensemble", m.ensemble}, {"points", pts}};
}

std::string slurp(const fs::path& p)
{
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
} // namespace

void write_manifest(const Manifest& m, const std::string& dir)
{
  fs::create_directories(fs::path(dir) / "points");
  const fs::path file = fs::path(dir) / "sweep.json";
  if (fs::exists(file)) {
    // Points may be added (a grown grid, a planner's next round); a point already there must keep
    // its --set list, else its stored results would answer another question.
    Manifest old = read_manifest(dir);
    bool same = old.base == m.base;
    for (const ManifestPoint& o : old.points)
      for (const ManifestPoint& p : m.points)
        same = same && (o.id != p.id || o.sets == p.sets);
    if (!same)
      core::fail(file.string(), 0, 0, "",
                 "this folder holds another sweep (another base scenario or policies); "
                 "choose another --out or remove the folder");
  }
  core::write_file_atomically(file.string(), to_json(m).dump(2) + "\n");
}

Manifest read_manifest(const std::string& dir)
{
  const fs::path file = fs::path(dir) / "sweep.json";
  if (!fs::exists(file)) core::fail(dir, 0, 0, "", "not a sweep folder (no sweep.json)");
  try {
    json j = json::parse(slurp(file));
    Manifest m{.name = j.at("name"), .base = j.at("base"), .keys = j.at("keys"), .points = {}, .exe = j.at("exe")};
    m.ensemble = j.value("ensemble", 0);
    m.label = j.value("label", "");
    for (const json& p : j.at("points")) {
      ManifestPoint mp{.id = p.at("id"), .values = {}, .seed = p.at("seed"), .sets = p.at("sets")};
      for (const json& kv : p.at("values"))
        mp.values.emplace_back(kv.at(0), kv.at(1));
      m.points.push_back(std::move(mp));
    }
    return m;
  } catch (const json::exception& e) {
    core::fail(file.string(), 0, 0, "", std::string("unreadable manifest: ") + e.what());
  }
}

std::string point_dir(const std::string& dir, const std::string& id)
{
  return (fs::path(dir) / "points" / id).string();
}

bool point_complete(const std::string& dir, const std::string& id)
{
  return fs::exists(fs::path(point_dir(dir, id)) / "summary.json");
}

std::string refusal_path(const std::string& dir, const std::string& id)
{
  return point_dir(dir, id) + "/refused.txt";
}

std::optional<std::string> read_refusal(const std::string& dir, const std::string& id)
{
  std::ifstream in(refusal_path(dir, id), std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> run_args(const Manifest& m, const ManifestPoint& p, const std::string& dir, int jobs)
{
  // A point reruns into its own folder (resumed after a kill): --replace; its run id is its point id,
  // so that a sweep's files do not depend on when it ran.
  std::vector<std::string> a{"run", m.base,    "--out",     point_dir(dir, p.id), "--replace", "--run-id",
                             p.id,  "--quiet", "--workers", std::to_string(jobs), "--refusal", refusal_path(dir, p.id)};
  if (m.ensemble > 0) {
    a.push_back("--ensemble");
    a.push_back(std::to_string(m.ensemble));
  }
  for (const std::string& s : p.sets) {
    a.push_back("--set");
    a.push_back(s);
  }
  return a;
}

void log_line(const std::string& dir, const std::string& line)
{
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", std::localtime(&t));
  std::ofstream(fs::path(dir) / "sweep.log", std::ios::app) << stamp << " " << line << "\n";
}

std::string self_exe()
{
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("xattn") : p.string();
}

std::string tail_file(const std::string& path, int lines)
{
  std::ifstream in(path);
  std::deque<std::string> last;
  for (std::string l; std::getline(in, l);) {
    last.push_back(l);
    if (static_cast<int>(last.size()) > lines) last.pop_front();
  }
  std::string out;
  for (const std::string& l : last)
    out += l + "\n";
  return out;
}

} // namespace xattn::sim::study
