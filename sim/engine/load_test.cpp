// Offered against delivered load (load.hpp), on event streams written by hand: a requester that
// keeps up and one that does not, the bins' doubling, the window's edge cases.
#include "sim/engine/load.hpp"

#include <catch2/catch.hpp>

using namespace xattn::sim::engine;

namespace
{
// Arrivals every `gap` s of `tokens` tokens over `span` s, decoded one request at a time at
// `rate` tokens/s in arrival order (a single-server queue, worked out here event by event).
LoadRecorder fifo(double gap, int tokens, double span, double rate)
{
  LoadRecorder r;
  double free_at = 0;
  for (double t = 0; t <= span + 1e-9; t += gap) {
    r.arrival(t, tokens);
    double at = std::max(free_at, t);
    for (int k = 0; k < tokens; ++k) {
      at += 1.0 / rate;
      r.token(at);
    }
    r.finished(at);
    free_at = at;
  }
  return r;
}
} // namespace

TEST_CASE("load: a requester that keeps up delivers what is offered; one at 60% of it is overloaded")
{
  // 10 tokens every 10 ms over 10 s: 1,000 tokens/s and 100 requests/s offered (1,001 arrivals).
  const LoadFigures fast = fifo(0.01, 10, 10.0, 2000).figures(0.1, 8);
  CHECK(fast.window_s == Approx(10.0));
  CHECK(fast.offered_tokens_per_s == Approx(1001.0));
  CHECK(fast.steady_offered_tokens_per_s == Approx(1000.0).epsilon(0.01));
  CHECK(fast.steady_delivered_tokens_per_s == Approx(1000.0).epsilon(0.01));
  CHECK(fast.delivered_requests_per_s == Approx(100.0).epsilon(0.01));
  CHECK(fast.backlog_requests <= 1);
  CHECK_FALSE(fast.overloaded);
  CHECK(fast.gpus == 8);

  // 600 tokens/s: the second half delivers 600 x 5 = 3,000 of 5,000 tokens; the backlog at the
  // last arrival is 10 s x (1,000 - 600) = 4,000 tokens (400 requests).
  const LoadFigures slow = fifo(0.01, 10, 10.0, 600).figures(0.1, 8);
  CHECK(slow.steady_delivered_tokens_per_s == Approx(600.0).epsilon(0.01));
  CHECK(slow.steady_share() == Approx(0.6).epsilon(0.01));
  CHECK(slow.delivered_tokens_per_s == Approx(600.0).epsilon(0.01));
  CHECK(slow.backlog_tokens == Approx(4010.0).epsilon(0.01));
  CHECK(slow.backlog_requests == Approx(401.0).margin(1.0));
  CHECK(slow.overloaded);
  // The tolerance decides at the boundary: 40% short is within a tolerance of 0.45.
  CHECK_FALSE(fifo(0.01, 10, 10.0, 600).figures(0.45, 8).overloaded);
}

TEST_CASE("load: counts stay exact to a bin when the run outgrows the bins many times over")
{
  TimeCounts c;
  for (int k = 0; k < 100000; ++k)
    c.add(0.01 * k); // 0 to 1,000 s: the 1 us bins double 18 times
  CHECK(c.total() == 100000);
  CHECK(c.upto(500.0) == Approx(50001).margin(100000.0 / TimeCounts::kBins));
  CHECK(c.upto(-1) == 0);
  CHECK(c.upto(1e9) == 100000);
}

TEST_CASE("load: a run whose requests all arrive at once has no window and is not judged")
{
  LoadRecorder r;
  for (int k = 0; k < 5; ++k)
    r.arrival(0.0, 10);
  for (int k = 0; k < 50; ++k)
    r.token(1.0 + k);
  const LoadFigures f = r.figures(0.1, 1);
  CHECK(f.window_s == 0);
  CHECK_FALSE(f.overloaded);
  CHECK(f.steady_share() == 1.0);
}
