#include "sim/model/sweep.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <charconv>
#include <cmath>

namespace xattn::sim
{
namespace
{

bool is_integer_var(const std::string& v)
{
  return v != "reuse";
}

PredictRequest with(PredictRequest r, const std::string& var, double x)
{
  if (var == "mq")
    r.mq = x;
  else if (var == "ct")
    r.ct = x;
  else if (var == "holders") {
    r.holders = static_cast<int>(x);
    if (r.blocks && *r.blocks < r.holders) r.blocks = r.holders; // every holder contributes at least one run
  } else
    r.reuse = x;
  return r;
}

double parse_number(std::string_view s)
{
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v) || v < 0)
    core::fail("command line", 0, 0, "--sweep", "'" + std::string(s) + "' is not a number >= 0");
  return v;
}

} // namespace

SweepSpec parse_sweep(std::string_view text)
{
  auto eq = text.find('=');
  auto colon = text.find(':', eq == std::string_view::npos ? 0 : eq);
  if (eq == std::string_view::npos || colon == std::string_view::npos)
    core::fail("command line", 0, 0, "--sweep", "expected VAR=FROM:TO, got '" + std::string(text) + "'");
  SweepSpec s{std::string(text.substr(0, eq)), parse_number(text.substr(eq + 1, colon - eq - 1)),
              parse_number(text.substr(colon + 1))};
  if (s.var != "mq" && s.var != "ct" && s.var != "holders" && s.var != "reuse")
    core::fail("command line", 0, 0, "--sweep", "unknown variable '" + s.var + "' (expected mq, ct, holders or reuse)");
  if (!(s.to > s.from)) core::fail("command line", 0, 0, "--sweep", "TO must be greater than FROM");
  if (s.var != "reuse" && s.from < 1) core::fail("command line", 0, 0, "--sweep", s.var + " starts at 1 or more");
  return s;
}

SweepResult sweep(const ModelSpec& m, const Profile& p, const PredictRequest& base, const SweepSpec& spec,
                  std::optional<PathCost> path)
{
  SweepResult r;
  r.spec = spec;
  if (spec.var == "holders" && spec.to - spec.from <= 64) {
    for (double x = spec.from; x <= spec.to; x += 1)
      r.values.push_back(x);
  } else {
    double x = spec.from;
    if (x == 0) {
      r.values.push_back(0);
      x = 1;
    }
    for (; x < spec.to; x *= 2)
      r.values.push_back(is_integer_var(spec.var) ? std::round(x) : x);
    r.values.push_back(spec.to);
  }
  for (double x : r.values)
    r.points.push_back(predict(m, p, with(base, spec.var, x), path));

  for (std::size_t i = 1; i < r.points.size(); ++i) {
    Primitive a = r.points[i - 1].decision.choice, b = r.points[i].decision.choice;
    if (a == b) continue;
    double lo = r.values[i - 1], hi = r.values[i];
    // Invariant: decision(lo) == a, decision(hi) != a.
    for (int iter = 0; iter < 200; ++iter) {
      if (is_integer_var(spec.var) ? hi - lo <= 1 : hi - lo <= 1e-9 * std::max(1.0, hi)) break;
      double mid = is_integer_var(spec.var) ? std::floor((lo + hi) / 2) : (lo + hi) / 2;
      if (predict(m, p, with(base, spec.var, mid), path).decision.choice == a)
        lo = mid;
      else
        hi = mid;
    }
    r.crossovers.push_back({hi, a, predict(m, p, with(base, spec.var, hi), path).decision.choice});
  }
  return r;
}

std::string to_table(const SweepResult& r)
{
  std::string out = fmt::format("{:>10}{:>12}{:>12}{:>12}{:>10}\n", r.spec.var, "route", "fetch", "local", "decision");
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    const Decision& d = r.points[i].decision;
    out += fmt::format("{:>10g}{:>12}{:>12}{:>12}{:>10}\n", r.values[i], core::format_seconds(d.route_total),
                       core::format_seconds(d.fetch_total), core::format_seconds(d.local_total), to_string(d.choice));
  }
  if (r.crossovers.empty()) out += "no crossover in this range\n";
  for (const Crossover& c : r.crossovers)
    out +=
        fmt::format("crossover: {} -> {} at {} = {:.6g}\n", to_string(c.before), to_string(c.after), r.spec.var, c.at);
  return out;
}

nlohmann::json to_json(const SweepResult& r)
{
  nlohmann::json j;
  j["variable"] = r.spec.var;
  j["points"] = nlohmann::json::array();
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    const Decision& d = r.points[i].decision;
    j["points"].push_back(
        {{"value", r.values[i]},
         {"decision", std::string(to_string(d.choice))},
         {"total_s",
          {{"route", d.route_total.value()}, {"fetch", d.fetch_total.value()}, {"local", d.local_total.value()}}}});
  }
  j["crossovers"] = nlohmann::json::array();
  for (const Crossover& c : r.crossovers)
    j["crossovers"].push_back(
        {{"at", c.at}, {"from", std::string(to_string(c.before))}, {"to", std::string(to_string(c.after))}});
  return j;
}

} // namespace xattn::sim
