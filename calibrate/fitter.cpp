#include "calibrate/fitter.hpp"
#include "sim/core/yaml.hpp"

#include "sim/core/error.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <stdexcept>

namespace xattn::calibrate
{

std::string fixed6(double v, const char* unit)
{
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g%s", v, unit);
  return buf;
}

namespace
{

std::vector<double> column(const Series& s, std::size_t k)
{
  std::vector<double> out;
  for (const Point& p : s.points)
    out.push_back(p.x.at(k));
  return out;
}

std::vector<double> times(const Series& s)
{
  std::vector<double> out;
  for (const Point& p : s.points)
    out.push_back(p.t_s);
  return out;
}

// Features of the linear kernel-time models, per point.
std::vector<double> features(Measured m, const std::vector<double>& x)
{
  switch (m) {
  case Measured::kKernel:
    return {1.0, x[0], x[0] * x[1]};
  case Measured::kMerge:
    return {1.0, x[0] * x[1]};
  case Measured::kSplice:
    return {x[0], x[1]};
  default:
    return {};
  }
}

void fit_linear(FittedSeries& f, const Series& s)
{
  std::vector<std::vector<double>> rows;
  for (const Point& p : s.points)
    rows.push_back(features(s.measured, p.x));
  std::vector<double> t = times(s);
  f.coeffs = fit_linear_model(rows, t);
  auto loo = [&](std::size_t i) {
    std::vector<std::vector<double>> r2 = rows;
    std::vector<double> t2 = t;
    r2.erase(r2.begin() + static_cast<std::ptrdiff_t>(i));
    t2.erase(t2.begin() + static_cast<std::ptrdiff_t>(i));
    try {
      std::vector<double> c = fit_linear_model(r2, t2);
      double y = 0;
      for (std::size_t k = 0; k < c.size(); ++k)
        y += c[k] * rows[i][k];
      return y;
    } catch (const std::domain_error&) {
      return f.predict(s.points[i].x);
    }
  };
  f.quality = quality(
      t, [&](std::size_t i) { return f.predict(s.points[i].x); }, loo);
  static const std::map<Measured, std::vector<std::string>> kKeys{
      {Measured::kKernel, {"holder.kernel_fixed", "holder.kernel_per_token", "holder.kernel_per_token_row"}},
      {Measured::kMerge, {"merge.fixed", "merge.per_row"}},
      {Measured::kSplice, {"splice.fixed", "splice.per_token"}},
  };
  const auto& keys = kKeys.at(s.measured);
  for (std::size_t k = 0; k < keys.size(); ++k) {
    if (f.coeffs[k] < 0) // a negative cost term is not physical: keep the base's value, and say so
      f.notes.push_back(keys[k] + " not set: fitted " + fixed6(f.coeffs[k], " s") + " < 0");
    else
      f.sets.emplace_back(keys[k], seconds_text(f.coeffs[k]));
  }
  // Spread by bootstrap: the points resampled with replacement, the model refitted.
  std::mt19937_64 rng(0x5eed);
  const std::size_t n = rows.size(), p = f.coeffs.size();
  std::vector<std::vector<double>> draws;
  for (int b = 0; b < 200; ++b) {
    std::vector<std::vector<double>> r2(n);
    std::vector<double> t2(n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t j = rng() % n;
      r2[i] = rows[j], t2[i] = t[j];
    }
    try {
      draws.push_back(fit_linear_model(r2, t2));
    } catch (const std::domain_error&) {
      // a degenerate resample: skip it
    }
  }
  if (draws.size() < 2) return;
  std::vector<double> mean(p, 0.0);
  for (const auto& d : draws)
    for (std::size_t k = 0; k < p; ++k)
      mean[k] += d[k] / static_cast<double>(draws.size());
  auto cov = [&](std::size_t a, std::size_t b) {
    double c = 0;
    for (const auto& d : draws)
      c += (d[a] - mean[a]) * (d[b] - mean[b]);
    return c / static_cast<double>(draws.size() - 1);
  };
  std::vector<std::size_t> set;
  for (std::size_t k = 0; k < p; ++k)
    if (f.coeffs[k] > 0 && cov(k, k) > 0) {
      f.uncertainty.push_back(
          {keys[k], std::sqrt(cov(k, k)) / f.coeffs[k], "fit: bootstrap of " + std::to_string(n) + " points"});
      set.push_back(k);
    }
  for (std::size_t i = 0; i < set.size(); ++i)
    for (std::size_t j = i + 1; j < set.size(); ++j)
      f.correlations.push_back(
          {keys[set[i]], keys[set[j]], cov(set[i], set[j]) / std::sqrt(cov(set[i], set[i]) * cov(set[j], set[j]))});
}

// A value to 12 significant digits. Measurements carry far fewer; what this drops is how a unit
// conversion rounded (78us and 0.078 ms are one time, one bit apart as doubles), so that one table
// gives one profile, byte for byte, whatever layout and units it was written in.
double canonical(double v)
{
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.12g", v);
  return std::strtod(buf, nullptr);
}

// A size in whole bytes, as the profile writes sizes: "173887B".
std::string whole_bytes(double b)
{
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0fB", std::round(b));
  return buf;
}

} // namespace

std::string seconds_text(double s)
{
  double a = std::abs(s);
  if (a == 0) return "0us";
  if (a >= 1) return fixed6(s, "s");
  if (a >= 1e-3) return fixed6(s * 1e3, "ms");
  if (a >= 1e-6) return fixed6(s * 1e6, "us");
  if (a >= 1e-9) return fixed6(s * 1e9, "ns");
  return fixed6(s * 1e12, "ps");
}

std::string rate_text(double r)
{
  if (r >= 1e9) return fixed6(r / 1e9, "GBps");
  if (r >= 1e6) return fixed6(r / 1e6, "MBps");
  return fixed6(r, "Bps");
}

double FittedSeries::predict(const std::vector<double>& x) const
{
  if (line) return (*line)(x.at(0));
  if (knee) return (*knee)(x.at(0));
  std::vector<double> f = features(measured, x);
  double y = 0;
  for (std::size_t k = 0; k < coeffs.size(); ++k)
    y += coeffs[k] * f[k];
  return y;
}

FittedSeries fit_series(const Series& measured, const std::string& file, const FitOptions& opt)
{
  Series s = measured;
  for (Point& p : s.points) {
    p.t_s = canonical(p.t_s);
    for (double& x : p.x)
      x = canonical(x);
  }
  FittedSeries f;
  f.name = s.name;
  f.measured = s.measured;
  try {
    switch (s.measured) {
    case Measured::kTransfer:
    case Measured::kLaunch:
      fit_transfer(f, s, opt.piecewise);
      break;
    case Measured::kKernel:
    case Measured::kMerge:
    case Measured::kSplice:
      f.model = s.measured == Measured::kKernel  ? "fixed + per_token*T + per_token_row*T*R"
                : s.measured == Measured::kMerge ? "fixed + per_row*P*R"
                                                 : "fixed*runs + per_token*tokens";
      fit_linear(f, s);
      break;
    case Measured::kCopyElbow:
    case Measured::kComputeElbow: {
      f.knee = find_knee(column(s, 0), times(s), opt.knee_min_rise);
      f.model = "hinge: flat up to the knee, then linear";
      f.quality = f.knee->quality;
      std::string key = s.measured == Measured::kCopyElbow ? "holder.copy_streams" : "holder.compute_concurrency";
      f.sets.emplace_back(key, std::to_string(static_cast<long long>(std::llround(f.knee->knee))));
      if (!f.knee->found)
        f.notes.push_back(key + ": no rise within the sweep; the elbow is at least the largest level measured");
      break;
    }
    case Measured::kOther:
      throw std::domain_error("not a fittable quantity");
    }
  } catch (const std::domain_error& e) {
    core::fail(file, s.line, 0, s.name, std::string("cannot fit: ") + e.what());
  } catch (const std::out_of_range&) {
    core::fail(file, s.line, 0, s.name, "a point has fewer values than the model needs");
  }
  return f;
}

std::vector<FittedSeries> fit_measurements(const Measurements& m, const FitOptions& opt,
                                           std::vector<std::string>* notes)
{
  std::vector<FittedSeries> out;
  std::vector<bool> single;
  std::vector<int> line;
  std::vector<std::string> skipped;
  std::map<std::string, std::string> owner;
  core::Diagnostics diags;
  for (const Series& s : m.series) {
    if (s.measured == Measured::kOther || s.points.empty()) continue;
    if (s.measured == Measured::kTransfer &&
        std::all_of(s.points.begin(), s.points.end(), [&s](const Point& p) { return p.x == s.points[0].x; })) {
      // One size fixes no latency and no rate apart: nothing to set (the series still validates).
      skipped.push_back(s.name + ": not fitted: one size measured (" + fixed6(s.points[0].x.at(0), "B") +
                        "); a transfer line needs two");
      continue;
    }
    try {
      out.push_back(fit_series(s, m.file, opt));
      single.push_back(s.single_block);
      line.push_back(s.line);
    } catch (const core::InputError& e) {
      for (const auto& d : e.diagnostics())
        diags.add(d);
    }
  }
  // A fabric's probe latency is what one exchange of a small message costs: where a single-block
  // series (small messages, one dispatch) and bulk series of one transport both give it, the
  // single-block one sets it.
  auto is_probe = [](const std::string& key) { return key.find(".probe_") != std::string::npos; };
  for (std::size_t i = 0; i < out.size(); ++i)
    for (std::size_t j = 0; j < out.size(); ++j) {
      if (!single[i] || single[j]) continue;
      for (const auto& entry : out[i].sets) {
        const std::string& key = entry.first; // a named variable: a lambda may not capture a binding
        auto& sets = out[j].sets;
        auto it = std::find_if(sets.begin(), sets.end(), [&](const auto& kv) { return kv.first == key; });
        if (!is_probe(key) || it == sets.end()) continue;
        sets.erase(it);
        std::erase_if(out[j].uncertainty, [&](const Uncertainty& u) { return u.key == key; });
        std::erase_if(out[j].spread_check, [&](const Uncertainty& u) { return u.key == key; });
        std::erase_if(out[j].correlations, [&](const Correlation& c) { return c.a == key || c.b == key; });
        out[j].notes.push_back(key + " left to series '" + out[i].name + "' (single-block: small messages)");
      }
    }
  for (std::size_t i = 0; i < out.size(); ++i)
    for (const auto& [key, value] : out[i].sets) {
      auto [it, fresh] = owner.emplace(key, out[i].name);
      if (!fresh)
        diags.add(
            {m.file, line[i], 0, out[i].name, "sets " + key + ", which series '" + it->second + "' sets already"});
    }
  // A spread of 100% or more is no measurement's: the points cannot tell the value (too few, or
  // one size far from the rest). The profile gives the value without a spread, and says why.
  for (FittedSeries& f : out) {
    for (const Uncertainty& u : f.uncertainty)
      if (u.relative >= 1)
        f.notes.push_back(u.key + ": no uncertainty written: its bootstrap spread is " + fixed6(100 * u.relative, "%"));
    std::erase_if(f.correlations, [&f](const Correlation& c) {
      return std::any_of(f.uncertainty.begin(), f.uncertainty.end(),
                         [&c](const Uncertainty& u) { return u.relative >= 1 && (u.key == c.a || u.key == c.b); });
    });
    std::erase_if(f.uncertainty, [](const Uncertainty& u) { return u.relative >= 1; });
  }
  diags.throw_if_any();
  if (out.empty()) {
    std::string why;
    for (const std::string& n : skipped)
      why += (why.empty() ? " (" : "; ") + n;
    core::fail(m.file, 0, 0, "", "no series to fit" + (why.empty() ? "" : why + ")"));
  }
  if (notes) notes->insert(notes->end(), skipped.begin(), skipped.end());
  return out;
}

namespace
{
// A fit's record in the profile (its `fit:` entry): how well it fits, its breakpoints, where the
// curve departs from the measured times, the values it sets.
YAML::Node fit_record(const FittedSeries& f)
{
  YAML::Node n;
  n["measured"] = std::string(to_string(f.measured));
  n["model"] = f.model;
  n["points"] = f.quality.points;
  n["r2"] = fixed6(f.quality.r2, "");
  n["mape"] = fixed6(f.quality.mape, "");
  n["max_error"] = fixed6(f.quality.max_error, "");
  n["loo_mape"] = fixed6(f.quality.loo_mape, "");
  if (f.line && !f.line->breakpoints.empty()) {
    YAML::Node bps;
    for (double b : f.line->breakpoints)
      bps.push_back(whole_bytes(b));
    n["breakpoints"] = bps;
  }
  if (f.line && f.measured == Measured::kTransfer) {
    // Where the curve departs from the measured times to stay non-decreasing.
    for (const Flattened& r : f.line->flattened) {
      YAML::Node run;
      run["at"] = whole_bytes(r.at_B);
      run["from"] = whole_bytes(r.from_B);
      run["to"] = whole_bytes(r.to_B);
      run["points"] = r.points;
      run["fell"] = fixed6(r.fell, "");
      run["max_change"] = fixed6(r.max_change, "");
      n["flattened"].push_back(run);
    }
    for (const std::string& a : f.line->adjustments)
      n["adjustments"].push_back(a);
  }
  for (const Uncertainty& u : f.spread_check)
    n["spread_check"][u.key]["relative"] = fixed6(u.relative, "");
  if (!f.sets.empty()) {
    YAML::Node sets;
    for (const auto& kv : f.sets)
      sets.push_back(kv.first);
    n["sets"] = sets;
  }
  return n;
}
} // namespace

std::string render_profile(const std::vector<FittedSeries>& fits, const ProfileHeader& header)
{
  YAML::Node root;
  root["name"] = header.name;
  if (!header.description.empty()) root["description"] = header.description;
  if (!header.base.empty()) root["extends"] = header.base;
  for (const FittedSeries& f : fits)
    for (const auto& [key, value] : f.sets) {
      if (key == f.curve_key) continue; // written below, as a list
      // Walk the dotted path; yaml-cpp nodes are handles, so this edits `root` in place.
      std::vector<YAML::Node> chain{root};
      std::size_t start = 0;
      while (true) {
        auto dot = key.find('.', start);
        std::string part = key.substr(start, dot - start);
        if (dot == std::string::npos) {
          chain.back()[part] = value;
          break;
        }
        chain.push_back(chain.back()[part]);
        start = dot + 1;
      }
    }
  for (const FittedSeries& f : fits) {
    if (f.curve.empty()) continue;
    YAML::Node list;
    for (const CurveSegment& k : f.curve) {
      YAML::Node seg;
      seg["from"] = whole_bytes(k.from.value());
      seg["latency"] = seconds_text(k.latency.value());
      seg["bandwidth"] = rate_text(k.bandwidth.value());
      list.push_back(seg);
    }
    const std::string fabric = f.curve_key.substr(8, f.curve_key.size() - 8 - 9); // fabrics.<f>.transfer
    root["fabrics"][fabric]["transfer"] = list;
  }
  YAML::Node spread, corr;
  for (const FittedSeries& f : fits) {
    for (const Uncertainty& u : f.uncertainty) {
      spread[u.key]["relative"] = fixed6(u.relative, "");
      spread[u.key]["source"] = u.source;
    }
    for (const Correlation& c : f.correlations) {
      YAML::Node n;
      n["a"] = c.a;
      n["b"] = c.b;
      n["rho"] = fixed6(c.rho, "");
      corr.push_back(n);
    }
  }
  if (spread.size() > 0) root["uncertainty"] = spread;
  if (corr.size() > 0) root["correlations"] = corr;
  YAML::Node fit_node;
  for (const FittedSeries& f : fits)
    fit_node[f.name] = fit_record(f);
  root["fit"] = fit_node;
  YAML::Emitter out;
  out << root;
  std::string text = "# Written by `xattn calibrate fit`. Errors in fit: are fractions of the measured time.\n";
  for (const FittedSeries& f : fits)
    for (const std::string& note : f.notes)
      text += "# " + f.name + ": " + note + "\n";
  return text + out.c_str() + "\n";
}

} // namespace xattn::calibrate
