#include "validate/paper.hpp"

#include "sim/core/error.hpp"
#include "sim/core/resources.hpp"
#include "sim/core/yaml.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace xattn::validate
{
namespace
{

const std::vector<std::string> kClaimKeys = {"id",   "claim",      "kind",   "published", "min",       "max",
                                             "unit", "experiment", "config", "source",    "range_note"};
const std::vector<std::string> kUnits = {"us", "ms", "x", "%", "GBps", "count"};

int line_of(const YAML::Node& n)
{
  return n.Mark().line >= 0 ? n.Mark().line + 1 : 0;
}

std::string text_value(const YAML::Node& n)
{
  return n.IsScalar() ? n.Scalar() : std::string();
}
} // namespace

Reference load_reference(const std::string& path)
{
  std::string file = path;
  if (file.empty()) {
    auto p = core::find_data("validate/reference/paper.yaml");
    if (!p) core::fail("validate/reference/paper.yaml", 0, 0, "", "the paper's reference data is not installed");
    file = p->string();
  }
  core::Document doc = core::load_yaml(file);
  core::Diagnostics diags;
  Reference ref;
  ref.file = file;
  if (!doc.root.IsMap() || !doc.root["claims"] || !doc.root["claims"].IsSequence())
    core::fail(file, 0, 0, "claims", "expected a mapping with `source` and a list `claims`");
  for (const auto& kv : doc.root) {
    const std::string k = kv.first.Scalar();
    if (k != "source" && k != "claims") diags.add({file, line_of(kv.first), 0, k, "unknown key"});
  }
  ref.source = doc.root["source"] ? text_value(doc.root["source"]) : "";
  const auto& known = experiment_names();
  int i = 0;
  for (const YAML::Node& n : doc.root["claims"]) {
    const std::string at = "claims[" + std::to_string(i++) + "]";
    Claim c;
    c.line = line_of(n);
    if (!n.IsMap()) {
      diags.add({file, c.line, 0, at, "expected a mapping"});
      continue;
    }
    for (const auto& kv : n)
      if (std::find(kClaimKeys.begin(), kClaimKeys.end(), kv.first.Scalar()) == kClaimKeys.end())
        diags.add({file, line_of(kv.first), 0, at + "." + kv.first.Scalar(), "unknown key"});
    for (const char* req : {"id", "claim", "kind", "published", "unit", "experiment", "source"})
      if (!n[req]) diags.add({file, c.line, 0, at + "." + req, "missing"});
    c.id = n["id"] ? text_value(n["id"]) : "";
    c.claim = n["claim"] ? text_value(n["claim"]) : "";
    c.kind = n["kind"] ? text_value(n["kind"]) : "";
    c.published = n["published"] ? text_value(n["published"]) : "";
    c.unit = n["unit"] ? text_value(n["unit"]) : "";
    c.experiment = n["experiment"] ? text_value(n["experiment"]) : "";
    c.source = n["source"] ? text_value(n["source"]) : "";
    c.range_note = n["range_note"] ? text_value(n["range_note"]) : "";
    if (c.kind != "input" && c.kind != "emergent")
      diags.add({file, c.line, 0, at + ".kind", "expected input or emergent"});
    if (std::find(kUnits.begin(), kUnits.end(), c.unit) == kUnits.end())
      diags.add({file, c.line, 0, at + ".unit", "expected one of us, ms, x, %, GBps, count"});
    if (!c.experiment.empty() && std::find(known.begin(), known.end(), c.experiment) == known.end())
      diags.add({file, c.line, 0, at + ".experiment", "unknown experiment '" + c.experiment + "'"});
    if (!n["min"] && !n["max"]) diags.add({file, c.line, 0, at, "give the published range: min, max or both"});
    try {
      if (n["min"]) c.min = n["min"].as<double>();
      if (n["max"]) c.max = n["max"].as<double>();
    } catch (const YAML::Exception&) {
      diags.add({file, c.line, 0, at + ".min", "min and max are plain numbers in the claim's unit"});
    }
    if (c.min > c.max) diags.add({file, c.line, 0, at + ".min", "min is above max"});
    if (n["config"]) {
      if (!n["config"].IsMap())
        diags.add({file, line_of(n["config"]), 0, at + ".config", "expected a mapping"});
      else
        for (const auto& kv : n["config"])
          c.config[kv.first.Scalar()] = kv.second.IsScalar() ? kv.second.Scalar() : "";
    }
    ref.claims.push_back(std::move(c));
  }
  diags.throw_if_any();
  return ref;
}

std::vector<ClaimResult> check_paper(const Reference& ref, MicroRunner& runner)
{
  std::vector<ClaimResult> out;
  for (const Claim& c : ref.claims) {
    ClaimResult r;
    r.claim = c;
    r.result = run_experiment(c, runner);
    r.holds = std::isfinite(r.result.value) && r.result.value >= c.min && r.result.value <= c.max;
    out.push_back(std::move(r));
  }
  return out;
}

namespace
{
std::string fmt_value(double v, const std::string& unit)
{
  if (!std::isfinite(v)) return "never";
  if (unit == "count") return fmt::format("{:.0f}", v);
  if (unit == "x") return fmt::format("{:.1f}x", v);
  if (unit == "%") return fmt::format("{:.1f}%", v);
  return fmt::format("{:.3g} {}", v, unit);
}
} // namespace

std::string paper_table(const std::vector<ClaimResult>& results, bool details)
{
  std::string o;
  int failed = 0, emergent_ok = 0, emergent = 0;
  for (const char* kind : {"emergent", "input"}) {
    o +=
        std::string(kind) == "emergent"
            ? "EMERGENT claims (out of the model and the simulation: the evidence)\n"
            : "\nINPUT claims (constants the profile carries: reproducing them shows only that the profile was read)\n";
    o += fmt::format("{:<62} | {:<44} | {:>11} | {}\n", "claim", "published", "simulated", "holds");
    o += std::string(62, '-') + "-+-" + std::string(44, '-') + "-+-" + std::string(11, '-') + "-+------\n";
    for (const ClaimResult& r : results) {
      if (r.claim.kind != kind) continue;
      if (r.claim.kind == "emergent") {
        ++emergent;
        emergent_ok += r.holds;
      }
      failed += !r.holds;
      o += fmt::format("{:<62} | {:<44} | {:>11} | {}\n", r.claim.claim, r.claim.published,
                       fmt_value(r.result.value, r.claim.unit), r.holds ? "yes" : "NO");
      if (details || !r.holds) {
        std::string range =
            fmt::format("accepted [{}, {}]", r.claim.min <= -1e299 ? "-inf" : fmt_value(r.claim.min, r.claim.unit),
                        r.claim.max >= 1e299 ? "inf" : fmt_value(r.claim.max, r.claim.unit));
        o += "    " + r.claim.id + ": " + range + "; by " + r.result.by + ": " + r.result.detail + "\n";
        if (!r.claim.range_note.empty()) o += "    range: " + r.claim.range_note + "\n";
      }
    }
  }
  o += fmt::format("\n{} of {} emergent claims hold; {} claims in all, {} do not hold\n", emergent_ok, emergent,
                   results.size(), failed);
  return o;
}

} // namespace xattn::validate
