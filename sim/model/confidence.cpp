#include "sim/model/confidence.hpp"

#include "calibrate/uncertainty.hpp"
#include "workloads/rng.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace xattn::sim
{
namespace
{

nlohmann::json quantiles_json(const Quantiles& q)
{
  auto num = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  return {{"p5", num(q.p5)}, {"p50", num(q.p50)}, {"p95", num(q.p95)}};
}

constexpr std::array<const char*, 3> kPrimitives{"route", "fetch", "local"};

} // namespace

Quantiles quantiles(std::vector<double>& v)
{
  std::sort(v.begin(), v.end());
  auto at = [&v](double f) {
    const auto k = static_cast<std::size_t>(std::ceil(f * static_cast<double>(v.size()))) - 1;
    return v[std::min(k, v.size() - 1)];
  };
  return {at(0.05), at(0.50), at(0.95)};
}

PredictionSpread predict_spread(const ModelSpec& m, const Profile& p, const PredictRequest& r,
                                std::optional<PathCost> path, int draws, std::uint64_t seed)
{
  PredictionSpread out;
  calibrate::ProfileSampler sampler(p);
  if (sampler.dimensions() == 0 || draws <= 0) return out;
  const Prediction point = predict(m, p, r, path);
  workloads::Rng rng(seed);
  std::array<std::map<std::string, std::vector<double>>, 3> terms;
  std::vector<double> break_even, z(sampler.dimensions());
  std::array<int, 3> chosen{};
  for (int d = 0; d < draws; ++d) {
    for (double& x : z)
      x = rng.normal();
    const Profile q = sampler.draw(z);
    const Prediction pred = predict(m, q, r, path);
    const std::array<const Breakdown*, 3> b{&pred.route, &pred.fetch, &pred.local};
    for (std::size_t k = 0; k < 3; ++k) {
      for (const auto& [name, term] : kBreakdownTerms)
        terms[k][name].push_back((b[k]->*term).value());
      terms[k]["total"].push_back(b[k]->total().value());
    }
    break_even.push_back(pred.decision.break_even_reuse);
    ++chosen[static_cast<std::size_t>(pred.decision.choice)];
  }
  out.draws = draws;
  for (std::size_t k = 0; k < 3; ++k)
    for (auto& [name, v] : terms[k])
      out.terms[k][name] = quantiles(v);
  out.break_even = quantiles(break_even);
  for (std::size_t k = 0; k < 3; ++k)
    out.share[k] = static_cast<double>(chosen[k]) / draws;
  out.stability = out.share[static_cast<std::size_t>(point.decision.choice)];
  return out;
}

void add_spread(nlohmann::json& j, const PredictionSpread& s)
{
  if (s.draws == 0) {
    j["interval"] = nullptr;
    j["stability"] = nullptr;
    j["note"] = "the profile gives no uncertainties: points only";
    return;
  }
  nlohmann::json cost = nlohmann::json::object(), breakdown = nlohmann::json::object();
  for (std::size_t k = 0; k < 3; ++k) {
    cost[kPrimitives[k]] = quantiles_json(s.terms[k].at("total"));
    for (const auto& [name, q] : s.terms[k])
      if (name != "total") breakdown[kPrimitives[k]][name] = quantiles_json(q);
  }
  j["interval"] = {{"draws", s.draws},
                   {"cost_s", cost},
                   {"breakdown_s", breakdown},
                   {"break_even_reuse", quantiles_json(s.break_even)}};
  j["stability"] = s.stability;
  j["decision_share"] = {{"route", s.share[0]}, {"fetch", s.share[1]}, {"local", s.share[2]}};
}

std::string spread_table(const PredictionSpread& s, const Prediction& p)
{
  if (s.draws == 0) return "intervals: none (the profile gives no uncertainties: points only)\n";
  auto range = [](const Quantiles& q) {
    return fmt::format("[{}, {}]", core::format_seconds(core::Seconds(q.p5)),
                       core::format_seconds(core::Seconds(q.p95)));
  };
  std::string out =
      fmt::format("90% intervals over {} profile draws: route {}, fetch {}, local {}\n", s.draws,
                  range(s.terms[0].at("total")), range(s.terms[1].at("total")), range(s.terms[2].at("total")));
  auto be = [](double v) { return std::isfinite(v) ? fmt::format("{:.1f}", v) : std::string("never"); };
  out += fmt::format("break-even reuse [{}, {}]; decision {} holds in {:.1f}% of draws (stability {:.3f})\n",
                     be(s.break_even.p5), be(s.break_even.p95), to_string(p.decision.choice), 100 * s.stability,
                     s.stability);
  return out;
}

} // namespace xattn::sim
