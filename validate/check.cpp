#include "validate/check.hpp"

#include "sim/core/atomic_file.hpp"
#include "sim/core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>

namespace xattn::validate
{
namespace
{

// The series' point indices in size order (ties in file order).
std::vector<std::size_t> by_size(const calibrate::Series& s)
{
  std::vector<std::size_t> order(s.points.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&s](std::size_t a, std::size_t b) { return s.points[a].x.at(0) < s.points[b].x.at(0); });
  return order;
}

} // namespace

Halves split_measurements(const calibrate::Measurements& m, const CheckOptions& opt)
{
  Halves h{m, m};
  for (std::size_t k = 0; k < m.series.size(); ++k) {
    const calibrate::Series& s = m.series[k];
    if (s.measured != calibrate::Measured::kTransfer) {
      h.held.series[k].points.clear(); // fitted whole, not checked
      continue;
    }
    std::vector<std::size_t> order = by_size(s);
    std::vector<bool> held(order.size(), false);
    if (opt.split == Split::kParity) {
      for (std::size_t r = 1; r < order.size(); r += 2)
        held[order[r]] = true;
    } else {
      std::mt19937_64 rng(opt.seed + k); // each series its own stream: adding one moves no other
      std::shuffle(order.begin(), order.end(), rng);
      for (std::size_t r = (order.size() + 1) / 2; r < order.size(); ++r)
        held[order[r]] = true;
    }
    h.fit.series[k].points.clear();
    h.held.series[k].points.clear();
    for (std::size_t i = 0; i < s.points.size(); ++i)
      (held[i] ? h.held : h.fit).series[k].points.push_back(s.points[i]);
    if (h.fit.series[k].points.size() < 2 || h.held.series[k].points.empty())
      core::fail(m.file, s.line, 0, s.name,
                 "too few points to split (" + std::to_string(s.points.size()) + "): a check needs at least 3");
  }
  return h;
}

std::vector<std::optional<double>> interpolate_floor(const calibrate::Series& fit, const calibrate::Series& held)
{
  // The fit half's sizes, each with its mean time.
  std::map<double, std::pair<double, int>> at;
  for (const calibrate::Point& p : fit.points) {
    auto& [sum, n] = at[p.x.at(0)];
    sum += p.t_s, ++n;
  }
  std::vector<std::optional<double>> out;
  for (const calibrate::Point& p : held.points) {
    const double x = p.x.at(0);
    auto hi = at.lower_bound(x);
    if (hi == at.end()) {
      out.emplace_back();
      continue;
    }
    const double t_hi = hi->second.first / hi->second.second;
    if (hi->first == x) {
      out.emplace_back(t_hi);
      continue;
    }
    if (hi == at.begin()) {
      out.emplace_back();
      continue;
    }
    auto lo = std::prev(hi);
    const double t_lo = lo->second.first / lo->second.second;
    out.emplace_back(t_lo + (t_hi - t_lo) * (x - lo->first) / (hi->first - lo->first));
  }
  return out;
}

CheckReport check_calibration(const calibrate::Measurements& m, const CheckOptions& opt,
                              const std::string& profile_path, bool progress)
{
  const Halves h = split_measurements(m, opt);
  CheckReport out;
  const auto fits = calibrate::fit_measurements(h.fit, opt.fit);
  out.profile_text =
      calibrate::render_profile(fits, {"check", opt.base, "fitted by xattn calibrate check on half of " + m.file});
  core::write_file_atomically(profile_path, out.profile_text);
  MicroRunner runner(profile_path);
  MeasuredData held = from_measurements(h.held);
  out.validation = validate_measured(held, runner, progress);
  out.validation.kind = "check";

  // Floors, per point and per group (a group is a series: from_measurements names it so).
  std::map<std::string, std::vector<std::optional<double>>> floors;
  for (std::size_t k = 0; k < m.series.size(); ++k)
    if (!h.held.series[k].points.empty())
      floors[m.series[k].name] = interpolate_floor(h.fit.series[k], h.held.series[k]);
  std::map<std::string, std::size_t> next;
  for (PointResult& p : out.validation.points) {
    auto f = floors.find(p.row.group);
    if (f != floors.end() && next[p.row.group] < f->second.size()) p.floor_s = f->second[next[p.row.group]++];
  }
  out.ok = out.validation.invariants_ok;
  for (ErrorStats& g : out.validation.groups) {
    double sum = 0;
    g.floor_points = 0;
    for (const PointResult& p : out.validation.points)
      if (p.row.group == g.group && p.floor_s) {
        sum += std::abs(*p.floor_s - p.row.latency_s) / p.row.latency_s;
        ++g.floor_points;
      }
    g.floor = g.floor_points > 0 ? sum / static_cast<double>(g.floor_points) : 0.0;
    g.limit = opt.max_over_floor * std::max(g.floor, kFloorMin);
    out.ok = out.ok && g.mape <= g.limit;
  }
  return out;
}

std::string check_table(const CheckReport& r, double max_over_floor, std::size_t worst)
{
  const ValidationReport& v = r.validation;
  std::string o = fmt::format("checked {} held-out points of {} against a profile fitted on the other half; {} engine "
                              "runs\n",
                              v.points.size(), v.file, v.engine_runs);
  o += fmt::format("{:<28} {:>7} {:>9} {:>9} {:>9} {:>9}  {}\n", "group", "points", "MAPE", "max err", "floor",
                   "x floor", "verdict");
  for (const ErrorStats& g : v.groups)
    o += fmt::format("{:<28} {:>7} {:>8.2f}% {:>8.2f}% {:>8.2f}% {:>9.2f}  {}\n", g.group, g.points, 100 * g.mape,
                     100 * g.max_error, 100 * g.floor, g.mape / std::max(g.floor, kFloorMin),
                     g.mape <= g.limit ? "ok" : fmt::format("FAIL (limit {:.2f}%)", 100 * g.limit));
  o += fmt::format("floor: each held-out point interpolated between its measured neighbours in the fit half; a "
                   "group fails above {} x its floor (--max-over-floor)\n",
                   max_over_floor);
  // The worst points, as validate prints them.
  const std::string t = report_table(v, worst);
  const auto at = t.find("worst points:");
  if (at != std::string::npos) o += t.substr(at);
  return o;
}

} // namespace xattn::validate
