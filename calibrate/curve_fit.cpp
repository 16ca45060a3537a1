#include "calibrate/curve_fit.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace xattn::calibrate
{
namespace
{

// One equality on the unknowns (a_0, b_0, a_1, b_1, ...): Σ coeff · θ = rhs.
struct Constraint {
  std::vector<std::pair<Eigen::Index, double>> terms;
  double rhs = 0;
};

// The equality-constrained weighted least-squares solution, weights w (per point).
Eigen::VectorXd solve(std::span<const double> x, std::span<const double> t, const std::vector<std::size_t>& seg,
                      const std::vector<double>& w, std::size_t segments, const std::vector<Constraint>& cons)
{
  const Eigen::Index n = static_cast<Eigen::Index>(2 * segments), m = static_cast<Eigen::Index>(cons.size());
  Eigen::MatrixXd kkt = Eigen::MatrixXd::Zero(n + m, n + m);
  Eigen::VectorXd rhs = Eigen::VectorXd::Zero(n + m);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const Eigen::Index a = static_cast<Eigen::Index>(2 * seg[i]), b = a + 1;
    kkt(a, a) += w[i], kkt(a, b) += w[i] * x[i], kkt(b, b) += w[i] * x[i] * x[i];
    rhs(a) += w[i] * t[i], rhs(b) += w[i] * x[i] * t[i];
  }
  for (Eigen::Index k = 0; k < n; k += 2)
    kkt(k + 1, k) = kkt(k, k + 1);
  for (Eigen::Index c = 0; c < m; ++c) {
    for (const auto& [j, v] : cons[static_cast<std::size_t>(c)].terms)
      kkt(n + c, j) = kkt(j, n + c) = v;
    rhs(n + c) = cons[static_cast<std::size_t>(c)].rhs;
  }
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(kkt);
  if (qr.rank() < n + m) throw std::domain_error("a segment's sizes cannot fix its line");
  return qr.solve(rhs).head(n);
}

} // namespace

double least_slope(std::span<const double> x, std::span<const double> t, std::size_t from, std::size_t to,
                   double noise_floor)
{
  return noise_floor * t[to - 1] / (x[to - 1] - x[from]);
}

SegmentFit fit_segments(std::span<const double> x, std::span<const double> t, std::span<const std::size_t> starts,
                        const SegmentFitOptions& opt)
{
  const std::size_t segments = starts.size() - 1, n = x.size();
  std::vector<std::size_t> seg(n);
  for (std::size_t k = 0; k < segments; ++k) {
    if (!(x[starts[k + 1] - 1] > x[starts[k]])) throw std::domain_error("a segment needs two distinct sizes");
    for (std::size_t i = starts[k]; i < starts[k + 1]; ++i)
      seg[i] = k;
  }
  const auto a_of = [](std::size_t k) { return static_cast<Eigen::Index>(2 * k); };
  std::vector<Constraint> cons;
  std::vector<bool> flat(segments, false), zero(segments, false);
  SegmentFit out;
  Eigen::VectorXd theta;
  for (std::size_t round = 0; round <= 2 * segments; ++round) {
    // Iteratively reweighted least squares: w = 1 / (t² |r|) at the fixed point minimises Σ |r|
    // (r relative); the residual floor keeps an exactly fitted point from taking all the weight.
    std::vector<double> w(n);
    for (std::size_t i = 0; i < n; ++i)
      w[i] = 1 / (t[i] * t[i]);
    theta = solve(x, t, seg, w, segments, cons);
    for (int it = 0; opt.least_absolute && it < 100; ++it) {
      for (std::size_t i = 0; i < n; ++i) {
        const double r = std::abs(theta(a_of(seg[i])) + theta(a_of(seg[i]) + 1) * x[i] - t[i]) / t[i];
        w[i] = 1 / (t[i] * t[i] * std::max(r, 1e-7));
      }
      const Eigen::VectorXd next = solve(x, t, seg, w, segments, cons);
      const bool settled = (next - theta).cwiseAbs().maxCoeff() <= 1e-12 * (theta.cwiseAbs().maxCoeff() + 1e-300);
      theta = next;
      if (settled) break;
    }
    // Activate what the solution breaks.
    const std::size_t before = cons.size();
    for (std::size_t k = 0; opt.growing && k < segments; ++k) {
      const double least = least_slope(x, t, starts[k], starts[k + 1], opt.noise_floor);
      if (!flat[k] && theta(a_of(k) + 1) < least * (1 - 1e-9)) {
        flat[k] = true;
        cons.push_back({{{a_of(k) + 1, 1.0}}, least});
      }
    }
    for (std::size_t k = 0; opt.nonnegative && k < segments; ++k)
      if (!zero[k] && theta(a_of(k)) < 0) {
        zero[k] = true;
        cons.push_back({{{a_of(k), 1.0}}, 0.0});
      }
    if (cons.size() == before) break;
  }
  for (std::size_t k = 0; k < segments; ++k) {
    // A held constraint holds exactly, not to the solver's rounding (a latency of -1e-21 s is refused).
    out.lines.push_back({zero[k] ? 0.0 : theta(a_of(k)),
                         flat[k] ? least_slope(x, t, starts[k], starts[k + 1], opt.noise_floor) : theta(a_of(k) + 1)});
    if (flat[k]) out.flat.push_back(k);
  }
  return out;
}

} // namespace xattn::calibrate
