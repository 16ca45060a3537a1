// Confidence: intervals and decision stability from the default profile's uncertainty, and the
// fitted uncertainty's coverage on measurements made from a known curve plus known noise.
#include "sim/model/confidence.hpp"

#include "calibrate/fitter.hpp"
#include "calibrate/uncertainty.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/model/pricing.hpp"
#include "workloads/rng.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>

using namespace xattn;
using namespace xattn::sim;
namespace fs = std::filesystem;

namespace
{

PredictRequest decode_call(double reuse)
{
  PredictRequest r;
  r.mq = 256, r.ct = 4096, r.reuse = reuse, r.fabric = core::FabricClass::kIbSpine;
  return r;
}

// Measurements of t = 10 us + s / 20 GB/s at `n` sizes from 4 KiB to 64 MiB, each with a
// relative normal error of 2%, fitted with one line; the profile written and read back.
calibrate::Profile fitted(int n, workloads::Rng& rng, const std::string& tag)
{
  calibrate::Measurements m;
  m.file = tag + ".csv";
  calibrate::Series s;
  s.name = "known/ib-spine";
  s.measured = calibrate::Measured::kTransfer;
  s.fabric = core::FabricClass::kIbSpine;
  s.transport = core::Transport::kGpu;
  s.features = {"bytes"};
  for (int i = 0; i < n; ++i) {
    const double size = 4096.0 * std::pow(16384.0, i / static_cast<double>(n - 1));
    s.points.push_back({{size}, (10e-6 + size / 20e9) * (1 + 0.02 * rng.normal()), i + 1});
  }
  m.series.push_back(s);
  calibrate::FitOptions opt;
  opt.piecewise.max_segments = 1;
  const fs::path out = fs::temp_directory_path() / ("xattn_confidence_" + tag + ".yaml");
  core::write_file_atomically(
      out, calibrate::render_profile(calibrate::fit_measurements(m, opt), {tag, "h100-ndr200-ibgda", "known curve"}));
  return calibrate::load_profile(out.string());
}

// The transfer of `size` bytes on the fitted fabric's nominal path: probe + size / rate.
double transfer_time(const calibrate::Profile& p, double size)
{
  const PathCost path = nominal_path(p, core::FabricClass::kIbSpine);
  return (probe(p, path.fabric, core::Transport::kGpu, Bytes(size)) + Bytes(size) / flow(p, path, Bytes(size), 32).rate)
      .value();
}

double relative_spread(const calibrate::Profile& p, const std::string& key)
{
  for (const auto& u : p.uncertainty)
    if (u.key == key) return u.relative;
  return -1;
}

} // namespace

TEST_CASE("confidence: the paper prototype gives an interval per cost and a stable decision far from break-even")
{
  const ModelSpec m = load_model("deepseek-v3");
  const calibrate::Profile p = calibrate::load_profile("paper-prototype");
  const Prediction point = predict(m, p, decode_call(0));
  const PredictionSpread far = predict_spread(m, p, decode_call(0), std::nullopt);
  REQUIRE(far.draws == 2000);
  for (std::size_t k = 0; k < 3; ++k) {
    const Quantiles& q = far.terms[k].at("total");
    CHECK(q.p5 < q.p50);
    CHECK(q.p50 < q.p95);
  }
  // The medians sit on the point prediction (draws are median-preserving per value).
  CHECK(far.terms[0].at("total").p50 == Approx(point.route.total().value()).epsilon(0.05));
  CHECK(far.terms[1].at("total").p50 == Approx(point.fetch.total().value()).epsilon(0.05));
  // At no reuse route is ~66x faster than fetch: no draw flips it.
  CHECK(far.stability == 1.0);
  // Reuse 80 sits next to the break-even (80.25): a good share of draws decide fetch.
  const PredictionSpread near = predict_spread(m, p, decode_call(80), std::nullopt);
  CHECK(near.stability < 0.9);
  CHECK(near.stability > 0.1);
  CHECK(near.break_even.p5 < 80.25);
  CHECK(near.break_even.p95 > 80.25);
  // The JSON keys.
  nlohmann::json j = to_json(predict(m, p, decode_call(80)), m, p);
  add_spread(j, near);
  CHECK(j["interval"]["cost_s"]["route"]["p95"].get<double>() > j["interval"]["cost_s"]["route"]["p5"].get<double>());
  CHECK(j["interval"]["breakdown_s"]["fetch"]["splice"]["p50"].get<double>() > 0);
  CHECK(j["stability"].get<double>() == near.stability);
}

TEST_CASE("confidence: a profile without uncertainties gives points, and says so")
{
  calibrate::Profile p = calibrate::load_profile("h100-ndr200-ibgda");
  p.uncertainty.clear();
  p.correlations.clear();
  const PredictionSpread s = predict_spread(load_model("deepseek-v3"), p, decode_call(0), std::nullopt);
  CHECK(s.draws == 0);
  nlohmann::json j;
  add_spread(j, s);
  CHECK(j["interval"].is_null());
  CHECK(j["note"].get<std::string>().find("points only") != std::string::npos);
}

TEST_CASE("confidence: the fitted 90% interval covers the true curve in 85-95% of repetitions")
{
  workloads::Rng rng(2026);
  const double size = 1 << 20, truth = 10e-6 + size / 20e9;
  int covered = 0;
  const int reps = 200;
  for (int rep = 0; rep < reps; ++rep) {
    const calibrate::Profile p = fitted(24, rng, "coverage");
    calibrate::ProfileSampler sampler(p);
    std::vector<double> z(sampler.dimensions()), t;
    workloads::Rng draws(static_cast<std::uint64_t>(rep) + 1);
    for (int d = 0; d < 400; ++d) {
      for (double& x : z)
        x = draws.normal();
      t.push_back(transfer_time(sampler.draw(z), size));
    }
    const Quantiles q = quantiles(t);
    covered += q.p5 <= truth && truth <= q.p95;
  }
  INFO(covered << " of " << reps << " intervals cover the truth");
  CHECK(covered >= 0.85 * reps);
  CHECK(covered <= 0.95 * reps);
}

TEST_CASE("confidence: intervals shrink as the measurements grow")
{
  workloads::Rng rng(7);
  double few = 0, many = 0;
  for (int rep = 0; rep < 5; ++rep) {
    few += relative_spread(fitted(10, rng, "few"), "fabrics.ib-spine.bandwidth");
    many += relative_spread(fitted(160, rng, "many"), "fabrics.ib-spine.bandwidth");
  }
  CHECK(few > 0);
  // Sixteen times the points: about a quarter of the spread.
  CHECK(many < 0.5 * few);
}
