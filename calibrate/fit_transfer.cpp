// The transfer part of the fitter: one monotone piecewise fit per series, and one rule for which
// profile keys it sets, whatever importer produced the series.
#include "calibrate/fitter.hpp"

#include <algorithm>
#include <cmath>

namespace xattn::calibrate
{
namespace
{

std::string fabric_key(core::FabricClass f, const std::string& leaf)
{
  return "fabrics." + std::string(core::to_string(f)) + "." + leaf;
}

bool is_ib(core::FabricClass f)
{
  return f == core::FabricClass::kIbSameLeaf || f == core::FabricClass::kIbSpine;
}

// The spread of the probe (the first segment's intercept) and of the rate (the last segment's
// slope: a rate's relative spread is its slope's), for the keys the fit set.
void set_spread(FittedSeries& f, const std::string& probe, const std::string& rate)
{
  const Piecewise& pw = *f.line;
  auto sets = [&f](const std::string& key) {
    return std::any_of(f.sets.begin(), f.sets.end(), [&key](const auto& kv) { return kv.first == key; });
  };
  const Line first = pw.lines.front(), last = pw.lines.back();
  for (const auto* cov : {&pw.bootstrap, &pw.analytic}) {
    auto& out = cov == &pw.bootstrap ? f.uncertainty : f.spread_check;
    if (!probe.empty() && sets(probe) && cov->front().var_intercept > 0)
      out.push_back({probe, std::sqrt(cov->front().var_intercept) / first.intercept,
                     "fit: bootstrap of " + std::to_string(pw.counts.front()) + " points"});
    if (sets(rate) && cov->back().var_slope > 0)
      out.push_back({rate, std::sqrt(cov->back().var_slope) / last.slope,
                     "fit: bootstrap of " + std::to_string(pw.counts.back()) + " points"});
  }
  // One segment: the probe and the rate come from one line, and a larger intercept goes with a
  // smaller slope (a larger rate).
  const LineCovariance& c = pw.bootstrap.front();
  if (pw.lines.size() == 1 && f.uncertainty.size() == 2 && c.var_intercept > 0 && c.var_slope > 0)
    f.correlations.push_back({probe, rate, -c.cov / std::sqrt(c.var_intercept * c.var_slope)});
}

// Every segment, as the fabric's transfer curve: its latencies read relative to the first one's
// (the probe), its rates what a bulk message of that size achieved.
void set_curve(FittedSeries& f, core::FabricClass fabric)
{
  const Piecewise& pw = *f.line;
  f.curve.clear();
  for (std::size_t k = 0; k < pw.lines.size(); ++k) {
    // Whole bytes, as the profile writes them; the first segment starts at 0 B.
    const double from = k == 0 ? 0.0 : std::round(pw.breakpoints[k - 1]);
    f.curve.push_back({Bytes(from), Seconds(pw.lines[k].intercept), BytesPerSec(1 / pw.lines[k].slope)});
  }
  f.curve_key = fabric_key(fabric, "transfer");
  f.sets.emplace_back(f.curve_key, std::to_string(f.curve.size()) + " segment(s)");
}

} // namespace

void fit_transfer(FittedSeries& f, const Series& s, const PiecewiseOptions& opt)
{
  const bool transfer = s.measured == Measured::kTransfer;
  PiecewiseOptions pw = opt;
  // A transfer's pieces are latency + size / rate, both positive, and its time does not fall with
  // its size: the curve is fitted as one that grows, whatever the table does.
  pw.growing = transfer;
  pw.monotone = transfer;
  pw.allow_negative_alpha = pw.allow_negative_alpha && !transfer;
  std::vector<double> x, t;
  for (const Point& p : s.points)
    x.push_back(p.x.at(0)), t.push_back(p.t_s);
  f.line = fit_piecewise(x, t, pw);
  f.model = "piecewise alpha-beta, " + std::to_string(f.line->lines.size()) + " segment(s)" +
            (transfer ? ", non-decreasing" : "");
  f.quality = f.line->quality;
  for (const std::string& a : f.line->adjustments)
    f.notes.push_back(a);
  if (!transfer || !s.fabric) return;

  const core::FabricClass fabric = *s.fabric;
  const double alpha = f.line->lines.front().intercept, rate = 1 / f.line->lines.back().slope;
  std::string probe;
  if (s.transport) {
    probe = fabric_key(fabric, *s.transport == core::Transport::kGpu ? "probe_gpu" : "probe_proxy");
    if (alpha > 0)
      f.sets.emplace_back(probe, seconds_text(alpha));
    else
      f.notes.push_back(probe + " not set: fitted latency " + seconds_text(alpha) + " at the smallest sizes");
  } else {
    f.notes.push_back("no probe latency set: the series does not say which transport issued it");
  }
  std::string rate_key;
  if (s.single_block) {
    // One thread block issues InfiniBand transfers whatever the path beyond the NIC: the profile
    // keeps one IB dispatch rate, and its spread is ib-spine's.
    rate_key = fabric_key(is_ib(fabric) ? core::FabricClass::kIbSpine : fabric, "block_rate");
    if (is_ib(fabric)) {
      for (core::FabricClass c : {core::FabricClass::kIbSameLeaf, core::FabricClass::kIbSpine})
        f.sets.emplace_back(fabric_key(c, "block_rate"), rate_text(rate));
    } else {
      f.sets.emplace_back(rate_key, rate_text(rate));
    }
  } else {
    rate_key = fabric_key(fabric, "bandwidth");
    f.sets.emplace_back(rate_key, rate_text(rate));
    // The measured machine's links: the measurements cannot tell its datasheet rate, so the bulk
    // rate stands for it (a base profile's nominal rate belongs to other hardware).
    f.sets.emplace_back(fabric_key(fabric, "nominal_bandwidth"), rate_text(rate));
    set_curve(f, fabric);
  }
  set_spread(f, probe, rate_key);
}

} // namespace xattn::calibrate
