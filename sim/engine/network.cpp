#include "sim/engine/network.hpp"

#include "sim/engine/clock.hpp"

#include "sim/core/check.hpp"

#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/s4u/Activity.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>

namespace xattn::sim::engine
{
namespace
{
Network* g_network = nullptr; // one simulation per process: the live network gets completions
bool g_connected = false;
// The bandwidth factor of the comm being started: SimGrid asks for it inside Comm::start(), which
// runs at once (no actors here), and a demoted transfer's remainder keeps its message's factor,
// which its remaining size alone could not tell.
double g_next_factor = 0;
constexpr double kFit = 1.0 + 1e-9; // reservations are sums of doubles: tolerate rounding
} // namespace

Network::Network(const topo::Topology& topo, const topo::Platform& platform, bool fast_path)
    : topo_(topo), platform_(platform), fast_path_(fast_path)
{
  resources_.resize(topo.link_count() * 2);
  for (topo::LinkId id = 0; id < topo.link_count(); ++id) {
    resources_[2 * id].capacity = topo.link(id).bandwidth.value();
    resources_[2 * id + 1].capacity = topo.link(id).bandwidth.value();
  }
  link_bytes_.assign(resources_.size(), 0.0);
  XATTN_CHECK(g_network == nullptr, "one Network per process");
  g_network = this;
  if (!g_connected) {
    simgrid::s4u::Activity::on_completion_cb([](const simgrid::s4u::Activity& a) {
      if (g_network != nullptr) g_network->on_comm_done(a);
    });
    simgrid::s4u::Engine::get_instance()->get_netzone_root()->get_network_model()->set_bw_factor_cb(
        [](double, const simgrid::s4u::Host*, const simgrid::s4u::Host*, const std::vector<simgrid::s4u::Link*>&,
           const std::unordered_set<simgrid::s4u::NetZone*>&) {
          XATTN_CHECK(g_next_factor > 0, "a SimGrid comm started outside Network::go_real");
          const double f = g_next_factor;
          g_next_factor = 0;
          return f;
        });
    g_connected = true;
  }
}

Network::~Network()
{
  g_network = nullptr;
}

const Network::CachedPath& Network::cached(GpuId src, GpuId dst)
{
  static_assert(sizeof(GpuId) <= 4, "a GPU pair packs into one 64-bit key");
  const std::uint64_t key = (static_cast<std::uint64_t>(src) << 32) | dst;
  auto it = paths_.find(key);
  if (it != paths_.end()) return it->second;
  CachedPath c;
  // A striping end reaches the other end's rail through the GPU of its node that owns that NIC.
  std::optional<GpuId> via;
  if (platform_.stripes(src) && (via = topo_.rail_relay(src, dst)))
    c.src_rail = topo_.nic_of(dst);
  else if (platform_.stripes(dst) && (via = topo_.rail_relay(dst, src)))
    c.dst_rail = topo_.nic_of(src);
  c.path = via ? topo_.path_via(src, *via, dst) : topo_.path(src, dst);
  for (const topo::Hop& h : c.path.hops)
    c.resources.push_back(2 * h.link + (h.dir == topo::Direction::kUp ? 0 : 1));
  return paths_.emplace(key, std::move(c)).first->second;
}

const topo::Path& Network::path(GpuId src, GpuId dst)
{
  return cached(src, dst).path;
}

sim::PathCost Network::path_cost(GpuId src, GpuId dst)
{
  const topo::Path& p = path(src, dst);
  return {p.fabric, p.bottleneck, p.latency};
}

std::uint32_t Network::new_leg()
{
  if (!free_legs_.empty()) {
    std::uint32_t i = free_legs_.back();
    free_legs_.pop_back();
    return i;
  }
  legs_.emplace_back();
  return static_cast<std::uint32_t>(legs_.size() - 1);
}

void Network::transfer(GpuId src, GpuId dst, double bytes, const sim::Flow& flow, double tail_s,
                       std::function<void()> done)
{
  XATTN_CHECK(src != dst && bytes > 0 && std::isfinite(bytes), "a transfer moves bytes between two GPUs");
  XATTN_CHECK(flow.rate.value() > 0 && flow.factor > 0, "a flow has a positive rate and factor");
  XATTN_CHECK(tail_s >= 0 && std::isfinite(tail_s), "a transfer's tail is a delay");
  if (!in_completion_) retired_.clear();
  const CachedPath& route = cached(src, dst);
  const std::uint32_t id = new_leg();
  Leg& leg = legs_[id];
  leg.route = &route;
  leg.src = src;
  leg.dst = dst;
  leg.payload = bytes;
  leg.factor = flow.factor;
  leg.link_bound = flow.link_bound;
  leg.bytes = bytes / flow.factor;
  leg.blocks = std::max(1, flow.blocks);
  leg.alone = flow.rate.value() / flow.factor;
  leg.start = now();
  leg.end = leg.start + leg.bytes / leg.alone;
  leg.tail = tail_s;
  leg.real = false;
  leg.released = false;
  leg.done = std::move(done);
  ++active_;
  ++stats_.transfers;
  if (route.src_rail >= 0 || route.dst_rail >= 0) ++stats_.relayed;
  stats_.bytes_by_fabric[static_cast<std::size_t>(route.path.fabric)] += bytes;

  for (std::uint32_t r : route.resources)
    link_bytes_[r] += bytes;
  leg.schedule.clear();
  leg.group = -1;
  leg.offset = 0;
  pending_.push_back(id);
  if (!flush_scheduled_) {
    // Place every transfer of this instant together.
    flush_scheduled_ = true;
    after(0.0, [this] { flush(); });
  }
}

void Network::purge(std::uint32_t r, double t)
{
  // Fused transfers whose bytes have all moved (now only in their tail) no longer load links.
  Resource& res = resources_[r];
  if (t < res.min_end) return;
  double next = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < res.legs.size();) {
    const Leg& other = legs_[res.legs[i]];
    if (!other.real && other.end <= t) {
      release(res.legs[i]); // removes it from res.legs
      continue;
    }
    if (!other.real) next = std::min(next, other.end);
    ++i;
  }
  res.min_end = next;
}

void Network::flush()
{
  flush_scheduled_ = false;
  // Scratch kept between flushes (one flush per instant with new transfers: millions of them).
  std::vector<std::uint32_t>& batch = fl_batch_;
  batch.clear();
  batch.swap(pending_); // pending_ takes the old storage
  const double t = now();
  if (batch_load_.size() != resources_.size()) {
    batch_load_.assign(resources_.size(), 0.0);
    resource_class_.assign(resources_.size(), 0);
    resource_owner_.assign(resources_.size(), -1);
  }
  enum { kFree = 0, kInternal = 1, kConflict = 2 };
  std::vector<std::uint32_t>& touched = fl_touched_;
  touched.clear();
  for (std::uint32_t id : batch)
    for (std::uint32_t r : legs_[id].route->resources) {
      if (batch_load_[r] == 0.0) {
        touched.push_back(r);
        purge(r, t);
      }
      batch_load_[r] += legs_[id].alone;
    }
  for (std::uint32_t r : touched) {
    const Resource& res = resources_[r];
    if (!fast_path_)
      resource_class_[r] = kConflict;
    else if (res.reserved + batch_load_[r] <= res.capacity * kFit)
      resource_class_[r] = kFree;
    else
      resource_class_[r] = res.legs.empty() ? kInternal : kConflict;
  }
  // Groups: transfers of this batch joined by links that bind only them (union-find).
  std::vector<std::size_t>& parent = fl_parent_;
  parent.resize(batch.size());
  for (std::size_t i = 0; i < batch.size(); ++i)
    parent[i] = i;
  auto root = [&](std::size_t i) {
    while (parent[i] != i)
      i = parent[i] = parent[parent[i]];
    return i;
  };
  for (std::size_t i = 0; i < batch.size(); ++i)
    for (std::uint32_t r : legs_[batch[i]].route->resources) {
      if (resource_class_[r] != kInternal) continue;
      if (resource_owner_[r] < 0)
        resource_owner_[r] = static_cast<int>(i);
      else
        parent[root(i)] = root(static_cast<std::size_t>(resource_owner_[r]));
    }
  std::vector<char>& real_root = fl_real_root_;
  real_root.assign(batch.size(), 0);
  for (std::size_t i = 0; i < batch.size(); ++i)
    for (std::uint32_t r : legs_[batch[i]].route->resources)
      if (resource_class_[r] == kConflict) real_root[root(i)] = 1;
  // Contention with earlier traffic. When only fused transfers are coupled, re-solve them with the
  // newcomers; else everyone on those links shares through SimGrid.
  std::vector<std::uint32_t>& seeds = fl_seeds_;
  seeds.clear();
  for (std::size_t i = 0; i < batch.size(); ++i)
    if (real_root[root(i)]) seeds.push_back(batch[i]);
  std::vector<char>& handled = fl_handled_;
  handled.assign(batch.size(), 0);
  std::vector<std::uint32_t>& settled = fl_settled_;
  settled.clear();
  if (fast_path_ && !seeds.empty() && regroup(seeds, batch, t, settled)) {
    for (std::size_t i = 0; i < batch.size(); ++i)
      if (std::find(settled.begin(), settled.end(), batch[i]) != settled.end()) handled[i] = 1;
    for (std::size_t i = 0; i < batch.size(); ++i)
      real_root[root(i)] = 0;
    for (std::uint32_t r : touched)
      if (resource_class_[r] == kConflict) resource_class_[r] = kFree; // settled by the re-solve
  }
  for (std::uint32_t r : touched)
    if (resource_class_[r] == kConflict)
      for (std::uint32_t other : std::vector<std::uint32_t>(resources_[r].legs)) // demote edits the list
        if (!legs_[other].real && !legs_[other].released) demote(other);
  for (std::uint32_t id : batch) {
    Leg& leg = legs_[id];
    leg.slot.resize(leg.route->resources.size());
    for (std::size_t k = 0; k < leg.route->resources.size(); ++k) {
      Resource& res = resources_[leg.route->resources[k]];
      res.reserved += leg.alone;
      leg.slot[k] = static_cast<std::uint32_t>(res.legs.size());
      res.legs.push_back(id);
    }
  }
  // Launch: each fused group solved exactly, the rest to SimGrid. The batch's unhandled transfers
  // ordered by group (their root), batch order kept within a group.
  std::vector<std::size_t>& order = fl_order_;
  order.clear();
  for (std::size_t i = 0; i < batch.size(); ++i)
    if (!handled[i]) order.push_back(i);
  for (std::size_t i : order)
    parent[i] = root(i);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return parent[a] < parent[b]; });
  std::vector<std::size_t>& group = fl_group_;
  for (std::size_t first = 0; first < order.size();) {
    const std::size_t g = parent[order[first]];
    std::size_t last = first;
    while (last < order.size() && parent[order[last]] == g)
      ++last;
    group.assign(order.begin() + static_cast<std::ptrdiff_t>(first), order.begin() + static_cast<std::ptrdiff_t>(last));
    first = last;
    if (real_root[g]) {
      for (std::size_t i : group) {
        ++stats_.real;
        go_real(batch[i], legs_[batch[i]].payload);
      }
      continue;
    }
    std::vector<Schedule>& sched = sched_;
    if (group.size() == 1) {
      const Leg& l = legs_[batch[group[0]]];
      sched.resize(1);
      sched[0].assign(1, {t + l.bytes / l.alone, l.alone});
    } else {
      solver_.clear();
      const std::uint32_t ep = next_epoch();
      for (std::size_t i : group) {
        solver_.add_flow(legs_[batch[i]].bytes, legs_[batch[i]].alone);
        for (std::uint32_t r : legs_[batch[i]].route->resources) {
          if (resource_class_[r] != kInternal) continue; // links that cannot bind are left out of the solve
          if (local_mark_[r] != ep) {
            local_mark_[r] = ep;
            local_index_[r] = solver_.add_link(resources_[r].capacity);
          }
          solver_.cross(local_index_[r]);
        }
      }
      solver_.schedule(t, sched);
    }
    std::vector<std::uint32_t>& ids = fl_ids_;
    ids.clear();
    for (std::size_t i : group)
      ids.push_back(batch[i]);
    fuse(ids, sched, t);
  }
  for (std::uint32_t r : touched) {
    batch_load_[r] = 0.0;
    resource_class_[r] = kFree;
    resource_owner_[r] = -1;
  }
}

void Network::fuse(const std::vector<std::uint32_t>& ids, std::vector<Schedule>& sched, double t)
{
  int gid = -1;
  if (ids.size() > 1) {
    if (free_groups_.empty()) {
      gid = static_cast<int>(groups_.size());
      groups_.emplace_back();
    } else {
      gid = free_groups_.back();
      free_groups_.pop_back();
    }
    stats_.grouped += ids.size();
  }
  for (std::size_t k = 0; k < ids.size(); ++k) {
    const std::uint32_t id = ids[k];
    Leg& l = legs_[id];
    l.schedule.swap(sched[k]); // sched[k] keeps the old storage for the next solve
    l.end = l.schedule.back().first;
    for (std::uint32_t r : l.route->resources)
      resources_[r].min_end = std::min(resources_[r].min_end, l.end);
    l.group = gid;
    if (gid >= 0) groups_[gid].push_back(id);
    l.timer = after(l.end - t + l.tail, [this, id] {
      legs_[id].timer = nullptr;
      ++stats_.fused;
      finish(id);
    });
  }
}

std::uint32_t Network::next_epoch()
{
  if (leg_mark_.size() < legs_.size()) leg_mark_.resize(legs_.size() * 2, 0);
  if (link_mark_.size() != resources_.size()) {
    link_mark_.assign(resources_.size(), 0);
    local_mark_.assign(resources_.size(), 0);
    local_index_.assign(resources_.size(), 0);
  }
  return ++epoch_;
}

void Network::dissolve(int g)
{
  for (std::uint32_t m : groups_[g])
    legs_[m].group = -1;
  groups_[g].clear();
  free_groups_.push_back(g);
}

bool Network::regroup(const std::vector<std::uint32_t>& seeds, const std::vector<std::uint32_t>& batch, double t,
                      std::vector<std::uint32_t>& settled)
{
  constexpr std::size_t kMaxGroup = 64; // past this SimGrid solves it
  const std::uint32_t ep = next_epoch();
  std::vector<std::uint32_t>& set = rg_set_;         // new and old transfers coupled with the seeds
  std::vector<std::uint32_t>& binding = rg_binding_; // links that bind within the set
  std::vector<std::uint32_t>& queue = rg_queue_;
  set.clear(), binding.clear(), queue.clear();
  auto in_set = [&](std::uint32_t id) { return leg_mark_[id] == ep; };
  auto add = [&](std::uint32_t id) {
    if (in_set(id)) return;
    if (!legs_[id].schedule.empty() && legs_[id].end <= t) {
      release(id); // its bytes have all moved: only its tail is left
      return;
    }
    leg_mark_[id] = ep;
    set.push_back(id);
    for (std::uint32_t r : legs_[id].route->resources)
      queue.push_back(r);
  };
  if (group_mark_.size() < groups_.size()) group_mark_.resize(groups_.size() * 2, 0);
  auto add_with_group = [&](std::uint32_t id) {
    add(id);
    const int g = legs_[id].group;
    if (g < 0 || group_mark_[g] == ep) return; // its group's members are in already
    group_mark_[g] = ep;
    for (std::uint32_t m : groups_[g])
      if (!legs_[m].released) add(m);
  };
  for (std::uint32_t id : seeds)
    add(id);
  while (!queue.empty()) {
    const std::uint32_t r = queue.back();
    queue.pop_back();
    if (link_mark_[r] == ep) continue;
    link_mark_[r] = ep;
    purge(r, t);
    Resource& res = resources_[r];
    if (res.reserved + batch_load_[r] <= res.capacity * kFit) continue; // cannot bind
    binding.push_back(r);
    rg_legs_.assign(res.legs.begin(), res.legs.end()); // adding may release legs from the list
    for (std::uint32_t other : rg_legs_) {
      if (legs_[other].real) return false; // coupled with SimGrid traffic: SimGrid decides
      add_with_group(other);
    }
    for (std::uint32_t id : batch)
      if (!in_set(id) && std::find(legs_[id].route->resources.begin(), legs_[id].route->resources.end(), r) !=
                             legs_[id].route->resources.end())
        add(id);
    if (set.size() > kMaxGroup) return false;
  }
  // Old members restart their schedules now, with what they have left.
  solver_.clear();
  const std::uint32_t lep = next_epoch();
  for (std::uint32_t r : binding) {
    local_mark_[r] = lep;
    local_index_[r] = solver_.add_link(resources_[r].capacity);
  }
  for (std::uint32_t id : set) {
    Leg& l = legs_[id];
    if (!l.schedule.empty()) { // an old, fused transfer
      l.offset += moved_by(l.schedule, l.start, t);
      cancel(l.timer);
      if (l.group >= 0) dissolve(l.group);
      l.start = t;
      ++stats_.regrouped;
    }
    solver_.add_flow(std::max(l.bytes - l.offset, 1e-9), l.alone);
    for (std::uint32_t r : l.route->resources)
      if (local_mark_[r] == lep) solver_.cross(local_index_[r]);
  }
  std::vector<Schedule>& sched = sched_;
  solver_.schedule(t, sched);
  fuse(set, sched, t);
  settled.assign(set.begin(), set.end());
  return true;
}

void Network::demote(std::uint32_t id)
{
  const int g = legs_[id].group;
  if (g < 0) {
    demote_one(id);
    return;
  }
  // A group's schedule assumed all its members: it leaves the fast path whole.
  std::vector<std::uint32_t> members = groups_[g];
  dissolve(g);
  for (std::uint32_t m : members) {
    if (legs_[m].end <= now())
      release(m); // all bytes moved: only its tail is left, and its timer stays
    else
      demote_one(m);
  }
}

void Network::demote_one(std::uint32_t id)
{
  Leg& leg = legs_[id];
  cancel(leg.timer);
  const double moved = leg.offset + moved_by(leg.schedule, leg.start, now());
  ++stats_.demoted;
  go_real(id, std::max(0.0, leg.bytes - moved) * leg.factor);
}

void Network::go_real(std::uint32_t id, double bytes)
{
  Leg& leg = legs_[id];
  XATTN_CHECK(bytes >= 0 && std::isfinite(bytes), "a transfer continues with what it has left to move");
  leg.real = true;
  // When the blocks together can outrun the path, the link limits the transfer: one flow between
  // the copy-engine endpoints, which carry no dispatch cap, with the message's bandwidth factor.
  // Otherwise each thread block is a flow capped at the per-block rate by the platform's dispatch
  // link. Whole bytes (`bytes` is payload), split evenly; a remainder below one byte per flow
  // finishes now.
  const bool link_bound = leg.link_bound;
  auto total = static_cast<std::uint64_t>(std::llround(bytes));
  int subs = static_cast<int>(std::min<std::uint64_t>(link_bound ? 1 : static_cast<std::uint64_t>(leg.blocks), total));
  if (subs == 0) {
    release(id);
    leg.timer = after(leg.tail, [this, id] {
      legs_[id].timer = nullptr;
      finish(id);
    });
    return;
  }
  leg.subs_left = subs;
  leg.comms.clear();
  leg.sub_bytes.clear();
  simgrid::s4u::Host* from = platform_.endpoint(leg.src, leg.route->src_rail, link_bound);
  simgrid::s4u::Host* to = platform_.endpoint(leg.dst, leg.route->dst_rail, link_bound);
  for (int s = 0; s < subs; ++s) {
    std::uint64_t part = total / subs + (static_cast<std::uint64_t>(s) < total % subs ? 1 : 0);
    auto comm = simgrid::s4u::Comm::sendto_init(from, to);
    comm->set_payload_size(part);
    comm->set_data(reinterpret_cast<void*>(static_cast<std::uintptr_t>(id) + 1));
    g_next_factor = link_bound ? leg.factor : 1.0;
    comm->start();
    leg.comms.push_back(comm);
    leg.sub_bytes.push_back(static_cast<double>(part));
    stats_.simgrid_bytes_handed += static_cast<double>(part);
    ++stats_.comms;
    ++comms_in_flight_;
  }
  stats_.max_in_flight = std::max(stats_.max_in_flight, comms_in_flight_);
}

void Network::on_comm_done(const simgrid::s4u::Activity& a)
{
  auto tag = reinterpret_cast<std::uintptr_t>(a.get_data<void>());
  if (tag == 0) return;
  XATTN_CHECK(tag <= legs_.size() && legs_[tag - 1].real && legs_[tag - 1].subs_left > 0,
              "a SimGrid comm completed for a transfer that has no comm in flight");
  retired_.clear(); // comms retired by earlier completions: their callbacks have returned
  in_completion_ = true;
  const auto id = static_cast<std::uint32_t>(tag - 1);
  Leg& leg = legs_[id];
  for (std::size_t s = 0; s < leg.comms.size(); ++s)
    if (leg.comms[s].get() == &a) stats_.simgrid_bytes_completed += leg.sub_bytes[s];
  --comms_in_flight_;
  if (--leg.subs_left == 0) {
    release(id);
    if (leg.tail > 0)
      leg.timer = after(leg.tail, [this, id] {
        legs_[id].timer = nullptr;
        finish(id);
      });
    else
      finish(id);
  }
  in_completion_ = false;
}

void Network::release(std::uint32_t id)
{
  Leg& leg = legs_[id];
  if (leg.released) return;
  leg.released = true;
  for (std::size_t k = 0; k < leg.route->resources.size(); ++k) {
    const std::uint32_t r = leg.route->resources[k];
    Resource& res = resources_[r];
    res.reserved -= leg.alone;
    // Swap-remove: the last leg of the list takes this one's place, and its slot says so.
    const auto pos = leg.slot[k];
    XATTN_CHECK(pos < res.legs.size() && res.legs[pos] == id, "a transfer's slot on a link is stale");
    const auto last = static_cast<std::uint32_t>(res.legs.size() - 1);
    const std::uint32_t moved = res.legs[last];
    res.legs[pos] = moved;
    res.legs.pop_back();
    if (pos != last) {
      Leg& m = legs_[moved];
      for (std::size_t j = 0; j < m.route->resources.size(); ++j)
        if (m.route->resources[j] == r && m.slot[j] == last) {
          m.slot[j] = pos;
          break;
        }
    }
    if (res.legs.empty()) {
      res.reserved = 0; // no drift from repeated sums
      res.min_end = std::numeric_limits<double>::infinity();
    }
  }
}

void Network::finish(std::uint32_t id)
{
  release(id);
  Leg& leg = legs_[id];
  if (leg.group >= 0) {
    auto& g = groups_[leg.group];
    if (auto it = std::find(g.begin(), g.end(), id); it != g.end()) g.erase(it);
    if (g.empty()) free_groups_.push_back(leg.group);
    leg.group = -1;
  }
  stats_.bytes_done_by_fabric[static_cast<std::size_t>(leg.route->path.fabric)] += leg.payload;
  std::function<void()> done = std::move(leg.done);
  // The comms completed, but one of them may be firing its completion signal right now: release
  // them only once that returns.
  for (auto& c : leg.comms)
    retired_.push_back(std::move(c));
  leg.comms.clear();
  leg.done = nullptr;
  free_legs_.push_back(id);
  --active_;
  done();
}

} // namespace xattn::sim::engine
