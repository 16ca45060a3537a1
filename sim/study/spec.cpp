#include "sim/study/spec.hpp"

#include "sim/engine/scenario.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>

namespace xattn::sim::study
{
namespace fs = std::filesystem;
using core::Field;
using core::FieldKind;
using core::kNoDefault;

namespace
{
const core::Schema kSlurmSchema{
    {.key = "partition",
     .kind = FieldKind::kString,
     .def = kNoDefault,
     .meaning = "sbatch --partition (empty: the default)"},
    {.key = "time",
     .kind = FieldKind::kString,
     .def = kNoDefault,
     .meaning = "sbatch --time per task (empty: the default)"},
    {.key = "cpus_per_task",
     .kind = FieldKind::kInteger,
     .def = "1",
     .meaning = "sbatch --cpus-per-task",
     .check = core::Check::kPositive},
    {.key = "extra", .kind = FieldKind::kList, .def = kNoDefault, .meaning = "more sbatch arguments, verbatim"},
};

const core::Schema kSchema{
    {.key = "name", .kind = FieldKind::kString, .meaning = "sweep name (names the output folder)"},
    {.key = "base", .kind = FieldKind::kString, .meaning = "base scenario file (relative to this file)"},
    {.key = "grid",
     .kind = FieldKind::kMap,
     .def = kNoDefault,
     .meaning = "KEY.PATH: [v1, v2, ...]: every combination of the listed values"},
    {.key = "zip",
     .kind = FieldKind::kMap,
     .def = kNoDefault,
     .meaning = "KEY.PATH: [v1, v2, ...]: lists of one length advanced together"},
    {.key = "set",
     .kind = FieldKind::kMap,
     .def = kNoDefault,
     .meaning = "KEY.PATH: value: overrides applied to every point"},
    {.key = "seeds", .kind = FieldKind::kList, .def = kNoDefault, .meaning = "seeds run for every point"},
    {.key = "repetitions",
     .kind = FieldKind::kInteger,
     .def = kNoDefault,
     .meaning = "instead of seeds: seeds 1..N",
     .check = core::Check::kPositive},
    {.key = "seed_key", .kind = FieldKind::kString, .def = "seed", .meaning = "scenario key the seed sets"},
    {.key = "policies", .kind = FieldKind::kList, .def = kNoDefault, .meaning = "policies run (default: the base's)"},
    {.key = "workers",
     .kind = FieldKind::kInteger,
     .def = "0",
     .meaning = "local simulations at once (0: one per core)"},
    {.key = "out", .kind = FieldKind::kString, .def = kNoDefault, .meaning = "output folder (default out/<name>)"},
    {.key = "slurm", .kind = FieldKind::kSection, .def = "{}", .meaning = "Slurm back end", .sub = &kSlurmSchema},
    {.key = "ensemble",
     .kind = FieldKind::kInteger,
     .def = kNoDefault,
     .meaning = "every point runs as an ensemble of N profile draws (xattn run --ensemble N; the points of one "
                "seed draw the same profiles, so their ratios pair member by member): the table gains each "
                "headline figure's 5% and 95% and the comparison their ranges",
     .check = core::Check::kPositive,
     .range = {2, 1000, "an ensemble of 2 to 1,000 draws"}},
    {.key = "label",
     .kind = FieldKind::kString,
     .def = kNoDefault,
     .meaning = "the swept key whose values name the points in the comparison (comparison.txt; default: every "
                "swept value)"},
};

int line_of(const YAML::Node& n)
{
  return n.Mark().is_null() ? 0 : n.Mark().line + 1;
}
int col_of(const YAML::Node& n)
{
  return n.Mark().is_null() ? 0 : n.Mark().column + 1;
}

} // namespace

bool scenario_has_key(const std::string& path)
{
  const core::Schema* schema = &engine::scenario_schema();
  std::size_t start = 0;
  while (true) {
    std::size_t dot = path.find('.', start);
    std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    auto it = std::find_if(schema->begin(), schema->end(), [&](const Field& f) { return f.key == part; });
    if (it == schema->end()) return false;
    if (dot == std::string::npos) return true;
    if (it->sub == nullptr || (it->kind != FieldKind::kSection && it->kind != FieldKind::kNameOrSection)) return false;
    schema = it->sub;
    start = dot + 1;
  }
}

namespace
{

std::vector<Axis> read_axes(const core::Document& doc, const char* name, core::Diagnostics& d)
{
  std::vector<Axis> out;
  YAML::Node node = doc.root[name];
  if (!node.IsDefined() || node.IsNull() || !node.IsMap()) return out; // the Section reported a non-mapping
  for (auto it = node.begin(); it != node.end(); ++it) {
    Axis a;
    a.key = it->first.Scalar();
    std::string at = std::string(name) + "." + a.key;
    if (!scenario_has_key(a.key))
      d.add({doc.file, line_of(it->first), col_of(it->first), at,
             "not a key of the scenario schema (see xattn run --describe)"});
    if (std::any_of(out.begin(), out.end(), [&](const Axis& b) { return b.key == a.key; }))
      d.add({doc.file, line_of(it->first), col_of(it->first), at, "duplicate key"});
    if (!it->second.IsSequence() || it->second.size() == 0) {
      d.add({doc.file, line_of(it->second), col_of(it->second), at, "expected a non-empty list of values"});
      continue;
    }
    // A copy: `it->second` lives in the iterator's temporary proxy, gone before the loop body
    // (ASan: stack-use-after-scope in YAML::Node::begin()).
    for (const YAML::Node values = it->second; const YAML::Node& v : values)
      a.values.push_back(flow(v));
    out.push_back(std::move(a));
  }
  return out;
}
} // namespace

std::string flow(const YAML::Node& n)
{
  if (n.IsScalar()) return n.Scalar();
  YAML::Emitter e;
  e << YAML::Flow << n;
  return e.c_str();
}

const core::Schema& sweep_schema()
{
  return kSchema;
}

std::vector<std::string> SweepSpec::keys() const
{
  std::vector<std::string> k;
  for (const Axis& a : grid)
    k.push_back(a.key);
  for (const Axis& a : zip)
    k.push_back(a.key);
  return k;
}

std::vector<std::string> Point::overrides(const SweepSpec& s) const
{
  std::vector<std::string> out;
  for (const auto& [k, v] : s.fixed)
    out.push_back(k + "=" + v);
  for (const auto& [k, v] : values)
    out.push_back(k + "=" + v);
  out.push_back(s.seed_key + "=" + std::to_string(seed));
  if (!s.policies.empty()) {
    std::string list = "[";
    for (const std::string& p : s.policies)
      list += (list.size() > 1 ? ", " : "") + p;
    out.push_back("policies=" + list + "]");
  }
  return out;
}

std::string point_id(std::vector<std::string> assignments)
{
  std::sort(assignments.begin(), assignments.end());
  std::uint64_t h = 1469598103934665603ull; // FNV-1a 64
  for (const std::string& a : assignments)
    for (unsigned char c : a + "\n") {
      h ^= c;
      h *= 1099511628211ull;
    }
  return fmt::format("{:012x}", h >> 16);
}

SweepSpec parse_document(core::Document doc, const std::string& dir)
{
  core::Diagnostics d;
  core::Section top(doc.file, doc.root, "", kSchema, d);
  SweepSpec s;
  s.file = doc.file;
  s.name = top.folder_name("name");
  if (std::string b = top.string("base"); !b.empty()) {
    fs::path p = fs::path(b).is_absolute() ? fs::path(b) : fs::path(dir) / b;
    if (!fs::exists(p)) top.error("base", "no such scenario file: " + p.string());
    s.base = fs::absolute(p).lexically_normal().string();
  }
  s.grid = read_axes(doc, "grid", d);
  s.zip = read_axes(doc, "zip", d);
  if (YAML::Node fixed = doc.root["set"]; fixed.IsMap())
    for (auto it = fixed.begin(); it != fixed.end(); ++it) {
      const std::string k = it->first.Scalar();
      if (!scenario_has_key(k))
        d.add({doc.file, line_of(it->first), col_of(it->first), "set." + k,
               "not a key of the scenario schema (see xattn run --describe)"});
      for (const Axis& a : s.grid)
        if (a.key == k) d.add({doc.file, line_of(it->first), col_of(it->first), "set." + k, "also swept in grid"});
      s.fixed.emplace_back(k, flow(it->second));
    }
  for (const Axis& z : s.zip)
    if (z.values.size() != s.zip.front().values.size())
      top.error("zip", "lists of unequal length: '" + s.zip.front().key + "' has " +
                           std::to_string(s.zip.front().values.size()) + " values, '" + z.key + "' has " +
                           std::to_string(z.values.size()));
  for (const Axis& z : s.zip)
    for (const Axis& g : s.grid)
      if (z.key == g.key) top.error("zip", "key '" + z.key + "' is in both grid and zip");
  if (top.has("seeds") && top.has("repetitions")) top.error("repetitions", "give seeds or repetitions, not both");
  if (top.has("seeds")) {
    for (double v : top.numbers("seeds", core::Dimension::kCount))
      s.seeds.push_back(static_cast<std::int64_t>(v));
    if (std::set<std::int64_t>(s.seeds.begin(), s.seeds.end()).size() != s.seeds.size())
      top.error("seeds", "repeated seed");
  } else if (top.has("repetitions")) {
    for (std::int64_t i = 1; i <= top.integer("repetitions"); ++i)
      s.seeds.push_back(i);
  } else {
    s.seeds.push_back(1);
  }
  s.seed_key = top.string("seed_key");
  if (!scenario_has_key(s.seed_key)) top.error("seed_key", "not a key of the scenario schema");
  if (top.has("policies")) s.policies = top.strings("policies");
  s.workers = static_cast<int>(top.integer("workers"));
  if (s.workers < 0) top.error("workers", "must not be negative");
  if (top.has("out")) {
    std::string o = top.string("out");
    s.out = fs::path(o).is_absolute() ? o : (fs::path(dir) / o).lexically_normal().string();
  }
  core::Section sl = top.section("slurm");
  if (sl.has("partition")) s.slurm.partition = sl.string("partition");
  if (sl.has("time")) s.slurm.time = sl.string("time");
  s.slurm.cpus_per_task = static_cast<int>(sl.integer("cpus_per_task"));
  if (sl.has("extra")) s.slurm.extra = sl.strings("extra");
  if (top.has("ensemble")) s.ensemble = static_cast<int>(top.integer("ensemble"));
  if (top.has("label")) {
    s.label = top.string("label");
    const std::vector<std::string> swept = s.keys();
    if (std::find(swept.begin(), swept.end(), s.label) == swept.end())
      top.error("label", "'" + s.label + "' is not a key of grid or zip");
  }
  d.throw_if_any();
  return s;
}

SweepSpec load_sweep(const std::string& path, const std::vector<std::string>& sets)
{
  core::Document doc = core::load_yaml(path);
  for (const std::string& a : sets)
    core::apply_override(doc, a);
  return parse_document(std::move(doc), fs::absolute(path).parent_path().string());
}

SweepSpec parse_sweep_text(const std::string& text, const std::string& name, const std::string& dir)
{
  return parse_document(core::parse_yaml(text, name), dir);
}

std::vector<Point> expand(const SweepSpec& s)
{
  // Grid combinations with the last key varying fastest, then the zip index, then the seed.
  std::vector<std::vector<std::pair<std::string, std::string>>> combos{{}};
  for (const Axis& a : s.grid) {
    std::vector<std::vector<std::pair<std::string, std::string>>> next;
    for (const auto& c : combos)
      for (const std::string& v : a.values) {
        next.push_back(c);
        next.back().emplace_back(a.key, v);
      }
    combos = std::move(next);
  }
  if (!s.zip.empty()) {
    std::vector<std::vector<std::pair<std::string, std::string>>> next;
    for (const auto& c : combos)
      for (std::size_t i = 0; i < s.zip.front().values.size(); ++i) {
        next.push_back(c);
        for (const Axis& z : s.zip)
          next.back().emplace_back(z.key, z.values[i]);
      }
    combos = std::move(next);
  }
  std::vector<Point> out;
  for (const auto& c : combos)
    for (std::int64_t seed : s.seeds) {
      Point p{.id = "", .values = c, .seed = seed};
      std::vector<std::string> a;
      for (const auto& [k, v] : s.fixed)
        a.push_back(k + "=" + v);
      for (const auto& [k, v] : c)
        a.push_back(k + "=" + v);
      a.push_back(s.seed_key + "=" + std::to_string(seed));
      if (s.ensemble > 0) a.push_back("ensemble=" + std::to_string(s.ensemble)); // other results, other points
      p.id = point_id(a);
      out.push_back(std::move(p));
    }
  return out;
}

void check_points(const SweepSpec& s, const std::vector<Point>& points)
{
  for (const Point& p : points) {
    try {
      (void)engine::load_scenario(s.base, p.overrides(s));
    } catch (const core::InputError& e) {
      std::vector<core::Diagnostic> ds = e.diagnostics();
      std::string what;
      for (const auto& [k, v] : p.values)
        what += " " + k + "=" + v;
      ds.push_back(
          {s.file, 0, 0, "",
           "in point " + p.id + " (" + what.substr(what.empty() ? 0 : 1) + ", seed " + std::to_string(p.seed) + ")"});
      throw core::InputError(ds);
    }
  }
}

} // namespace xattn::sim::study
