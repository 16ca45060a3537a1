#include "sim/study/capacity.hpp"

#include "sim/core/error.hpp"
#include "sim/core/failure.hpp"
#include "sim/core/units.hpp"
#include "sim/engine/driver.hpp"
#include "sim/engine/figures.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>

namespace xattn::sim::study
{
namespace fs = std::filesystem;
using nlohmann::json;

namespace
{

std::string load_name(double x)
{
  return fmt::format("load-{:.6g}x", x);
}

std::string times(double x)
{
  return fmt::format("{:.3g}x", x);
}

// A probe was interrupted (SIGINT, SIGTERM): the search stops with what it has.
struct Stopped {
};

struct Search {
  const CapacitySpec& spec;
  const engine::Scenario& base;
  fs::path dir;
  bool progress;
  int simulations = 0;
  double base_requests_per_s = 0;

  Probe probe(const std::string& policy, double x)
  {
    std::vector<std::string> sets = spec.sets;
    sets.push_back(fmt::format("workload.time_scale={:.17g}", base.workload.time_scale * x));
    sets.push_back("policies=[" + policy + "]");
    const engine::Scenario sc = engine::load_scenario(spec.scenario, sets);
    engine::RunOptions opt;
    opt.out_dir = (dir / policy / load_name(x)).string();
    opt.replace = true;
    opt.progress = false;
    opt.run_id = "capacity";
    opt.jobs = 1;
    const engine::RunOutcome o = engine::run_scenario(sc, opt);
    ++simulations;
    if (o.exit_code == core::code(core::ExitCode::kInterrupted)) throw Stopped{};
    const engine::PolicyResult& p = o.result.policies.front().second;
    if (!(p.load.window_s > 0))
      core::fail(spec.scenario, 0, 0, "workload",
                 "its requests arrive all at once or in a closed loop: there is no arrival rate to scale");
    if (x == 1.0) base_requests_per_s = p.load.offered_requests_per_s;
    Probe r;
    r.load = x;
    r.dir = o.out_dir;
    r.offered_tokens_per_s = p.load.steady_offered_tokens_per_s;
    r.delivered_share = p.load.steady_share();
    if (spec.slo) r.metric_s = engine::figure(spec.slo->metric).value(p);
    r.overloaded = p.load.overloaded;
    if (r.overloaded)
      r.why = fmt::format("overloaded: delivered {:.0f}% of the offered output tokens", 100 * r.delivered_share);
    else if (!p.invariants.ok)
      r.why = "an invariant failed (" + (p.invariants.problems.empty() ? "" : p.invariants.problems.front()) + ")";
    else if (spec.slo && r.metric_s > spec.slo->max_s)
      r.why = fmt::format("{} {} > {}", spec.slo->metric, core::format_seconds(core::Seconds(r.metric_s)),
                          core::format_seconds(core::Seconds(spec.slo->max_s)));
    r.meets = r.why.empty();
    if (progress) std::cerr << fmt::format("[{}] {}: {}\n", policy, times(x), r.meets ? "meets" : r.why);
    return r;
  }

  PolicyCapacity run(const std::string& policy)
  {
    PolicyCapacity c;
    c.policy = policy;
    auto at = [&](double x) {
      c.probes.push_back(probe(policy, x));
      return c.probes.back();
    };
    std::optional<Probe> lo, hi;
    Probe first = at(1.0);
    (first.meets ? lo : hi) = first;
    if (first.meets)
      for (double x = 2; x <= spec.max_load && !hi; x *= 2) {
        Probe p = at(x);
        (p.meets ? lo : hi) = p;
      }
    else
      for (double x = 0.5; x >= spec.min_load && !lo; x /= 2) {
        Probe p = at(x);
        (p.meets ? lo : hi) = p;
      }
    while (lo && hi && hi->load / lo->load > 1 + spec.precision) {
      Probe p = at(std::sqrt(lo->load * hi->load));
      (p.meets ? lo : hi) = p;
    }
    c.answer = lo;
    c.next = hi;
    return c;
  }
};

} // namespace

Slo parse_slo(const std::string& text, const std::string& where)
{
  const auto eq = text.find('=');
  const std::string names = engine::figure_paths(engine::kBound, ", ");
  if (eq == std::string::npos)
    core::fail(where, 0, 0, "--slo", "expected FIGURE=BOUND (tpot_s.mean=50ms), got '" + text + "'");
  Slo s{text.substr(0, eq), 0};
  if (const engine::FigureInfo* f = engine::find_figure(s.metric); f == nullptr || !f->used_for(engine::kBound))
    core::fail(where, 0, 0, "--slo", "unknown figure '" + s.metric + "': one of " + names);
  try {
    s.max_s = core::parse_seconds(text.substr(eq + 1)).value();
  } catch (const std::exception& e) {
    core::fail(where, 0, 0, "--slo", std::string(e.what()));
  }
  if (!(s.max_s > 0)) core::fail(where, 0, 0, "--slo", "the bound must be positive, got '" + text.substr(eq + 1) + "'");
  return s;
}

CapacityResult run_capacity(const CapacitySpec& spec, bool progress)
{
  const auto start = std::chrono::steady_clock::now();
  const engine::Scenario base = engine::load_scenario(spec.scenario, spec.sets); // as given, its overrides in
  if (!(spec.min_load > 0 && spec.min_load <= 1 && spec.max_load >= 1 && spec.precision > 0))
    core::fail("command line", 0, 0, "capacity", "the load range must hold 1 and the precision be positive");
  CapacityResult r;
  r.name = base.name;
  r.overload_tolerance = base.overload_tolerance;
  r.dir = spec.out.empty() ? (fs::path("out") / (base.name + "-capacity")).string() : spec.out;
  fs::create_directories(r.dir);
  Search search{spec, base, r.dir, progress};
  try {
    for (const std::string& policy : spec.policies.empty() ? base.policies : spec.policies)
      r.policies.push_back(search.run(policy));
  } catch (const Stopped&) {
    r.interrupted = true;
  }
  r.simulations = search.simulations;
  r.base_requests_per_s = search.base_requests_per_s;
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

std::string capacity_text(const CapacitySpec& spec, const CapacityResult& r)
{
  std::string out = fmt::format(
      "capacity of {}: the highest load, as a multiple of the scenario's ({:.4g} requests/s), at which each policy "
      "keeps up{}, to within {:.0f}%\n\n",
      r.name, r.base_requests_per_s,
      spec.slo
          ? fmt::format(" and meets {} <= {}", spec.slo->metric, core::format_seconds(core::Seconds(spec.slo->max_s)))
          : std::string(),
      100 * spec.precision);
  // The SLO's figure at the answer, as a column of its own when there is an SLO.
  auto slo_column = [&](const std::string& text) { return spec.slo ? fmt::format(" {:>12}", text) : std::string(); };
  out += fmt::format("{:<12} {:>8} {:>14} {:>10}{}  {}\n", "policy", "load", "offered tok/s", "delivered",
                     slo_column(spec.slo ? spec.slo->metric : ""), "the next load up (evidence)");
  std::vector<std::pair<double, std::string>> ranked;
  for (const PolicyCapacity& c : r.policies) {
    const std::string next = c.next ? fmt::format("{}: {}", times(c.next->load), c.next->why)
                                    : fmt::format("none: met at the highest load tried, {}", times(spec.max_load));
    if (!c.answer) {
      out += fmt::format("{:<12} {:>8} {:>14} {:>10}{}  {}\n", c.policy, "-", "-", "-", slo_column("-"), next);
      continue;
    }
    const Probe& a = *c.answer;
    out += fmt::format("{:<12} {:>8} {:>14.0f} {:>9.0f}%{}  {}\n", c.policy, times(a.load), a.offered_tokens_per_s,
                       100 * a.delivered_share, slo_column(core::format_seconds(core::Seconds(a.metric_s))), next);
    ranked.emplace_back(a.load, c.policy);
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string verdict = "\nverdict:";
  for (std::size_t i = 0; i < ranked.size(); ++i)
    verdict += i == 0 ? fmt::format(" {} sustains {} the scenario's load", ranked[i].second, times(ranked[i].first))
                      : fmt::format(", {} {}", ranked[i].second, times(ranked[i].first));
  for (const PolicyCapacity& c : r.policies)
    if (!c.answer)
      verdict += fmt::format("{} {} fails even at {} of it", ranked.empty() ? "" : ";", c.policy, times(spec.min_load));
  out += verdict + fmt::format(" ({} simulations, {:.0f} s).\n", r.simulations, r.wall_s);
  return out;
}

json capacity_json(const CapacitySpec& spec, const CapacityResult& r)
{
  auto probe = [](const Probe& p) {
    return json{{"load", p.load},
                {"meets", p.meets},
                {"overloaded", p.overloaded},
                {"why", p.why},
                {"offered_tokens_per_s", p.offered_tokens_per_s},
                {"delivered_share", p.delivered_share},
                {"metric_s", p.metric_s},
                {"dir", p.dir}};
  };
  json j = {{"scenario", r.name},
            {"base_requests_per_s", r.base_requests_per_s},
            {"overload_tolerance", r.overload_tolerance},
            {"precision", spec.precision},
            {"simulations", r.simulations}};
  if (spec.slo) j["slo"] = {{"metric", spec.slo->metric}, {"max_s", spec.slo->max_s}};
  for (const PolicyCapacity& c : r.policies) {
    json p = {{"probes", json::array()}};
    for (const Probe& q : c.probes)
      p["probes"].push_back(probe(q));
    p["answer"] = c.answer ? probe(*c.answer) : json(nullptr);
    p["next"] = c.next ? probe(*c.next) : json(nullptr);
    j["policies"][c.policy] = p;
  }
  return j;
}

} // namespace xattn::sim::study
