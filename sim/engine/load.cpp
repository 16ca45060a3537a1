#include "sim/engine/load.hpp"

#include "sim/core/check.hpp"

#include <algorithm>
#include <cmath>

namespace xattn::sim::engine
{

void TimeCounts::add(double t, double weight)
{
  XATTN_CHECK(t >= 0 && std::isfinite(t), "an event's time is finite and not negative");
  while (t >= width_ * static_cast<double>(kBins)) {
    for (std::size_t i = 0; i < kBins / 2; ++i)
      bins_[i] = bins_[2 * i] + bins_[2 * i + 1];
    std::fill(bins_.begin() + kBins / 2, bins_.end(), 0.0);
    width_ *= 2;
  }
  bins_[static_cast<std::size_t>(t / width_)] += weight;
  total_ += weight;
}

double TimeCounts::upto(double t) const
{
  if (t < 0) return 0;
  const double pos = t / width_;
  if (pos >= static_cast<double>(kBins)) return total_;
  const auto bin = static_cast<std::size_t>(pos);
  double sum = 0;
  for (std::size_t i = 0; i < bin; ++i)
    sum += bins_[i];
  return sum + bins_[bin] * (pos - static_cast<double>(bin));
}

void LoadRecorder::arrival(double t, double tokens)
{
  if (first_ < 0) first_ = t;
  last_ = std::max(last_, t);
  offered_.add(t, tokens);
  arrivals_.add(t);
}

LoadFigures LoadRecorder::figures(double tolerance, std::uint64_t gpus) const
{
  LoadFigures f;
  f.gpus = gpus;
  if (!(last_ > first_)) return f;
  f.window_s = last_ - first_;
  // The last arrival's own events count (upto(last_) may cut its bin): the totals offered are exact.
  const double offered = offered_.total(), arrived = arrivals_.total();
  const double decoded = tokens_.upto(last_), finished = finishes_.upto(last_);
  f.offered_tokens_per_s = offered / f.window_s;
  f.delivered_tokens_per_s = (decoded - tokens_.upto(first_)) / f.window_s;
  f.offered_requests_per_s = arrived / f.window_s;
  f.delivered_requests_per_s = (finished - finishes_.upto(first_)) / f.window_s;
  const double mid = first_ + f.window_s / 2, half = f.window_s / 2;
  f.steady_offered_tokens_per_s = (offered - offered_.upto(mid)) / half;
  f.steady_delivered_tokens_per_s = (decoded - tokens_.upto(mid)) / half;
  f.backlog_requests = std::max(0.0, arrived - finished);
  f.backlog_tokens = std::max(0.0, offered - decoded);
  f.overloaded = f.steady_delivered_tokens_per_s < (1 - tolerance) * f.steady_offered_tokens_per_s;
  return f;
}

} // namespace xattn::sim::engine
