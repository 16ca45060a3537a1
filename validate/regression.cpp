#include "validate/regression.hpp"

#include "sim/core/error.hpp"
#include "sim/core/yaml.hpp"
#include "sim/engine/driver.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <unistd.h>

namespace xattn::validate
{
namespace fs = std::filesystem;
namespace
{

nlohmann::json scalar_json(const YAML::Node& n)
{
  const std::string& s = n.Scalar();
  if (s == "true" || s == "false") return s == "true";
  try {
    std::size_t used = 0;
    double d = std::stod(s, &used);
    if (used == s.size()) return d;
  } catch (const std::exception&) {
  }
  return s;
}

/// Values at a dotted path, `*` matching every key of an object; (path, value) pairs.
void lookup(const nlohmann::json& j, const std::vector<std::string>& parts, std::size_t i, const std::string& at,
            std::vector<std::pair<std::string, const nlohmann::json*>>& out)
{
  if (i == parts.size()) {
    out.emplace_back(at, &j);
    return;
  }
  if (!j.is_object()) return;
  if (parts[i] == "*") {
    for (const auto& [k, v] : j.items())
      lookup(v, parts, i + 1, at + (at.empty() ? "" : ".") + k, out);
  } else if (j.contains(parts[i])) {
    lookup(j.at(parts[i]), parts, i + 1, at + (at.empty() ? "" : ".") + parts[i], out);
  }
}
} // namespace

RegressionSpec load_regression(const std::string& path)
{
  core::Document doc = core::load_yaml(path);
  core::Diagnostics diags;
  RegressionSpec spec;
  spec.file = path;
  if (!doc.root.IsMap() || !doc.root["scenario"] || !doc.root["checks"] || !doc.root["checks"].IsSequence())
    core::fail(path, 0, 0, "", "expected a mapping with `scenario` and a list `checks`");
  for (const auto& kv : doc.root)
    if (kv.first.Scalar() != "scenario" && kv.first.Scalar() != "checks" && kv.first.Scalar() != "requires" &&
        kv.first.Scalar() != "sets")
      diags.add({path, kv.first.Mark().line + 1, kv.first.Mark().column + 1, kv.first.Scalar(), "unknown key"});
  // The expected file sits in validate/regression/: scenario paths are relative to the project root.
  const fs::path root = fs::absolute(path).parent_path().parent_path().parent_path();
  spec.scenario = (root / doc.root["scenario"].Scalar()).lexically_normal().string();
  if (doc.root["requires"])
    for (const YAML::Node& r : doc.root["requires"])
      if (!fs::exists(root / r.Scalar())) spec.missing.push_back((root / r.Scalar()).lexically_normal().string());
  if (doc.root["sets"]) {
    if (!doc.root["sets"].IsSequence())
      diags.add({path, doc.root["sets"].Mark().line + 1, doc.root["sets"].Mark().column + 1, "sets",
                 "expected a list of key=value overrides"});
    else
      for (const YAML::Node& s : doc.root["sets"])
        spec.sets.push_back(s.Scalar());
  }
  if (!fs::is_regular_file(spec.scenario))
    diags.add({path, doc.root["scenario"].Mark().line + 1, 0, "scenario", "no such scenario '" + spec.scenario + "'"});
  for (const YAML::Node& n : doc.root["checks"]) {
    RegressionCheck c;
    c.line = n.Mark().line + 1;
    for (const auto& kv : n) {
      const std::string k = kv.first.Scalar();
      if (k != "key" && k != "equals" && k != "min" && k != "max" && k != "why")
        diags.add({path, kv.first.Mark().line + 1, 0, "checks." + k, "unknown key"});
    }
    if (!n["key"] || !n["why"]) diags.add({path, c.line, 0, "checks", "every check needs `key` and `why`"});
    if (!n["equals"] && !n["min"] && !n["max"])
      diags.add({path, c.line, 0, "checks", "give `equals`, or `min` and/or `max`"});
    c.key = n["key"] ? n["key"].Scalar() : "";
    c.why = n["why"] ? n["why"].Scalar() : "";
    if (n["equals"]) c.equals = scalar_json(n["equals"]);
    if (n["min"]) c.min = n["min"].as<double>();
    if (n["max"]) c.max = n["max"].as<double>();
    spec.checks.push_back(c);
  }
  diags.throw_if_any();
  return spec;
}

RegressionOutcome check_summary(const RegressionSpec& spec, const nlohmann::json& summary)
{
  RegressionOutcome o;
  for (const RegressionCheck& c : spec.checks) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= c.key.size(); ++i)
      if (i == c.key.size() || c.key[i] == '.') {
        parts.push_back(c.key.substr(start, i - start));
        start = i + 1;
      }
    std::vector<std::pair<std::string, const nlohmann::json*>> found;
    lookup(summary, parts, 0, "", found);
    if (found.empty()) {
      o.ok = false;
      o.report += fmt::format("FAIL {}: not in summary.json\n", c.key);
      continue;
    }
    for (const auto& [at, v] : found) {
      bool pass = false;
      std::string want;
      if (!c.equals.is_null()) {
        pass = v->is_number() && c.equals.is_number() ? v->get<double>() == c.equals.get<double>() : *v == c.equals;
        want = "== " + c.equals.dump();
      } else {
        pass = v->is_number() && v->get<double>() >= c.min && v->get<double>() <= c.max;
        want = fmt::format("in [{:.6g}, {:.6g}]", c.min, c.max);
      }
      o.ok = o.ok && pass;
      o.report += fmt::format("{} {} = {} {} ({})\n", pass ? "ok  " : "FAIL", at, v->dump(), want, c.why);
    }
  }
  return o;
}

RegressionOutcome run_regression(const RegressionSpec& spec)
{
  if (!spec.missing.empty()) {
    RegressionOutcome o;
    o.skipped = true;
    o.report = "skipped: " + spec.missing.front() + " is absent\n";
    return o;
  }
  sim::engine::Scenario sc = sim::engine::load_scenario(spec.scenario, spec.sets);
  sim::engine::RunOptions opt;
  static int counter = 0;
  opt.out_dir =
      (fs::temp_directory_path() / ("xattn-regression-" + std::to_string(getpid()) + "-" + std::to_string(counter++)))
          .string();
  opt.progress = false;
  sim::engine::RunOutcome run = sim::engine::run_scenario(sc, opt);
  RegressionOutcome o = check_summary(spec, run.summary);
  std::error_code ec;
  fs::remove_all(opt.out_dir, ec);
  return o;
}

} // namespace xattn::validate
