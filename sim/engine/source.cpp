#include "sim/engine/source.hpp"

#include "workloads/generator.hpp"
#include "workloads/request_id.hpp"

#include <vector>

namespace xattn::sim::engine
{
namespace
{

class ShapedSource : public workloads::RequestSource
{
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
    if (sc_.workload.max_requests > 0 && emitted_ >= sc_.workload.max_requests) return false;
    // The lane whose head arrives first (ties: lowest copy) goes next.
    int best = -1;
    double best_t = 0;
    for (int k = 0; k < static_cast<int>(lanes_.size()); ++k) {
      if (!lanes_[k].live) continue;
      double t = lanes_[k].head.arrival.value() + k * sc_.workload.copy_offset.value();
      if (best < 0 || t < best_t) {
        best = k;
        best_t = t;
      }
    }
    if (best < 0) return false;
    Lane& lane = lanes_[best];
    std::swap(out, lane.head);
    lane.live = lane.src->next(lane.head);
    out.arrival = core::Seconds(best_t / sc_.workload.time_scale);
    // Ids of copy k live in their own range (workloads/request_id.hpp): sessions and agents never
    // collide across copies. The scenario loader bounds workload.copies by the layout.
    const auto copy = static_cast<std::uint64_t>(best);
    out.session = workloads::ids::copy_session(out.session, copy);
    out.agent = workloads::ids::copy_agent(out.agent, copy);
    if (out.parent_agent != workloads::kNoAgent) out.parent_agent = workloads::ids::copy_agent(out.parent_agent, copy);
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
    if (sc_.workload.generator) return std::make_unique<workloads::AgenticGenerator>(*sc_.workload.generator);
    workloads::ImportOptions opt;
    opt.skip_bad = sc_.workload.skip_bad;
    return workloads::open_trace(sc_.workload.trace, sc_.workload.format, opt);
  }

  const Scenario& sc_;
  std::vector<Lane> lanes_;
  std::uint64_t emitted_ = 0;
};

} // namespace

std::unique_ptr<workloads::RequestSource> open_workload(const Scenario& sc)
{
  return std::make_unique<ShapedSource>(sc);
}

} // namespace xattn::sim::engine
