#include "calibrate/piecewise.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>

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

std::string percent(double f)
{
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g%%", 100 * f);
  return buf;
}

} // namespace

namespace
{
// A fit in progress: the sorted, scaled points and the options, with the tests a segment's line
// must pass.
struct Fitting {
  const Sorted& s;
  const PiecewiseOptions& opt;
  std::size_t min_pts = 0;          ///< least points of a segment
  const std::size_t n = s.x.size(); ///< points

  bool can_cut(std::size_t i) const { return i == 0 || i == n || s.x[i] != s.x[i - 1]; }
  // A growing segment may be flat within the timer's resolution (quantised timings are): its line
  // must not fall by more than the noise floor across it.
  bool grows(const Line& l, std::size_t from, std::size_t to) const
  {
    return l.slope * (s.x[to - 1] - s.x[from]) > -opt.noise_floor * s.t[to - 1];
  }
  bool allowed(const Line& l, std::size_t from, std::size_t to) const
  {
    return (!opt.growing || grows(l, from, to)) && (opt.allow_negative_alpha || l.intercept >= 0);
  }
  double segment_cost(const Moments& m, double origin, std::size_t from, std::size_t to) const
  {
    try {
      const Line l = m.line();
      if (!opt.allow_negative_alpha && l.intercept - l.slope * origin < 0) return kInf;
      if (opt.growing && !grows(l, from, to)) return kInf;
      return m.sse();
    } catch (const std::domain_error&) {
      return kInf;
    }
  }
  /// One segment's own line, for leave-one-out and the bootstrap (the other segments and the
  /// constraints between them are not re-imposed).
  Line line_of(std::size_t from, std::size_t to, std::size_t skip) const
  {
    std::vector<double> xs, ts;
    for (std::size_t i = from; i < to; ++i)
      if (i != skip) xs.push_back(s.x[i]), ts.push_back(s.t[i]);
    const Line ls = fit_line(xs, ts);
    if (!opt.least_absolute) return ls;
    const Line lad = fit_line_lad(xs, ts);
    return allowed(lad, from, to) ? lad : ls;
  }
  /// Where the segments start, and n after the last: the least-squares segmentation that BIC
  /// chooses.
  std::vector<std::size_t> cuts() const;
  /// The curve of the segments' lines `fit` (unscaled), piece by piece, into `pw`.
  void curve(Piecewise& pw, const SegmentFit& fit, const std::vector<std::size_t>& starts,
             const std::vector<double>& breaks, const std::vector<double>& x_orig, const std::vector<double>& t_orig,
             const std::vector<LineCovariance>& boot, const std::vector<LineCovariance>& analytic) const;
  /// Each segment's parameter spread, by the bootstrap and by the analytic covariance.
  void spreads(const SegmentFit& fit, const std::vector<std::size_t>& starts, const std::vector<double>& x_orig,
               const std::vector<double>& t_orig, std::vector<LineCovariance>& boot,
               std::vector<LineCovariance>& analytic) const;
};

std::vector<std::size_t> Fitting::cuts() const
{
  // cost(i, j): weighted SSE of one line over points [i, j); +inf where the segment is not allowed
  // (too few points, a cut between equal sizes, a degenerate or rejected line). It is recomputed
  // per segment count instead of stored: O(n²) memory would bound the sweep length. The sums are
  // taken about the segment's last size: about 0 they lose the digits that tell a flat segment
  // from a falling one when its sizes are close together.
  // best[k][j]: least cost of k segments over [0, j); cut[k][j]: where the last one starts.
  const int kmax = std::max(1, std::min<int>(opt.max_segments, static_cast<int>(n / min_pts)));
  std::vector<std::vector<double>> best(kmax + 1, std::vector<double>(n + 1, kInf));
  std::vector<std::vector<std::size_t>> cut(kmax + 1, std::vector<std::size_t>(n + 1, 0));
  best[0][0] = 0;
  for (int k = 1; k <= kmax; ++k)
    for (std::size_t j = min_pts; j <= n; ++j) {
      if (!can_cut(j)) continue;
      Moments m;
      const double origin = s.x[j - 1];
      for (std::size_t i = j; i-- > 0;) {
        m.add(s.x[i] - origin, s.t[i]);
        if (j - i < min_pts || !can_cut(i) || !(best[k - 1][i] < kInf)) continue;
        double c = best[k - 1][i] + segment_cost(m, origin, i, j);
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
    throw std::domain_error(
        opt.growing ? "no segmentation into growing lines of at least " + std::to_string(min_pts) + " points each"
                    : "too few distinct sizes for a fit (at least " + std::to_string(min_pts) + " needed)");

  std::vector<std::size_t> starts;
  for (std::size_t k = static_cast<std::size_t>(chosen), j = n; k > 0; --k) {
    starts.push_back(cut[k][j]);
    j = cut[k][j];
  }
  std::reverse(starts.begin(), starts.end());
  starts.push_back(n);
  return starts;
}

void Fitting::spreads(const SegmentFit& fit, const std::vector<std::size_t>& starts, const std::vector<double>& x_orig,
                      const std::vector<double>& t_orig, std::vector<LineCovariance>& boot,
                      std::vector<LineCovariance>& analytic) const
{
  // Bootstrap: resample the segment's points and refit. Analytic: the weighted least-squares
  // covariance with the residual variance of the fitted line.
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
          if (allowed(lad, from, from + m)) l = lad;
        }
        const Line u = unscale(l, s);
        as.push_back(u.intercept), bs.push_back(u.slope);
      } catch (const std::domain_error&) {
        // a resample with one distinct size fixes no line: skip it
      }
    }
    boot.push_back(covariance(as, bs));
    Moments mo;
    double r2 = 0;
    const Line l = unscale(fit.lines[k], s);
    for (std::size_t i = from; i < from + m; ++i) {
      mo.add(x_orig[i], t_orig[i]);
      const double r = (l(x_orig[i]) - t_orig[i]) / t_orig[i];
      r2 += r * r;
    }
    analytic.push_back(mo.covariance(m > 2 ? r2 / static_cast<double>(m - 2) : 0.0));
  }
}

// Where the measured times fall between segment k - 1 (its line `prev`) and segment k (line `l`):
// the piece the curve takes instead of falling.
struct Hold {
  double from = 0, to = 0;
  Line line;
  double error = std::numeric_limits<double>::infinity();
  const char* how = "held level";
};

// The ways to keep the curve from falling there: hold the earlier segment's level from its last
// size until this segment's line catches up (the sizes after the fall priced high), hold this
// segment's starting level from where the earlier line reaches it (the sizes before the fall
// priced low), or bridge the two lines with a straight piece between two measured sizes. The one
// closest to the measured times of the two segments is kept. `since`: the previous piece's start;
// `end`: where segment k's own piece would end.
Hold best_hold(const PiecewiseOptions& opt, const std::vector<std::size_t>& starts, std::size_t k,
               const std::vector<double>& x_orig, const std::vector<double>& t_orig, const Line& prev, const Line& l,
               double since, double end)
{
  auto meet = [](const Line& a, const Line& b) { return (a.intercept - b.intercept) / (b.slope - a.slope); };
  const double last = x_orig[starts[k] - 1], first = x_orig[starts[k]];
  // The relative error, over the two segments' points, of the curve with `h` between them.
  auto scored = [&](Hold h) {
    h.error = 0;
    for (std::size_t i = starts[k - 1]; i < starts[k + 1]; ++i) {
      const double xi = x_orig[i];
      const double c = xi < h.from ? prev(xi) : xi < h.to ? h.line(xi) : l(xi);
      h.error += std::abs(c - t_orig[i]) / t_orig[i];
    }
    return h;
  };
  auto hold_from = [&](double from, double level) {
    const double slope = std::min(0.5 * l.slope, opt.noise_floor * level / from);
    const Line line{level - slope * from, slope};
    return scored({from, std::ceil(meet(line, l)), line});
  };
  const double up = std::max(std::floor(last) + 1, since + 1);
  Hold best = hold_from(up, prev(up));
  const double down = std::floor((l(first) - prev.intercept) / prev.slope); // where prev reaches l's start
  if (down > since && down < up) {
    const Hold h = hold_from(down, std::max(l(first), prev(down)));
    if (h.error < best.error) best = h;
  }
  // Or a bridge: a straight piece from the earlier line at one measured size to this line at a
  // later one (a sawtooth's mean trend, where the times fall again and again).
  for (std::size_t a = starts[k - 1]; a < starts[k]; ++a)
    for (std::size_t z = starts[k]; z < starts[k + 1]; ++z) {
      const double xa = x_orig[a], xz = x_orig[z];
      if (!(xa > since) || !(xz < end) || !(l(xz) > prev(xa))) continue;
      const double slope = (l(xz) - prev(xa)) / (xz - xa);
      const Hold h = scored({xa, xz, {prev(xa) - slope * xa, slope}, 0, "bridged"});
      if (h.error < best.error) best = h;
    }
  return best;
}
void Fitting::curve(Piecewise& pw, const SegmentFit& fit, const std::vector<std::size_t>& starts,
                    const std::vector<double>& breaks, const std::vector<double>& x_orig,
                    const std::vector<double>& t_orig, const std::vector<LineCovariance>& boot,
                    const std::vector<LineCovariance>& analytic) const
{
  const std::size_t segments = starts.size() - 1;
  // The curve, piece by piece. A segment starts at the midpoint between its first measured size
  // and the last one before it, unless the curve would fall there: then it starts where its line
  // meets the curve's in the unmeasured gap, or, where the measured times themselves fall (a
  // protocol switch), the curve holds a level or bridges the fall (best_hold). A larger message is
  // never priced faster than a smaller one, and every segment keeps its own line elsewhere.
  auto piece = [&](double from, const Line& line, const LineCovariance& b, const LineCovariance& c) {
    if (!pw.lines.empty()) pw.breakpoints.push_back(from);
    pw.lines.push_back(line);
    pw.bootstrap.push_back(b);
    pw.analytic.push_back(c);
  };
  auto meet = [](const Line& a, const Line& b) { return (a.intercept - b.intercept) / (b.slope - a.slope); };
  piece(0, unscale(fit.lines[0], s), boot[0], analytic[0]);
  for (std::size_t k = 1; k < segments; ++k) {
    const Line l = unscale(fit.lines[k], s), prev = pw.lines.back();
    // Transfers' pieces start at whole bytes (as the profile writes them), each after the one before.
    const double since = pw.breakpoints.empty() ? 0.0 : pw.breakpoints.back(); // the previous piece's start
    const double b = opt.monotone ? std::max(std::round(breaks[k - 1]), since + 1) : breaks[k - 1];
    const double last = x_orig[starts[k] - 1], first = x_orig[starts[k]];
    if (!opt.monotone || l(b) >= prev(b) * (1 - 1e-12)) {
      piece(b, l, boot[k], analytic[k]);
      continue;
    }
    if (l(first) >= prev(first) || (l(last) >= prev(last) && last > since)) { // they meet in the gap
      // Rounded to the side where the segment's line is the higher one.
      const double c = meet(prev, l);
      const double at = std::max(l.slope > prev.slope ? std::ceil(c) : std::floor(c), since + 1);
      piece(at, l, boot[k], analytic[k]);
      pw.adjustments.push_back("segment " + std::to_string(k + 1) + " starts at " + std::to_string(std::llround(at)) +
                               "B, where it meets the curve, not at the midpoint " + std::to_string(std::llround(b)) +
                               "B");
      continue;
    }
    // The measured times fall here.
    const double end = k + 1 < segments ? breaks[k] : std::numeric_limits<double>::infinity();
    const Hold best = best_hold(opt, starts, k, x_orig, t_orig, prev, l, since, end);
    Flattened f{b, best.from, std::min(best.to, end), 0, (prev(b) - l(b)) / prev(b), 0};
    for (std::size_t i = 0; i < n; ++i) // the points priced on the held or bridging piece
      if (x_orig[i] >= f.from_B && x_orig[i] < f.to_B) {
        ++f.points;
        f.max_change = std::max(f.max_change, std::abs(best.line(x_orig[i]) - t_orig[i]) / t_orig[i]);
      }
    pw.flattened.push_back(f);
    pw.adjustments.push_back(std::string(best.how) + " from " + std::to_string(std::llround(f.from_B)) + "B to " +
                             std::to_string(std::llround(f.to_B)) + "B: the measured times fall by " + percent(f.fell) +
                             " there");
    piece(best.from, best.line, {}, {});
    if (best.to < end) piece(best.to, l, boot[k], analytic[k]);
  }
}

} // namespace

Piecewise fit_piecewise(std::span<const double> x_in, std::span<const double> t_in, const PiecewiseOptions& opt)
{
  if (x_in.size() != t_in.size() || x_in.size() < 2) throw std::domain_error("a fit needs at least two points");
  Sorted s = sort_and_scale(x_in, t_in);
  const std::size_t n = s.x.size();
  // A sweep shorter than a segment's least points is one line through all of them (nvbandwidth
  // runs give a size or two).
  const Fitting fitting{s, opt,
                        std::max<std::size_t>(2, std::min<std::size_t>(static_cast<std::size_t>(opt.min_points), n))};
  const std::vector<std::size_t> starts = fitting.cuts();
  const std::size_t segments = starts.size() - 1;

  // The cuts come from least squares (its segment costs add up, which the search needs); the lines
  // are then fitted together in least absolute relative error, the error MAPE scores, under the
  // constraints of a transfer curve (curve_fit.hpp).
  Piecewise pw;
  std::vector<double> breaks; // between segments, unscaled; geometric midpoints: sizes are swept on a log scale
  for (std::size_t k = 1; k < segments; ++k)
    breaks.push_back(std::sqrt(s.x[starts[k] - 1] * s.x[starts[k]]) * s.x_scale);
  const SegmentFit fit =
      fit_segments(s.x, s.t, starts, {opt.least_absolute, opt.growing, !opt.allow_negative_alpha, opt.noise_floor});
  if (!fit.flat.empty()) {
    std::string which;
    for (std::size_t k : fit.flat)
      which += (which.empty() ? "" : ", ") + std::to_string(k + 1);
    pw.adjustments.push_back((fit.flat.size() == 1 ? "segment " : "segments ") + which + " flat within " +
                             percent(opt.noise_floor) +
                             ": each gets the rate that makes its time grow by that much "
                             "across it");
  }

  // Parameter spread per segment.
  std::vector<double> t_orig(n), x_orig(n);
  for (std::size_t i = 0; i < n; ++i)
    t_orig[i] = s.t[i] * s.t_scale, x_orig[i] = s.x[i] * s.x_scale;
  std::vector<LineCovariance> boot, analytic;
  fitting.spreads(fit, starts, x_orig, t_orig, boot, analytic);

  fitting.curve(pw, fit, starts, breaks, x_orig, t_orig, boot, analytic);
  for (std::size_t k = 0; k < pw.lines.size(); ++k) {
    const double lo = k == 0 ? 0.0 : pw.breakpoints[k - 1];
    const double hi = k + 1 < pw.lines.size() ? pw.breakpoints[k] : std::numeric_limits<double>::infinity();
    pw.counts.push_back(static_cast<std::size_t>(
        std::count_if(x_orig.begin(), x_orig.end(), [&](double xi) { return xi >= lo && xi < hi; })));
  }
  std::vector<std::size_t> seg_of(n);
  for (std::size_t k = 0; k < segments; ++k)
    for (std::size_t i = starts[k]; i < starts[k + 1]; ++i)
      seg_of[i] = k;
  auto predict = [&](std::size_t i) { return pw(x_orig[i]); };
  auto held = [&](double xi) {
    return std::any_of(pw.flattened.begin(), pw.flattened.end(),
                       [xi](const Flattened& f) { return xi >= f.from_B && xi < f.to_B; });
  };
  auto loo = [&](std::size_t i) {
    const std::size_t k = seg_of[i];
    if (held(x_orig[i])) return predict(i); // the level held there is not this point's to move
    try {
      return unscale(fitting.line_of(starts[k], starts[k + 1], i), s)(x_orig[i]);
    } catch (const std::domain_error&) {
      return predict(i); // a two-point segment has no fit without the point: count its in-sample error
    }
  };
  pw.quality = quality(t_orig, predict, loo);
  return pw;
}

} // namespace xattn::calibrate
