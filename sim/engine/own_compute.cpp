#include "sim/engine/own_compute.hpp"

#include "sim/core/check.hpp"

#include <algorithm>
#include <memory>
#include <utility>

namespace xattn::sim::engine
{

void OwnCompute::run(double work, Callback done)
{
  XATTN_CHECK(work >= 0, "a GPU's own kernel takes a non-negative time");
  const double begin = next_start();
  free_at_ = begin + work;
  busy_ += work;
  if (shared_ == nullptr) {
    after(free_at_ - now(), std::move(done));
    return;
  }
  queue_.push_back({work, std::move(done)});
  if (!running_) start_next();
}

void OwnCompute::run_unqueued(double work, Callback done)
{
  free_at_ = now() + work;
  busy_ += work;
  after(work, std::move(done));
}

void OwnCompute::start_next()
{
  running_ = true;
  Pending p = std::move(queue_.front());
  queue_.pop_front();
  const double submitted = now();
  // One kernel at a time: it fills the GPU (share 1), and the routed kernels there share it.
  shared_->submit(p.work, 1.0, [this, work = p.work, submitted, done = std::move(p.done)]() mutable {
    delay_ += std::max(0.0, now() - submitted - work);
    running_ = false;
    if (!queue_.empty()) start_next();
    done();
  });
}

double OwnCompute::wait_of(std::span<const OwnCompute> ranks, double t)
{
  double wait = 0;
  for (const OwnCompute& r : ranks)
    wait = std::max(wait, r.free_at_ - t);
  return wait;
}

double OwnCompute::together_start(std::span<const OwnCompute> ranks)
{
  return now() + wait_of(ranks, now());
}

void OwnCompute::run_together(std::span<OwnCompute> ranks, double work, Callback done)
{
  const double t = now();
  const double wait = wait_of(ranks, t);
  const bool shared = std::any_of(ranks.begin(), ranks.end(), [](const OwnCompute& r) { return r.shared(); });
  if (!shared) {
    for (OwnCompute& r : ranks) {
      r.busy_ += work;
      r.free_at_ = std::max(r.free_at_, t + wait + work);
    }
    after(wait + work, std::move(done));
    return;
  }
  auto left = std::make_shared<std::size_t>(ranks.size());
  auto then = std::make_shared<Callback>(std::move(done));
  for (OwnCompute& r : ranks)
    r.run(work, [left, then] {
      if (--*left == 0) (*then)();
    });
}

} // namespace xattn::sim::engine
