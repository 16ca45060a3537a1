#include "sim/engine/network.hpp"

#include "sim/engine/clock.hpp"

#include "sim/core/check.hpp"
#include "sim/core/fault.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

namespace xattn::sim::engine
{
namespace
{
// A guard is narrower than the link it guards by at least this share: far beyond rounding.
constexpr double kGuardMargin = 1e-3;
} // namespace

Network::Network(const topo::Topology& topo, const topo::Platform& platform, bool fast_path)
    : topo_(topo), platform_(platform)
{
  resources_.resize(topo.link_count() * 2);
  for (topo::LinkId id = 0; id < topo.link_count(); ++id) {
    resources_[2 * id].capacity = topo.link(id).bandwidth.value();
    resources_[2 * id + 1].capacity = topo.link(id).bandwidth.value();
  }
  link_bytes_.assign(resources_.size(), 0.0);
  look_.assign(resources_.size(), Look{});
  if (!fast_path)
    reference_ = std::make_unique<SimgridComms>(platform, [this](std::uint32_t id, double arrived) {
      transfers_[id].arrived = arrived;
      finish_after_tail(id);
    });
}

Network::~Network() = default;

NetworkStats Network::stats() const
{
  NetworkStats s = stats_;
  if (reference_) {
    const SimgridComms::Counts& c = reference_->counts();
    s.comms = c.comms;
    s.max_comms_in_flight = c.max_in_flight;
    s.simgrid_bytes_handed = c.bytes_handed;
    s.simgrid_bytes_completed = c.bytes_completed;
  }
  return s;
}

const Network::Known& Network::known(GpuId src, GpuId dst)
{
  static_assert(sizeof(GpuId) <= 4, "a GPU pair packs into one 64-bit key");
  const std::uint64_t key = (static_cast<std::uint64_t>(src) << 32) | dst;
  static_assert(std::has_single_bit(kRecentRoutes));
  Recent& recent = recent_[(key * 0x9E3779B97F4A7C15ULL) >> (64 - std::countr_zero(kRecentRoutes))];
  if (recent.key == key) return recent.known;
  if (auto it = known_.find(key); it != known_.end()) {
    recent = {key, it->second};
    return recent.known;
  }
  CachedPath c;
  // A striping end reaches the other end's rail through the GPU of its node that owns that NIC.
  std::optional<GpuId> via;
  if (platform_.stripes(src) && (via = topo_.rail_relay(src, dst)))
    c.src_rail = topo_.nic_of(dst);
  else if (platform_.stripes(dst) && (via = topo_.rail_relay(dst, src)))
    c.dst_rail = topo_.nic_of(src);
  const topo::Path path = via ? topo_.path_via(src, *via, dst) : topo_.path(src, dst);
  std::vector<std::uint32_t> links;
  for (const topo::Hop& h : path.hops)
    links.push_back(2 * h.link + (h.dir == topo::Direction::kUp ? 0 : 1));
  XATTN_CHECK(links.size() <= kMaxHops, "a route crosses no more links than a flow has binding bits");
  const auto hops = static_cast<std::ptrdiff_t>(links.size());
  for (std::ptrdiff_t k = 0; k < hops; ++k) {
    const std::uint32_t r = links[k];
    Resource& res = resources_[r];
    if (res.guard == kUnrouted) {
      // The first route through it: its guard is the nearest narrower link of this route.
      res.guard = kNoGuard;
      for (std::ptrdiff_t d = 1; d < hops && res.guard == kNoGuard; ++d)
        for (std::ptrdiff_t j : {k - d, k + d})
          if (j >= 0 && j < hops && res.guard == kNoGuard &&
              resources_[links[j]].capacity < res.capacity * (1 - kGuardMargin))
            res.guard = links[j];
    }
    if (res.guard != kNoGuard && std::find(links.begin(), links.begin() + hops, res.guard) == links.begin() + hops)
      links.push_back(r);
  }
  XATTN_CHECK(route_links_.size() + links.size() <= std::numeric_limits<std::uint32_t>::max(),
              "the cached routes' links fit 32-bit offsets");
  c.begin = static_cast<std::uint32_t>(route_links_.size());
  c.hops = static_cast<std::uint16_t>(hops);
  c.size = static_cast<std::uint16_t>(links.size());
  route_links_.insert(route_links_.end(), links.begin(), links.end());
  return known_.emplace(key, Known{c, {path.fabric, path.bottleneck, path.latency}}).first->second;
}

sim::PathCost Network::path_cost(GpuId src, GpuId dst)
{
  return known(src, dst).cost;
}

Network::Busy Network::busiest(GpuId a, GpuId b)
{
  Busy most;
  for (const auto& [src, dst] : {std::pair{a, b}, std::pair{b, a}}) {
    const CachedPath route = known(src, dst).route;
    for (std::uint32_t k = 0; k < route.hops; ++k) {
      const std::uint32_t r = route_links_[route.begin + k];
      const Resource& res = resources_[r];
      // Only a link that can bind keeps its rates' sum up to date; the others' flows cannot fill them.
      const double used = look_[r].binds ? res.used : std::min(res.capsum, res.capacity);
      const double share = res.capacity > 0 ? std::min(1.0, used / res.capacity) : 0.0;
      const int flows = static_cast<int>(res.crossing.size());
      if (share > most.share || (share == most.share && flows > most.flows)) most = {share, flows};
    }
  }
  return most;
}

void Network::moved_bytes(std::vector<double>& out) const
{
  out = link_bytes_; // every transfer's bytes, counted when it started: take off what is left to move
  const double t = now();
  auto take_off = [&](std::uint32_t id, double left) {
    for (std::uint32_t r : resources(id))
      out[r] -= left;
  };
  for (std::uint32_t id : pending_) // placed at the end of this instant: nothing moved yet
    take_off(id, transfers_[id].payload);
  if (reference_) { // SimGrid's comms as its lazy model knows them (no fluid flow moves then)
    reference_->for_each_left(take_off);
    return;
  }
  for (std::uint32_t id = 0; id < transfers_.size(); ++id) {
    const Transfer& tr = transfers_[id];
    const Fluid& f = fluid_[id];
    if (tr.moving) take_off(id, std::max(0.0, f.left - f.rate * (t - f.stamp)) * tr.factor);
  }
}

std::uint32_t Network::new_transfer()
{
  if (!free_transfers_.empty()) {
    std::uint32_t i = free_transfers_.back();
    free_transfers_.pop_back();
    return i;
  }
  transfers_.emplace_back();
  fluid_.emplace_back();
  links_.emplace_back();
  return static_cast<std::uint32_t>(transfers_.size() - 1);
}

bool Network::binds(const Resource& r)
{
  return r.capsum > r.capacity * (1 - kTight) && (r.guard == kNoGuard || r.unguarded > 0);
}

void Network::rebind(std::uint32_t r)
{
  Resource& res = resources_[r];
  Look& k = look_[r];
  const bool now_binds = binds(res);
  if (now_binds == k.binds) return;
  k.binds = now_binds;
  // Rate changes skipped its sum while it could not bind.
  if (now_binds) res.used = 0;
  for (const OnLink& on : res.crossing) {
    Fluid& f = fluid_[on.transfer];
    f.binding ^= std::uint32_t{1} << on.hop;
    if (now_binds) res.used += f.rate;
  }
}

bool Network::full(std::uint32_t r) const
{
  // A link that cannot bind is not full: its flows at their caps, or its guard, leave room.
  const Resource& res = resources_[r];
  return look_[r].binds && res.used >= res.capacity * (1 - kTight);
}

void Network::transfer(GpuId src, GpuId dst, double bytes, const sim::Flow& flow, double tail_s, Callback done)
{
  XATTN_CHECK(src != dst && bytes > 0 && std::isfinite(bytes), "a transfer moves bytes between two GPUs");
  XATTN_CHECK(flow.rate.value() > 0 && flow.factor > 0, "a flow has a positive rate and factor");
  XATTN_CHECK(tail_s >= 0 && std::isfinite(tail_s), "a transfer's tail is a delay");
  const Known& known_route = known(src, dst);
  const CachedPath route = known_route.route;
  const std::uint32_t id = new_transfer();
  Transfer& tr = transfers_[id];
  tr.src_rail = route.src_rail;
  tr.dst_rail = route.dst_rail;
  tr.fabric = known_route.cost.fabric;
  tr.src = src;
  tr.dst = dst;
  tr.payload = bytes;
  tr.factor = flow.factor;
  tr.link_bound = flow.link_bound;
  tr.flows = std::max(1, tr.link_bound ? flow.streams : flow.blocks);
  // SimGrid moves a block-bound transfer as one flow per thread block, each capped by the dispatch
  // link, and a link-bound one as one flow per stream; whole bytes each, so at most one per byte.
  // Here they are one flow of that weight: equal flows on one path get equal rates.
  const double alone = flow.rate.value() / flow.factor;
  const double subs = tr.flows == 1 ? 1.0 : std::clamp(std::round(bytes), 1.0, static_cast<double>(tr.flows));
  Fluid& f = fluid_[id];
  f.weight = subs;
  f.cap = tr.link_bound ? alone : alone * subs / tr.flows;
  f.left = bytes / flow.factor;
  f.rate = 0;
  f.stamp = now();
  f.end = std::numeric_limits<double>::infinity();
  f.hops = route.hops;
  f.unguarded = route.size - route.hops;
  std::copy_n(route_links_.begin() + route.begin, route.size, links_[id].begin());
  tr.tail = tail_s;
  tr.arrived = 0;
  tr.done = std::move(done);
  ++active_;
  ++stats_.transfers;
  if (route.src_rail >= 0 || route.dst_rail >= 0) ++stats_.relayed;
  stats_.bytes_by_fabric[static_cast<std::size_t>(tr.fabric)] += bytes;
  for (std::uint32_t r : resources(id))
    link_bytes_[r] += bytes;
  pending_.push_back(id);
  if (!flush_scheduled_) {
    // Place every transfer of this instant together.
    flush_scheduled_ = true;
    after(0.0, [this] { flush(); });
  }
}

void Network::flush()
{
  const double t = now();
  // The events of one date run in the order they were scheduled: this flush may come before the
  // wake of flows whose last byte moves at this instant. They leave first, or the newcomers would find a
  // link they fill and no rate. (Still scheduled meanwhile: what their callbacks send joins this
  // flush.)
  depart_due(t);
  flush_scheduled_ = false;
  seeds_.clear();
  for (std::uint32_t id : pending_) {
    if (reference_) {
      ++stats_.simgrid;
      to_simgrid(id);
      continue;
    }
    Fluid& f = fluid_[id];
    f.stamp = t;
    attach(id);
    // Where it fits at its cap on every link, nobody's rate changes: max-min stays as it was.
    bool fits = true;
    for_binding(id, [&](std::uint32_t r) {
      fits = fits && resources_[r].used + f.cap <= resources_[r].capacity * (1 + kTight);
    });
    if (fits)
      set_rate(id, f.cap, t);
    else
      seeds_.push_back(id);
  }
  pending_.clear();
  if (!seeds_.empty() || !freed_.empty()) resolve(t);
  rearm();
  if (check_solver_) check_state(t);
}

void Network::set_rate(std::uint32_t id, double rate, double t)
{
  for_binding(id, [&](std::uint32_t r) { resources_[r].used += rate - fluid_[id].rate; });
  retime(id, rate, t);
}

void Network::retime(std::uint32_t id, double rate, double t)
{
  Fluid& f = fluid_[id];
  f.rate = rate;
  f.stamp = t;
  f.end = t + std::max(0.0, f.left) / rate;
  // A later end may wait in the heap at its earlier date (rearm() and wake() move it once it is on
  // top): a newcomer on a full link slows every flow held back there, and their heap dates then
  // stay put.
  if (!ends_.contains(id) || f.end < ends_.date(id)) ends_.set(id, f.end);
}

void Network::rearm()
{
  // One event, at the earliest end.
  if (ends_.empty()) {
    cancel(wake_);
    return;
  }
  refresh_top();
  const double date = ends_.top_date();
  if (wake_ != nullptr && wake_.date() == date) return;
  cancel(wake_);
  wake_ = at(date, [this] {
    wake_ = nullptr;
    wake();
  });
}

void Network::refresh_top()
{
  // Every heap date is at most its flow's end: once the top's is its end, it is the earliest end.
  while (ends_.top_date() < fluid_[ends_.top()].end)
    ends_.set(ends_.top(), fluid_[ends_.top()].end);
}

void Network::wake()
{
  depart_due(now());
  rearm();
  if (check_solver_) check_state(now());
}

void Network::depart_due(double t)
{
  while (!ends_.empty()) {
    if (ends_.top_date() > t) break; // a heap date is at most its flow's end: none is due
    refresh_top();                   // its date may be earlier than its end (set_rate())
    if (ends_.top_date() > t) break;
    const std::uint32_t id = ends_.top();
    ends_.erase(id);
    depart(id);
  }
  schedule_leaving();
}

void Network::schedule_leaving()
{
  // Transfers that leave at one instant with equal tails (an all-to-all's equal messages) finish
  // at one date: one event instead of one each, in the same order, since nothing else was
  // scheduled between their events.
  // One pass: a batch per date, made at its first transfer's turn (an all-to-all's thousands of
  // messages may leave at once).
  batch_of_date_.clear();
  made_.clear();
  for (const auto& [date, id] : leaving_) {
    auto [it, added] = batch_of_date_.try_emplace(date, 0);
    if (added) {
      if (free_batches_.empty()) {
        it->second = static_cast<std::uint32_t>(batches_.size());
        batches_.emplace_back();
      } else {
        it->second = free_batches_.back();
        free_batches_.pop_back();
      }
      made_.emplace_back(date, it->second);
    }
    batches_[it->second].push_back(id);
  }
  for (const auto& made : made_) {
    const std::uint32_t b = made.second;
    at(made.first, [this, b] { finish_batch(b); });
  }
  leaving_.clear();
}

void Network::finish_batch(std::uint32_t b)
{
  finishing_.swap(batches_[b]); // its storage stays in the pool
  free_batches_.push_back(b);
  for (std::uint32_t id : finishing_)
    finish(id);
  finishing_.clear();
}

void Network::attach(std::uint32_t id)
{
  Transfer& tr = transfers_[id];
  Fluid& f = fluid_[id];
  const auto route = resources(id);
  tr.slot.resize(route.size());
  f.binding = 0; // as its links are now: rebind() flips the bits of those it changes
  for (std::size_t k = 0; k < route.size(); ++k) {
    Resource& res = resources_[route[k]];
    tr.slot[k] = static_cast<std::uint32_t>(res.crossing.size());
    res.crossing.push_back({id, static_cast<std::uint32_t>(k)});
    res.capsum += f.cap;
    if (look_[route[k]].binds) f.binding |= std::uint32_t{1} << k;
  }
  for (std::uint32_t r : unguarded(id))
    ++resources_[r].unguarded;
  for (std::uint32_t r : route)
    rebind(r);
  tr.moving = true;
  stats_.max_in_flight = std::max<std::uint64_t>(stats_.max_in_flight, ++moving_);
}

void Network::detach(std::uint32_t id)
{
  Transfer& tr = transfers_[id];
  const auto route = resources(id);
  for (std::size_t k = 0; k < route.size(); ++k) {
    const std::uint32_t r = route[k];
    Resource& res = resources_[r];
    res.used -= fluid_[id].rate;
    res.capsum -= fluid_[id].cap;
    // Swap-remove: the last flow of the list takes this one's place, and its slot says so.
    const auto pos = tr.slot[k];
    XATTN_CHECK(pos < res.crossing.size() && res.crossing[pos].transfer == id, "a transfer's slot on a link is stale");
    const OnLink moved = res.crossing.back();
    transfers_[moved.transfer].slot[moved.hop] = pos;
    res.crossing[pos] = moved;
    res.crossing.pop_back();
    if (res.crossing.empty()) res.used = res.capsum = 0; // no drift from repeated sums
  }
  for (std::uint32_t r : unguarded(id))
    --resources_[r].unguarded;
  for (std::uint32_t r : route)
    rebind(r);
  fluid_[id].rate = 0;
  tr.moving = false;
  --moving_;
}

void Network::depart(std::uint32_t id)
{
  Transfer& tr = transfers_[id];
  Fluid& f = fluid_[id];
  const double t = now();
  f.left -= f.rate * (t - f.stamp);
  f.stamp = t;
  for_binding(id, [&](std::uint32_t r) {
    if (full(r)) freed_.push_back(r);
  });
  detach(id);
  if (!freed_.empty() && !flush_scheduled_) {
    flush_scheduled_ = true;
    after(0.0, [this] { flush(); });
  }
  ++stats_.fluid;
  tr.arrived = tr.payload - f.left * tr.factor;
  if (tr.tail > 0) {
    leaving_.emplace_back(now() + tr.tail, id); // depart_due() schedules its finish
  } else {
    schedule_leaving(); // those before it first: their events come before what its finish schedules
    finish(id);
  }
}

void Network::finish_after_tail(std::uint32_t id)
{
  if (transfers_[id].tail > 0)
    after(transfers_[id].tail, [this, id] { finish(id); });
  else
    finish(id);
}

void Network::to_simgrid(std::uint32_t id)
{
  Transfer& tr = transfers_[id];
  const std::uint64_t whole = reference_->start(id, {.src = tr.src,
                                                     .dst = tr.dst,
                                                     .src_rail = tr.src_rail,
                                                     .dst_rail = tr.dst_rail,
                                                     .link_bound = tr.link_bound,
                                                     .factor = tr.factor,
                                                     .flows = tr.flows,
                                                     .payload = tr.payload});
  if (whole == 0) { // under one byte: it arrives at once
    tr.arrived = tr.payload;
    after(tr.tail, [this, id] { finish(id); }); // not now: to_simgrid runs inside a flush
  }
}

void Network::finish(std::uint32_t id)
{
  Transfer& tr = transfers_[id];
  XATTN_CHECK(!tr.moving, "a transfer finishes after its last byte");
  if (XATTN_FAULT(kBytesLost)) tr.arrived /= 2;
  stats_.bytes_done_by_fabric[static_cast<std::size_t>(tr.fabric)] += tr.arrived;
  Callback done = std::move(tr.done);
  // The comms completed, but one of them may be firing its completion signal right now: the
  // reference releases them only once that returns.
  if (reference_) reference_->retire(id);
  tr.done = nullptr;
  free_transfers_.push_back(id);
  --active_;
  done();
  if (XATTN_FAULT(kTransferDoneTwice)) done();
}

} // namespace xattn::sim::engine
