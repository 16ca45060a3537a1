#include "calibrate/piecewise.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>

namespace xattn::calibrate
{

std::size_t Piecewise::segment(double x) const
{
  return static_cast<std::size_t>(std::upper_bound(breakpoints.begin(), breakpoints.end(), x) - breakpoints.begin());
}

namespace
{
constexpr double kInf = std::numeric_limits<double>::infinity();

struct Sorted {
  std::vector<double> x, t; // x normalised by its largest value, t by its smallest
  double x_scale = 1, t_scale = 1;
};

Sorted sort_and_scale(std::span<const double> x, std::span<const double> t)
{
  std::vector<std::size_t> order(x.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return x[a] < x[b]; });
  Sorted s;
  s.x_scale = *std::max_element(x.begin(), x.end());
  s.t_scale = *std::min_element(t.begin(), t.end());
  if (!(s.x_scale > 0) || !(s.t_scale > 0)) throw std::domain_error("sizes and times must be positive");
  for (std::size_t i : order) {
    s.x.push_back(x[i] / s.x_scale);
    s.t.push_back(t[i] / s.t_scale);
  }
  return s;
}

Line unscale(Line l, const Sorted& s)
{
  return {l.intercept * s.t_scale, l.slope * s.t_scale / s.x_scale};
}

LineCovariance covariance(const std::vector<double>& a, const std::vector<double>& b)
{
  LineCovariance c;
  const double n = static_cast<double>(a.size());
  if (a.size() < 2) return c;
  double ma = 0, mb = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    ma += a[i] / n, mb += b[i] / n;
  for (std::size_t i = 0; i < a.size(); ++i) {
    c.var_intercept += (a[i] - ma) * (a[i] - ma) / (n - 1);
    c.var_slope += (b[i] - mb) * (b[i] - mb) / (n - 1);
    c.cov += (a[i] - ma) * (b[i] - mb) / (n - 1);
  }
  return c;
}

} // namespace

Piecewise fit_piecewise(std::span<const double> x_in, std::span<const double> t_in, const PiecewiseOptions& opt)
{
  if (x_in.size() != t_in.size() || x_in.size() < 2) throw std::domain_error("a fit needs at least two points");
  Sorted s = sort_and_scale(x_in, t_in);
  const std::size_t n = s.x.size();

  // cost(i, j): weighted SSE of one line over points [i, j); +inf where the segment is not allowed
  // (too few points, a cut between equal sizes, a degenerate or rejected line). It is recomputed
  // per segment count instead of stored: O(n²) memory would bound the sweep length.
  const std::size_t min_pts = static_cast<std::size_t>(std::max(2, opt.min_points));
  auto can_cut = [&](std::size_t i) { return i == 0 || i == n || s.x[i] != s.x[i - 1]; };
  auto segment_cost = [&](const Moments& m) {
    try {
      const Line l = m.line();
      if (!opt.allow_negative_alpha && l.intercept < 0) return kInf;
      if (opt.growing && !(l.slope > 0)) return kInf;
      return m.sse();
    } catch (const std::domain_error&) {
      return kInf;
    }
  };

  // best[k][j]: least cost of k segments over [0, j); cut[k][j]: where the last one starts.
  const int kmax = std::max(1, std::min<int>(opt.max_segments, static_cast<int>(n / min_pts)));
  std::vector<std::vector<double>> best(kmax + 1, std::vector<double>(n + 1, kInf));
  std::vector<std::vector<std::size_t>> cut(kmax + 1, std::vector<std::size_t>(n + 1, 0));
  best[0][0] = 0;
  for (int k = 1; k <= kmax; ++k)
    for (std::size_t j = min_pts; j <= n; ++j) {
      if (!can_cut(j)) continue;
      Moments m;
      for (std::size_t i = j; i-- > 0;) {
        m.add(s.x[i], s.t[i]);
        if (j - i < min_pts || !can_cut(i) || !(best[k - 1][i] < kInf)) continue;
        double c = best[k - 1][i] + segment_cost(m);
        if (c < best[k][j]) {
          best[k][j] = c;
          cut[k][j] = i;
        }
      }
    }

  // BIC on the relative residuals: n ln(SSE/n) + p ln(n), p = 2 per line + 1 per breakpoint.
  int chosen = 0;
  double chosen_bic = kInf;
  for (int k = 1; k <= kmax; ++k) {
    if (!(best[k][n] < kInf)) continue;
    double sse = std::max(best[k][n], static_cast<double>(n) * opt.noise_floor * opt.noise_floor);
    double bic = static_cast<double>(n) * std::log(sse / static_cast<double>(n)) +
                 (3.0 * k - 1.0) * std::log(static_cast<double>(n));
    if (bic < chosen_bic) {
      chosen_bic = bic;
      chosen = k;
    }
  }
  if (chosen == 0)
    throw std::domain_error("too few distinct sizes for a fit (at least " + std::to_string(min_pts) + " needed)");

  std::vector<std::size_t> starts;
  for (std::size_t k = static_cast<std::size_t>(chosen), j = n; k > 0; --k) {
    starts.push_back(cut[k][j]);
    j = cut[k][j];
  }
  std::reverse(starts.begin(), starts.end());
  starts.push_back(n);

  // The cuts come from least squares (its segment costs add up, which the search needs); each
  // segment's line is then the least absolute relative error line, the error MAPE scores.
  Piecewise pw;
  std::vector<std::size_t> seg_of(n);
  auto line_of = [&](std::size_t from, std::size_t to, std::size_t skip) {
    std::vector<double> xs, ts;
    for (std::size_t i = from; i < to; ++i)
      if (i != skip) xs.push_back(s.x[i]), ts.push_back(s.t[i]);
    const Line ls = fit_line(xs, ts);
    if (!opt.least_absolute) return ls;
    // The least-squares line met the segment's constraints when the cuts were chosen; a robust
    // line that breaks them (flat, or starting below zero, on quantised timings) gives way to it.
    const Line lad = fit_line_lad(xs, ts);
    const bool ok = (!opt.growing || lad.slope > 0) && (opt.allow_negative_alpha || lad.intercept >= 0);
    return ok ? lad : ls;
  };
  for (std::size_t k = 0; k + 1 < starts.size(); ++k) {
    pw.lines.push_back(unscale(line_of(starts[k], starts[k + 1], n), s));
    pw.counts.push_back(starts[k + 1] - starts[k]);
    for (std::size_t i = starts[k]; i < starts[k + 1]; ++i)
      seg_of[i] = k;
    if (k > 0) // geometric midpoint: sizes are swept on a log scale
      pw.breakpoints.push_back(std::sqrt(s.x[starts[k] - 1] * s.x[starts[k]]) * s.x_scale);
  }

  std::vector<double> t_orig(n);
  for (std::size_t i = 0; i < n; ++i)
    t_orig[i] = s.t[i] * s.t_scale;
  auto predict = [&](std::size_t i) { return pw.lines[seg_of[i]](s.x[i] * s.x_scale); };
  auto loo = [&](std::size_t i) {
    const std::size_t k = seg_of[i];
    try {
      return unscale(line_of(starts[k], starts[k + 1], i), s)(s.x[i] * s.x_scale);
    } catch (const std::domain_error&) {
      return predict(i); // a two-point segment has no fit without the point: count its in-sample error
    }
  };
  pw.quality = quality(t_orig, predict, loo);

  // Parameter spread per segment. Bootstrap: resample the segment's points and refit. Analytic:
  // the weighted least-squares covariance with the residual variance of the fitted line.
  std::mt19937_64 rng(0x5eed);
  for (std::size_t k = 0; k + 1 < starts.size(); ++k) {
    const std::size_t from = starts[k], m = starts[k + 1] - starts[k];
    std::vector<double> as, bs;
    std::vector<double> xs(m), ts(m);
    for (int b = 0; b < 200; ++b) {
      for (std::size_t i = 0; i < m; ++i) {
        const std::size_t j = from + rng() % m;
        xs[i] = s.x[j], ts[i] = s.t[j];
      }
      try {
        const Line ls = fit_line(xs, ts);
        Line l = ls;
        if (opt.least_absolute) {
          const Line lad = fit_line_lad(xs, ts);
          if ((!opt.growing || lad.slope > 0) && (opt.allow_negative_alpha || lad.intercept >= 0)) l = lad;
        }
        const Line u = unscale(l, s);
        as.push_back(u.intercept), bs.push_back(u.slope);
      } catch (const std::domain_error&) {
        // a resample with one distinct size fixes no line: skip it
      }
    }
    pw.bootstrap.push_back(covariance(as, bs));
    Moments mo;
    double r2 = 0;
    const Line l = pw.lines[k];
    for (std::size_t i = from; i < from + m; ++i) {
      mo.add(s.x[i] * s.x_scale, t_orig[i]);
      const double r = (l(s.x[i] * s.x_scale) - t_orig[i]) / t_orig[i];
      r2 += r * r;
    }
    pw.analytic.push_back(mo.covariance(m > 2 ? r2 / static_cast<double>(m - 2) : 0.0));
  }
  return pw;
}

} // namespace xattn::calibrate
