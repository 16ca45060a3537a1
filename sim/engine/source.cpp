#include "sim/engine/source.hpp"

#include "sim/core/memory.hpp"
#include "sim/engine/stop.hpp"
#include "workloads/batch.hpp"
#include "workloads/generator.hpp"
#include "workloads/request_id.hpp"

#include <deque>
#include <queue>
#include <vector>

namespace xattn::sim::engine
{
namespace
{

double request_bytes(const workloads::Request& r)
{
  return static_cast<double>(sizeof(workloads::Request) + r.blocks.capacity() * sizeof(std::uint64_t));
}

class ShapedSource : public workloads::RequestSource
{
public:
  ShapedSource(const Scenario& sc, Copies copies, double max_buffered_bytes)
      : sc_(sc), copies_(copies == Copies::kOne ? 1 : sc.workload.copies), offset_s_(sc.workload.copy_offset.value()),
        max_buffered_(max_buffered_bytes), base_(open_one())
  {
    // The first arrival of the workload: copy k starts at first_s_ + k x copy_offset.
    have_first_ = fetch(0);
    if (have_first_) first_s_ = buf_.front().arrival.value();
  }

  bool next(workloads::Request& out) override
  {
    throw_if_stopped();
    core::memory_guard().tick();
    if (sc_.workload.max_requests > 0 && emitted_ >= sc_.workload.max_requests) return false;
    open_due_copies();
    if (heads_.empty()) return false;
    // The copy whose head arrives first (ties: lowest copy) goes next, as if every copy's stream
    // were merged.
    const Head h = heads_.top();
    heads_.pop();
    Lane& lane = lanes_[h.copy];
    take(lane, out);
    if (head_of(h.copy)) heads_.push({time_of(h.copy), h.copy});
    trim(); // only now: the copy's next request is counted (head_of)
    out.arrival = core::Seconds(h.t / sc_.workload.time_scale);
    // Ids of copy k live in their own range (workloads/request_id.hpp): sessions and agents never
    // collide across copies. The scenario loader bounds workload.copies by the layout.
    const auto copy = static_cast<std::uint64_t>(h.copy);
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
    // Each copy counts the entries it skipped: those of the shared stream once per copy reading it.
    std::uint64_t n = closed_skipped_ + base_->skipped() * shared_copies_;
    for (const Lane& l : lanes_)
      if (l.own) n += l.own->src->skipped();
    return n;
  }

private:
  struct Own { // a copy's own stream, once the shared window grew too large
    std::unique_ptr<workloads::RequestSource> src;
    workloads::Request head;
  };
  struct Lane {
    std::uint64_t pos = 0;    ///< the shared stream's next request for this copy
    std::unique_ptr<Own> own; ///< null: reads the shared stream
  };
  struct Head {
    double t; ///< arrival before time_scale: the request's own plus copy x copy_offset
    int copy;
    bool operator<(const Head& o) const { return t != o.t ? t > o.t : copy > o.copy; } // a min-heap
  };

  std::unique_ptr<workloads::RequestSource> open_one() const
  {
    if (sc_.workload.generator) return std::make_unique<workloads::AgenticGenerator>(*sc_.workload.generator);
    if (sc_.workload.batch) return std::make_unique<workloads::BatchSource>(*sc_.workload.batch);
    workloads::OpenOptions opt;
    opt.import.skip_bad = sc_.workload.skip_bad;
    opt.import.prefix_sessions = sc_.workload.prefix_sessions;
    return workloads::open_trace(sc_.workload.trace, sc_.workload.format, opt);
  }

  // Reads the shared stream up to request `i`; false when it ends before.
  bool fetch(std::uint64_t i)
  {
    while (start_ + buf_.size() <= i) {
      if (base_done_) return false;
      workloads::Request r;
      if (!base_->next(r)) {
        base_done_ = true;
        return false;
      }
      buffered_ += request_bytes(r);
      buf_.push_back(std::move(r));
      refs_.push_back(0);
    }
    return true;
  }

  // Opens every copy whose first arrival is due: at or before the earliest head (ties go to the
  // lower copy through the heap).
  void open_due_copies()
  {
    if (!have_first_) return;
    while (next_copy_ < copies_) {
      const double start = first_s_ + next_copy_ * offset_s_;
      if (!heads_.empty() && start > heads_.top().t) return;
      const int k = next_copy_++;
      lanes_.emplace_back();
      if (k >= detach_from_) {
        lanes_.back().own = std::make_unique<Own>();
        lanes_.back().own->src = open_one();
      } else {
        ++shared_copies_;
      }
      if (head_of(k)) heads_.push({time_of(k), k});
    }
    pinned_ = false; // every copy has started: the window may drop what they all passed
    trim();
  }

  // Makes copy k's next request available; false (and its stream closed) when it has none.
  bool head_of(int k)
  {
    Lane& lane = lanes_[k];
    if (lane.own) {
      if (lane.own->src->next(lane.own->head)) return true;
      closed_skipped_ += lane.own->src->skipped();
      lane.own.reset();
      return false;
    }
    if (!fetch(lane.pos)) return false;
    ++refs_[lane.pos - start_];
    return true;
  }

  double time_of(int k) const
  {
    const Lane& lane = lanes_[k];
    const workloads::Request& r = lane.own ? lane.own->head : buf_[lane.pos - start_];
    return r.arrival.value() + k * offset_s_;
  }

  // Hands the copy's head to `out` and moves the copy on. The window is trimmed by the caller once
  // the copy's next request is counted (head_of): before, it could drop that request.
  void take(Lane& lane, workloads::Request& out)
  {
    if (lane.own) {
      std::swap(out, lane.own->head);
      return;
    }
    const std::uint64_t i = lane.pos++ - start_;
    if (--refs_[i] == 0 && i == 0 && !pinned_) { // no copy needs it again: moved out, not copied
      buffered_ -= request_bytes(buf_.front());
      std::swap(out, buf_.front());
      buf_.pop_front();
      refs_.pop_front();
      ++start_;
    } else {
      out = buf_[i];
    }
  }

  // Drops buffered requests every started copy has passed; past max_buffered_, the copies not
  // yet started stop holding the window open (they will read streams of their own).
  void trim()
  {
    if (pinned_ && buffered_ > max_buffered_) {
      detach_from_ = next_copy_;
      pinned_ = false;
    }
    while (!pinned_ && !refs_.empty() && refs_.front() == 0) {
      buffered_ -= request_bytes(buf_.front());
      buf_.pop_front();
      refs_.pop_front();
      ++start_;
    }
  }

  const Scenario& sc_;
  const int copies_;
  const double offset_s_;
  const double max_buffered_;
  std::unique_ptr<workloads::RequestSource> base_;
  bool base_done_ = false;
  std::deque<workloads::Request> buf_; ///< the shared stream's requests start_, start_ + 1, ...
  std::deque<std::uint32_t> refs_;     ///< per buffered request: the started copies whose next it is
  std::uint64_t start_ = 0;
  double buffered_ = 0;       ///< bytes in buf_
  bool pinned_ = true;        ///< copies wait to start: keep the window from request 0
  int detach_from_ = 1 << 30; ///< copies from this one on read their own streams
  bool have_first_ = false;
  double first_s_ = 0;
  int next_copy_ = 0;
  std::uint64_t shared_copies_ = 0, closed_skipped_ = 0;
  std::vector<Lane> lanes_;
  std::priority_queue<Head> heads_;
  std::uint64_t emitted_ = 0;
};

} // namespace

std::unique_ptr<workloads::RequestSource> open_workload(const Scenario& sc, Copies copies, double max_buffered_bytes)
{
  return std::make_unique<ShapedSource>(sc, copies, max_buffered_bytes);
}

} // namespace xattn::sim::engine
