#include "sim/study/plan.hpp"

#include "sim/engine/figures.hpp"
#include "sim/engine/result.hpp"
#include "sim/study/manifest.hpp"
#include "sim/study/table.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

namespace xattn::sim::study
{
namespace fs = std::filesystem;
using core::FieldKind;
using core::kNoDefault;
using nlohmann::json;

namespace
{
const std::string kSloMetrics = engine::figure_paths(engine::kBound, "|");
// A bound's value, in the SLO's first bound and in each of slo.also.
const core::Field kMaxField{.key = "max",
                            .kind = FieldKind::kQuantity,
                            .dim = core::Dimension::kSeconds,
                            .meaning = "its bound (inclusive)",
                            .check = core::Check::kPositive};
const core::Schema kBoundSchema{
    {.key = "metric",
     .kind = FieldKind::kChoice,
     .meaning = "a further latency figure bounded",
     .choices = kSloMetrics},
    kMaxField,
};
const core::Schema kSloSchema{
    {.key = "metric",
     .kind = FieldKind::kChoice,
     .def = "step_latency_s.p99",
     .meaning = "the latency figure bounded (tpot_s: under engine.step full)",
     .choices = kSloMetrics},
    kMaxField,
    {.key = "also",
     .kind = FieldKind::kList,
     .def = kNoDefault,
     .meaning = "further bounds that must hold as well, each {metric, max} (a TPOT bound beside a TTFT one)",
     .sub = &kBoundSchema},
    {.key = "confidence",
     .kind = FieldKind::kQuantity,
     .def = kNoDefault,
     .meaning = "share of profile draws that must meet the bound (0.95); unset: the profile's own values"},
    {.key = "draws",
     .kind = FieldKind::kInteger,
     .def = "16",
     .meaning = "profile draws per configuration and seed when confidence is set",
     .check = core::Check::kPositive},
};
const core::Schema kSizeSchema{
    {.key = "key", .kind = FieldKind::kString, .meaning = "scenario key the size sets (e.g. instances.holders)"},
    {.key = "label", .kind = FieldKind::kString, .def = "size", .meaning = "what the size counts, for the answer"},
    {.key = "values", .kind = FieldKind::kList, .meaning = "its values, smallest configuration first"},
    {.key = "sizes", .kind = FieldKind::kList, .def = kNoDefault, .meaning = "the size of each value (default 1..n)"},
};
const core::Schema kSchema{
    {.key = "name", .kind = FieldKind::kString, .meaning = "plan name (names the output folder)"},
    {.key = "base", .kind = FieldKind::kString, .meaning = "base scenario file (relative to this file)"},
    {.key = "slo", .kind = FieldKind::kSection, .def = "{}", .meaning = "the objective", .sub = &kSloSchema},
    {.key = "policy", .kind = FieldKind::kString, .def = "predicate", .meaning = "the policy whose figure is judged"},
    {.key = "size", .kind = FieldKind::kSection, .def = "{}", .meaning = "the knob to minimise", .sub = &kSizeSchema},
    {.key = "knobs",
     .kind = FieldKind::kMap,
     .def = kNoDefault,
     .meaning = "KEY.PATH: [v1, ...] (or policy: [...]): other knobs, every combination tried in order"},
    {.key = "seeds", .kind = FieldKind::kList, .def = "[1]", .meaning = "seeds; the SLO must hold for each"},
    {.key = "workers", .kind = FieldKind::kInteger, .def = "0", .meaning = "simulations at once (0: one per core)"},
    {.key = "out", .kind = FieldKind::kString, .def = kNoDefault, .meaning = "output folder (default out/<name>)"},
};

// The latency figures an ensemble gives a spread for, ", "-joined.
std::string ensemble_figure_list()
{
  std::string out;
  for (const engine::FigureInfo& f : engine::figures())
    if (f.used_for(engine::kBound) && f.used_for(engine::kSpread))
      out += (out.empty() ? "" : ", ") + std::string(f.path);
  return out;
}

int line_of(const YAML::Node& n)
{
  return n.Mark().is_null() ? 0 : n.Mark().line + 1;
}
} // namespace

const core::Schema& plan_schema()
{
  return kSchema;
}

PlanSpec load_plan(const std::string& path, const std::vector<std::string>& sets)
{
  core::Document doc = core::load_yaml(path);
  for (const std::string& a : sets)
    core::apply_override(doc, a);
  const fs::path dir = fs::absolute(path).parent_path();
  core::Diagnostics d;
  core::Section top(doc.file, doc.root, "", kSchema, d);
  PlanSpec s;
  s.file = doc.file;
  s.name = top.folder_name("name");
  if (std::string b = top.string("base"); !b.empty()) {
    fs::path p = fs::path(b).is_absolute() ? fs::path(b) : dir / b;
    if (!fs::exists(p)) top.error("base", "no such scenario file: " + p.string());
    s.base = fs::absolute(p).lexically_normal().string();
  }
  core::Section slo = top.section("slo");
  if (slo.has("confidence")) {
    s.confidence = slo.number("confidence");
    if (!(s.confidence > 0 && s.confidence <= 1))
      slo.error("confidence", "a share of draws: greater than 0, at most 1");
  }
  // A bound judged over an ensemble needs a figure each member reports (used for engine::kSpread).
  const auto add = [&](core::Section& at, SloBound bound) {
    if (std::any_of(s.slo.begin(), s.slo.end(), [&](const SloBound& o) { return o.metric == bound.metric; }))
      at.error("metric", "bounded twice: give each figure one bound");
    const engine::FigureInfo* f = engine::find_figure(bound.metric); // null: not a choice, reported already
    if (s.confidence > 0 && f != nullptr && !f->used_for(engine::kSpread))
      at.error("metric", "with confidence, a figure every ensemble member reports: one of " + ensemble_figure_list());
    s.slo.push_back(std::move(bound));
  };
  add(slo, {slo.choice("metric"), slo.seconds("max").value()});
  for (core::Section& b : slo.sections("also"))
    add(b, {b.choice("metric"), b.seconds("max").value()});
  s.draws = static_cast<int>(slo.integer("draws"));
  if (s.confidence > 0 && s.draws < 2) slo.error("draws", "an ensemble needs at least 2 draws");
  s.policy = top.string("policy");
  core::Section size = top.section("size");
  s.size.key = size.string("key");
  s.size_label = size.string("label");
  if (!s.size.key.empty() && !scenario_has_key(s.size.key))
    size.error("key", "not a key of the scenario schema (see xattn run --describe)");
  YAML::Node values = doc.root["size"]["values"];
  if (!values.IsSequence() || values.size() < 2)
    size.error("values", "expected a list of at least two values, smallest first");
  else
    for (const YAML::Node& v : values)
      s.size.values.push_back(flow(v));
  if (size.has("sizes")) {
    s.sizes = size.numbers("sizes", core::Dimension::kCount);
    if (s.sizes.size() != s.size.values.size()) size.error("sizes", "one size per value expected");
  }
  for (std::size_t i = s.sizes.size(); i < s.size.values.size(); ++i)
    s.sizes.push_back(static_cast<double>(i + 1));
  YAML::Node knobs = doc.root["knobs"];
  if (knobs.IsMap())
    for (auto it = knobs.begin(); it != knobs.end(); ++it) {
      Axis a{.key = it->first.Scalar(), .values = {}};
      if (a.key != "policy" && !scenario_has_key(a.key))
        d.add({doc.file, line_of(it->first), 0, "knobs." + a.key, "not a key of the scenario schema, nor 'policy'"});
      if (a.key == s.size.key) d.add({doc.file, line_of(it->first), 0, "knobs." + a.key, "already the size knob"});
      if (!it->second.IsSequence() || it->second.size() == 0)
        d.add({doc.file, line_of(it->second), 0, "knobs." + a.key, "expected a non-empty list of values"});
      else
        // A copy: `it->second` lives in the iterator's temporary proxy, gone before the loop body
        // (ASan: stack-use-after-scope in YAML::Node::begin()).
        for (const YAML::Node values = it->second; const YAML::Node& v : values)
          a.values.push_back(flow(v));
      s.knobs.push_back(std::move(a));
    }
  for (double v : top.numbers("seeds", core::Dimension::kCount))
    s.seeds.push_back(static_cast<std::int64_t>(v));
  if (!top.has("seeds")) s.seeds = {1}; // the schema's default
  if (s.seeds.empty()) top.error("seeds", "at least one seed");
  s.workers = static_cast<int>(top.integer("workers"));
  if (top.has("out")) {
    std::string o = top.string("out");
    s.out = fs::path(o).is_absolute() ? o : (dir / o).lexically_normal().string();
  }
  d.throw_if_any();
  return s;
}

namespace
{
/// The sweep machinery's view of a plan: the size and the scenario knobs are the swept keys.
struct Space {
  SweepSpec sweep;
  std::vector<std::vector<std::pair<std::string, std::string>>> combos;

  /// Points of (combo, size index), one per seed.
  std::vector<Point> points(std::size_t combo, std::size_t index, const PlanSpec& p) const
  {
    std::vector<Point> out;
    for (std::int64_t seed : p.seeds) {
      Point pt{.id = "", .values = {{p.size.key, p.size.values[index]}}, .seed = seed};
      for (const auto& kv : combos[combo])
        if (kv.first != "policy") pt.values.push_back(kv);
      std::vector<std::string> a;
      for (const auto& [k, v] : pt.values)
        a.push_back(k + "=" + v);
      a.push_back("seed=" + std::to_string(seed));
      if (p.confidence > 0) a.push_back("ensemble=" + std::to_string(p.draws)); // other results, other points
      pt.id = point_id(a);
      out.push_back(std::move(pt));
    }
    return out;
  }
  std::string judged(std::size_t combo, const PlanSpec& p) const
  {
    for (const auto& [k, v] : combos[combo])
      if (k == "policy") return v;
    return p.policy;
  }
};

Space make_space(const PlanSpec& p)
{
  Space s;
  s.sweep.name = p.name;
  s.sweep.file = p.file;
  s.sweep.base = p.base;
  s.sweep.grid.push_back(p.size);
  std::set<std::string> policies{p.policy};
  s.combos = {{}};
  for (const Axis& k : p.knobs) {
    if (k.key == "policy") {
      policies.erase(p.policy);
      policies.insert(k.values.begin(), k.values.end());
    } else {
      s.sweep.grid.push_back(k);
    }
    std::vector<std::vector<std::pair<std::string, std::string>>> next;
    for (const auto& c : s.combos)
      for (const std::string& v : k.values) {
        next.push_back(c);
        next.back().emplace_back(k.key, v);
      }
    s.combos = std::move(next);
  }
  s.sweep.policies.assign(policies.begin(), policies.end());
  return s;
}

// The judged figure of a point; clears `invariants_ok` where an invariant failed and sets
// `overloaded` where the policy did not keep up with the load (engine/load.hpp).
double figure(const std::string& dir, const std::string& id, const std::string& policy, const std::string& metric,
              bool& invariants_ok, bool& overloaded)
{
  const engine::RunResult s = engine::read_run_result(fs::path(point_dir(dir, id)) / "summary.json");
  const engine::PolicyResult* p = s.find(policy);
  if (p == nullptr) throw std::runtime_error("point " + id + " has no policy " + policy);
  invariants_ok = invariants_ok && s.ok;
  overloaded = overloaded || p->load.overloaded;
  return engine::figure(metric).value(*p);
}
// The judged figure of every ensemble member of a point.
std::vector<double> member_figures(const std::string& dir, const std::string& id, const std::string& policy,
                                   const std::string& metric)
{
  const engine::RunResult s = engine::read_run_result(fs::path(point_dir(dir, id)) / "summary.json");
  if (s.ensemble)
    for (const auto& [name, figs] : s.ensemble->policies)
      if (name == policy)
        for (const auto& [fig, sp] : figs)
          if (fig == metric) return sp.values;
  throw std::runtime_error("point " + id + " has no ensemble figure " + metric + " for " + policy);
}
// Candidate `i` of combination `c`, its points run: its worst figure for each bound of the SLO
// (or, with a confidence, the share of its ensemble members that meet them all), and whether it
// meets the SLO. A point in `refused` does not fit its data: the candidate is judged, not run.
Evaluation judge(const Space& space, const PlanSpec& spec, const std::string& dir, std::size_t c, std::size_t i,
                 const std::map<std::string, std::string>& refused)
{
  Evaluation e;
  e.combo = c;
  e.index = i;
  for (const Point& p : space.points(c, i, spec))
    if (auto it = refused.find(p.id); it != refused.end() && e.refused.empty()) e.refused = it->second;
  int met = 0;
  e.worst_s.assign(spec.slo.size(), 0.0);
  for (const Point& p : space.points(c, i, spec)) {
    e.point_ids.push_back(p.id);
    if (!e.refused.empty()) continue; // nothing simulated: it does not fit
    const std::string judged = space.judged(c, spec);
    for (std::size_t b = 0; b < spec.slo.size(); ++b)
      e.worst_s[b] =
          std::max(e.worst_s[b], figure(dir, p.id, judged, spec.slo[b].metric, e.invariants_ok, e.overloaded));
    if (spec.confidence > 0) {
      // A member meets the SLO when each of its figures is within its bound.
      std::vector<bool> meets;
      for (const SloBound& b : spec.slo) {
        const std::vector<double> v = member_figures(dir, p.id, judged, b.metric);
        meets.resize(v.size(), true);
        for (std::size_t k = 0; k < v.size(); ++k)
          meets[k] = meets[k] && v[k] <= b.max_s;
      }
      e.members += static_cast<int>(meets.size());
      met += static_cast<int>(std::count(meets.begin(), meets.end(), true));
    }
  }
  if (!e.refused.empty()) {
    e.meets = false;
    e.share = 0;
  } else if (spec.confidence > 0) {
    e.share = e.members > 0 ? static_cast<double>(met) / e.members : 0.0;
    e.meets = e.share >= spec.confidence;
  } else {
    e.meets = true;
    for (std::size_t b = 0; b < spec.slo.size(); ++b)
      e.meets = e.meets && e.worst_s[b] <= spec.slo[b].max_s;
  }
  // A configuration that does not keep up with its load meets nothing: its latencies are a
  // growing queue's, which a longer run would make worse.
  e.meets = e.meets && !e.overloaded;
  return e;
}
} // namespace

PlanResult run_plan(const PlanSpec& spec, const std::string& out, int workers, bool progress)
{
  const auto t0 = std::chrono::steady_clock::now();
  Space space = make_space(spec);
  PlanResult r;
  r.dir = fs::absolute(!out.empty() ? out : !spec.out.empty() ? spec.out : "out/" + spec.name).lexically_normal();
  r.combos = space.combos;
  for (std::size_t c = 0; c < space.combos.size(); ++c) // every candidate loads before anything runs
    for (std::size_t i = 0; i < spec.size.values.size(); ++i)
      check_points(space.sweep, space.points(c, i, spec));

  const std::size_t n = spec.size.values.size();
  struct Search {
    long lo = -1, hi; // lo: largest index known to fail; hi: smallest known to meet
    bool done = false, feasible = true;
  };
  std::vector<Search> search(space.combos.size(), Search{.hi = static_cast<long>(n)});
  std::vector<Point> all;
  auto evaluate = [&](const std::vector<std::pair<std::size_t, std::size_t>>& batch) {
    for (const auto& [c, i] : batch)
      for (const Point& p : space.points(c, i, spec))
        if (std::none_of(all.begin(), all.end(), [&](const Point& q) { return q.id == p.id; })) all.push_back(p);
    Manifest m = make_manifest(space.sweep, all, self_exe());
    m.ensemble = spec.confidence > 0 ? spec.draws : 0;
    write_manifest(m, r.dir);
    std::vector<std::string> only;
    for (const auto& [c, i] : batch)
      for (const Point& p : space.points(c, i, spec))
        only.push_back(p.id);
    LocalOutcome lo =
        run_local(m, r.dir, {.workers = workers > 0 ? workers : spec.workers, .progress = progress, .only = only});
    r.simulations += lo.ran;
    if (lo.interrupted) {
      r.interrupted = true;
      return;
    }
    std::map<std::string, std::string> refused; // failed points whose data does not fit: judged, not fatal
    for (const std::string& id : lo.failed_ids) {
      std::optional<std::string> why = read_refusal(r.dir, id);
      if (!why) throw std::runtime_error("point " + id + " failed: see " + point_dir(r.dir, id) + "/run.log");
      refused[id] = std::move(*why);
    }
    for (const auto& [c, i] : batch) {
      const Evaluation e = judge(space, spec, r.dir, c, i, refused);
      r.evaluations.push_back(e);
      Search& s = search[c];
      if (e.meets)
        s.hi = std::min(s.hi, static_cast<long>(i));
      else
        s.lo = std::max(s.lo, static_cast<long>(i));
    }
  };

  // Both ends first, then bisection rounds over every live combination at once.
  std::vector<std::pair<std::size_t, std::size_t>> batch;
  for (std::size_t c = 0; c < search.size(); ++c)
    batch.push_back({c, n - 1});
  for (std::size_t c = 0; c < search.size(); ++c)
    batch.push_back({c, 0});
  evaluate(batch);
  while (!r.interrupted) {
    batch.clear();
    for (std::size_t c = 0; c < search.size(); ++c) {
      Search& s = search[c];
      s.feasible = s.hi < static_cast<long>(n);
      s.done = !s.feasible || s.hi == s.lo + 1 || s.hi == 0;
      if (!s.done) batch.push_back({c, static_cast<std::size_t>((s.lo + s.hi) / 2)});
    }
    if (batch.empty()) break;
    evaluate(batch);
  }
  for (std::size_t c = 0; c < search.size() && !r.interrupted; ++c) {
    const Search& s = search[c];
    if (!s.feasible || (r.answer && spec.sizes[s.hi] >= spec.sizes[r.answer->index])) continue;
    for (const Evaluation& e : r.evaluations) {
      if (e.combo == c && static_cast<long>(e.index) == s.hi) r.answer = e;
    }
    r.next_smaller.reset();
    for (const Evaluation& e : r.evaluations)
      if (e.combo == c && static_cast<long>(e.index) == s.hi - 1) r.next_smaller = e;
  }
  Manifest last = make_manifest(space.sweep, all, self_exe());
  last.ensemble = spec.confidence > 0 ? spec.draws : 0;
  write_table(last, r.dir);
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

} // namespace xattn::sim::study
