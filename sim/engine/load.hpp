// Offered against delivered load over a run's arrival window, the figures that say whether a
// policy keeps up. A finite run always drains in the end, so its latencies alone cannot tell a
// queue that grows for as long as requests arrive from one that stays put: the mean of a growing
// queue's latency grows with the run's length and is no figure of the policy.
//
// The arrival window runs from the first arrival to the last. Over its second half (the first is
// the warm-up of an empty cluster), a policy that keeps up delivers the output tokens offered in
// that half, give or take its noise; one that does not falls short by the growth of its backlog:
//
//   backlog(last) - backlog(mid) = offered(mid, last] - delivered(mid, last]
//
// so a shortfall over `engine.overload_tolerance` of the half's offered tokens marks the policy
// overloaded. Worked example: arrivals every 10 ms of 10 tokens each over 10 s offer 1,000
// tokens/s; a requester that decodes 600 tokens/s delivers 3,000 of the 5,000 offered in the
// second half (60%) and is overloaded; one that decodes 2,000 tokens/s delivers them all.
#pragma once

#include <cstdint>
#include <vector>

namespace xattn::sim::engine
{

/// Weights of events over simulated time in at most kBins equal bins from t = 0, the bins merged
/// in pairs (their width doubled) whenever an event falls past the last: constant memory, and the
/// weight up to any time exact to within one bin (1/kBins of the time spanned).
class TimeCounts
{
public:
  static constexpr std::size_t kBins = 4096;

  /// REQUIRES: t >= 0, seconds.
  void add(double t, double weight = 1);
  /// The weight of the events at or before `t`, s, interpolated linearly inside t's bin.
  double upto(double t) const;
  double total() const { return total_; }

private:
  double width_ = 1e-6; ///< s per bin
  std::vector<double> bins_ = std::vector<double>(kBins, 0.0);
  double total_ = 0;
};

/// The load figures of one policy's run (summary.json, "load").
struct LoadFigures {
  double window_s = 0;    ///< first arrival to last; 0: every request arrived at once (no figures)
  std::uint64_t gpus = 0; ///< the GPUs the run uses, requesters and holders (per-GPU figures divide by it)
  double offered_tokens_per_s = 0, delivered_tokens_per_s = 0;     ///< over the whole window
  double offered_requests_per_s = 0, delivered_requests_per_s = 0; ///< over the whole window
  /// Over the window's second half: output tokens offered (by the requests arriving in it) and
  /// delivered (decoded in it), per s.
  double steady_offered_tokens_per_s = 0, steady_delivered_tokens_per_s = 0;
  double backlog_requests = 0, backlog_tokens = 0; ///< arrived but not finished / not decoded at the last arrival
  bool overloaded = false;

  /// Delivered over offered across the second half (1 when nothing was offered).
  double steady_share() const
  {
    return steady_offered_tokens_per_s > 0 ? steady_delivered_tokens_per_s / steady_offered_tokens_per_s : 1.0;
  }
};

/// Records a run's arrivals, decoded tokens and finished requests as they happen.
class LoadRecorder
{
public:
  /// A request arrived at `t` (s) asking for `tokens` output tokens.
  void arrival(double t, double tokens);
  /// One output token decoded at `t`, s.
  void token(double t) { tokens_.add(t); }
  /// One request finished at `t`, s.
  void finished(double t) { finishes_.add(t); }
  /// The figures, `tolerance` the share of the second half's offered tokens a policy may fall
  /// short by and still keep up; `gpus` as LoadFigures::gpus.
  LoadFigures figures(double tolerance, std::uint64_t gpus) const;

private:
  TimeCounts offered_, arrivals_, tokens_, finishes_;
  double first_ = -1, last_ = -1;
};

} // namespace xattn::sim::engine
