#include "sim/engine/compute.hpp"

#include "sim/core/check.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace xattn::sim::engine
{

StreamPool::StreamPool(int streams) : streams_(streams), free_(streams)
{
  XATTN_CHECK(streams > 0, "a holder has at least one copy stream");
}

double ComputeUnit::rate() const
{
  return shares_ <= 1.0 ? 1.0 : 1.0 / shares_;
}

void ComputeUnit::advance()
{
  const double t = now();
  XATTN_CHECK(t >= last_, "the clock went backwards under a holder's kernels");
  if (!active_.empty()) {
    const double progress = (t - last_) * rate();
    for (Kernel& k : active_)
      k.remaining -= progress;
    stats_.busy_s += t - last_;
  }
  last_ = t;
}

void ComputeUnit::reschedule()
{
  cancel(next_);
  if (active_.empty()) return;
  double least = std::numeric_limits<double>::infinity();
  for (const Kernel& k : active_)
    least = std::min(least, k.remaining);
  next_ = after(std::max(0.0, least) / rate(), [this] {
    next_ = nullptr;
    on_next();
  });
}

void ComputeUnit::submit(double work_s, double share, Callback done)
{
  XATTN_CHECK(work_s >= 0 && std::isfinite(work_s), "a kernel takes a finite, non-negative time");
  XATTN_CHECK(share > 0 && share <= 1, "a kernel occupies a share of its GPU in (0, 1]");
  advance();
  active_.push_back({work_s, now(), work_s, share, std::move(done)});
  shares_ += share;
  ++stats_.kernels;
  stats_.work_s += work_s;
  stats_.gpu_s += work_s * share;
  stats_.max_concurrent = std::max(stats_.max_concurrent, static_cast<int>(active_.size()));
  reschedule();
}

void ComputeUnit::on_next()
{
  advance();
  // Every kernel whose work is done (within rounding of the timer's date) finishes now.
  const double eps = 1e-15 + 1e-13 * now();
  std::vector<Callback> finished;
  for (std::size_t i = 0; i < active_.size();) {
    if (active_[i].remaining <= eps) {
      stats_.delay_s += std::max(0.0, now() - active_[i].submitted - active_[i].work);
      finished.push_back(std::move(active_[i].done));
      active_[i] = std::move(active_.back());
      active_.pop_back();
    } else {
      ++i;
    }
  }
  if (finished.empty() && !active_.empty()) {
    // The timer was set for the least remaining kernel: rounding left it a sliver of work.
    auto least = std::min_element(active_.begin(), active_.end(),
                                  [](const Kernel& a, const Kernel& b) { return a.remaining < b.remaining; });
    stats_.delay_s += std::max(0.0, now() - least->submitted - least->work);
    finished.push_back(std::move(least->done));
    *least = std::move(active_.back());
    active_.pop_back();
  }
  // Summed afresh, not decremented: the sum of the kernels left stays exact.
  shares_ = 0;
  for (const Kernel& k : active_)
    shares_ += k.share;
  reschedule();
  for (auto& f : finished)
    f();
}

void StreamPool::acquire(Callback granted)
{
  ++stats_.copies;
  if (free_ > 0) {
    --free_;
    granted();
    return;
  }
  waiting_.push_back({now(), std::move(granted)});
  stats_.max_queue = std::max(stats_.max_queue, static_cast<int>(waiting_.size()));
}

void StreamPool::release()
{
  XATTN_CHECK(free_ < streams_, "a copy stream released that was not acquired");
  if (waiting_.empty()) {
    ++free_;
    return;
  }
  Waiter w = std::move(waiting_.front());
  waiting_.pop_front();
  stats_.wait_s += now() - w.since;
  w.granted();
}

} // namespace xattn::sim::engine
