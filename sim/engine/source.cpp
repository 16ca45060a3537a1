#include "sim/engine/source.hpp"

#include "workloads/generator.hpp"

#include <vector>

namespace xattn::sim::engine {
namespace {

// Ids of copy k live in their own range: sessions and agents never collide across copies.
constexpr std::uint64_t kCopyStride = 1ULL << 40;

class ShapedSource : public workloads::RequestSource {
public:
  ShapedSource(const Scenario& sc) : sc_(sc)
  {
    for (int k = 0; k < sc.workload.copies; ++k) {
      Lane lane;
      lane.src = open_one();
      lane.live = lane.src->next(lane.head);
      lanes_.push_back(std::move(lane));
    }
  }

  bool next(workloads::Request& out) override
  {
    if (sc_.workload.max_requests > 0 && emitted_ >= sc_.workload.max_requests)
      return false;
    // The lane whose head arrives first (ties: lowest copy) goes next.
    int best = -1;
    double best_t = 0;
    for (int k = 0; k < static_cast<int>(lanes_.size()); ++k) {
      if (!lanes_[k].live)
        continue;
      double t = lanes_[k].head.arrival.value() + k * sc_.workload.copy_offset.value();
      if (best < 0 || t < best_t) {
        best   = k;
        best_t = t;
      }
    }
    if (best < 0)
      return false;
    Lane& lane = lanes_[best];
    std::swap(out, lane.head);
    lane.live = lane.src->next(lane.head);
    out.arrival = core::Seconds(best_t / sc_.workload.time_scale);
    const std::uint64_t shift = static_cast<std::uint64_t>(best) * kCopyStride;
    out.session += shift;
    out.agent += shift;
    if (out.parent_agent != workloads::kNoAgent)
      out.parent_agent += shift;
    out.id = emitted_++;
    if (sc_.workload.max_output_tokens > 0)
      out.output_tokens = std::min(out.output_tokens, sc_.workload.max_output_tokens);
    return true;
  }

  std::uint64_t skipped() const override
  {
    std::uint64_t n = 0;
    for (const Lane& l : lanes_)
      n += l.src->skipped();
    return n;
  }

private:
  struct Lane {
    std::unique_ptr<workloads::RequestSource> src;
    workloads::Request head;
    bool live = false;
  };
  std::unique_ptr<workloads::RequestSource> open_one() const
  {
    if (sc_.workload.generator)
      return std::make_unique<workloads::AgenticGenerator>(*sc_.workload.generator);
    workloads::ImportOptions opt;
    opt.skip_bad = sc_.workload.skip_bad;
    return workloads::open_trace(sc_.workload.trace, sc_.workload.format, opt);
  }

  const Scenario& sc_;
  std::vector<Lane> lanes_;
  std::uint64_t emitted_ = 0;
};

} // namespace

std::unique_ptr<workloads::RequestSource> open_workload(const Scenario& sc) { return std::make_unique<ShapedSource>(sc); }

} // namespace xattn::sim::engine
