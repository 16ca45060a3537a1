#include "calibrate/fit.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace xattn::calibrate
{

void Moments::add(double x, double t, double sign)
{
  double w = sign / (t * t);
  n_ += sign;
  w_ += w;
  wx_ += w * x;
  wxx_ += w * x * x;
  wt_ += w * t;
  wxt_ += w * x * t;
}

Line Moments::line() const
{
  // Normal equations of min Σ w (t - a - b x)²; the determinant is w² · weighted variance of x.
  double det = w_ * wxx_ - wx_ * wx_;
  if (n_ < 2 || !(det > 1e-12 * w_ * wxx_)) throw std::domain_error("a line needs at least two distinct x values");
  double b = (w_ * wxt_ - wx_ * wt_) / det;
  double a = (wt_ - b * wx_) / w_;
  return {a, b};
}

LineCovariance Moments::covariance(double sigma2) const
{
  const double det = w_ * wxx_ - wx_ * wx_;
  if (n_ < 2 || !(det > 1e-12 * w_ * wxx_)) return {};
  return {sigma2 * wxx_ / det, sigma2 * w_ / det, -sigma2 * wx_ / det};
}

double Moments::sse() const
{
  // Σ w t² = n because w = 1/t²; the LS residual is Σ w t² - a Σ w t - b Σ w x t.
  Line l = line();
  return std::max(0.0, n_ - l.intercept * wt_ - l.slope * wxt_);
}

Line fit_line(std::span<const double> x, std::span<const double> t)
{
  // Two passes: centre x on its weighted mean first, so sizes spanning 1 KiB to 256 MiB do not
  // lose digits in Σ w x².
  double w = 0, wx = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    w += 1 / (t[i] * t[i]);
    wx += x[i] / (t[i] * t[i]);
  }
  double xm = wx / w;
  Moments m;
  for (std::size_t i = 0; i < x.size(); ++i)
    m.add(x[i] - xm, t[i]);
  Line l = m.line();
  return {l.intercept - l.slope * xm, l.slope};
}

Line fit_line_lad(std::span<const double> x, std::span<const double> t)
{
  Line l = fit_line(x, t);
  for (int it = 0; it < 100; ++it) {
    // Weighted least squares with w = 1 / (t² |r|): at the fixed point it minimises Σ |r|. The
    // residual floor keeps an exactly fitted point from taking all the weight.
    double w = 0, wx = 0;
    std::vector<double> v(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double r = std::abs(l(x[i]) - t[i]) / t[i];
      v[i] = 1 / (t[i] * t[i] * std::max(r, 1e-7));
      w += v[i];
      wx += v[i] * x[i];
    }
    const double xm = wx / w; // centred, as in fit_line
    double sx = 0, sxx = 0, st = 0, sxt = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double d = x[i] - xm;
      sx += v[i] * d, sxx += v[i] * d * d, st += v[i] * t[i], sxt += v[i] * d * t[i];
    }
    const double det = w * sxx - sx * sx;
    if (!(det > 1e-12 * w * sxx)) break; // the weights left one distinct x: keep the last line
    const double b = (w * sxt - sx * st) / det;
    const Line next{(st - b * sx) / w - b * xm, b};
    const bool settled = std::abs(next.slope - l.slope) <= 1e-12 * std::abs(l.slope) + 1e-300 &&
                         std::abs(next.intercept - l.intercept) <= 1e-12 * std::abs(l.intercept) + 1e-300;
    l = next;
    if (settled) break;
  }
  return l;
}

Errors relative_errors(std::span<const double> t, std::span<const double> predicted)
{
  Errors e;
  for (std::size_t i = 0; i < t.size(); ++i) {
    double r = std::abs(predicted[i] - t[i]) / t[i];
    e.mape += r;
    e.max_error = std::max(e.max_error, r);
  }
  if (!t.empty()) e.mape /= static_cast<double>(t.size());
  return e;
}

Quality quality(std::span<const double> t, const std::function<double(std::size_t)>& predict,
                const std::function<double(std::size_t)>& loo)
{
  Quality q;
  q.points = t.size();
  if (t.empty()) return q;
  std::vector<double> pred(t.size()), held(t.size());
  for (std::size_t i = 0; i < t.size(); ++i) {
    pred[i] = predict(i);
    held[i] = loo(i);
  }
  Errors in = relative_errors(t, pred), out = relative_errors(t, held);
  q.mape = in.mape;
  q.max_error = in.max_error;
  q.loo_mape = out.mape;
  // Weighted R²: 1 - Σ w r² / Σ w (t - t̄_w)², w = 1/t², the metric the fit minimises.
  double w = 0, wt = 0;
  for (double ti : t) {
    w += 1 / (ti * ti);
    wt += 1 / ti;
  }
  double mean = wt / w, ss_tot = 0, ss_res = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    ss_tot += (t[i] - mean) * (t[i] - mean) / (t[i] * t[i]);
    ss_res += (t[i] - pred[i]) * (t[i] - pred[i]) / (t[i] * t[i]);
  }
  q.r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : 1.0;
  return q;
}

std::vector<double> fit_linear_model(const std::vector<std::vector<double>>& features, std::span<const double> t)
{
  if (features.empty()) throw std::domain_error("no points to fit");
  const Eigen::Index n = static_cast<Eigen::Index>(features.size());
  const Eigen::Index k = static_cast<Eigen::Index>(features[0].size());
  if (n < k) throw std::domain_error("fewer points than coefficients");
  // Weighted rows: divide each equation by t, then ordinary least squares on relative error.
  Eigen::MatrixXd a(n, k);
  Eigen::VectorXd b(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    for (Eigen::Index j = 0; j < k; ++j)
      a(i, j) = features[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] / t[static_cast<std::size_t>(i)];
    b(i) = 1.0;
  }
  // Scale columns so features of very different magnitude (tokens vs tokens × rows) condition well.
  Eigen::VectorXd scale = a.colwise().norm().transpose();
  for (Eigen::Index j = 0; j < k; ++j) {
    if (!(scale(j) > 0)) throw std::domain_error("a feature is zero at every point");
    a.col(j) /= scale(j);
  }
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(a);
  if (qr.rank() < k) throw std::domain_error("the features do not vary independently: the model cannot be identified");
  Eigen::VectorXd c = qr.solve(b);
  std::vector<double> out(static_cast<std::size_t>(k));
  for (Eigen::Index j = 0; j < k; ++j)
    out[static_cast<std::size_t>(j)] = c(j) / scale(j);
  return out;
}

} // namespace xattn::calibrate
