#include "sim/engine/simgrid_comms.hpp"

#include "sim/core/check.hpp"
#include "sim/engine/clock.hpp"

#include <simgrid/kernel/resource/Model.hpp>
#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/s4u/Activity.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace xattn::sim::engine
{
namespace
{
SimgridComms* g_comms = nullptr; // one simulation per process: the live reference gets completions
bool g_connected = false;
// The bandwidth factor of the comm being started: SimGrid asks for it inside Comm::start(), which
// runs at once (no actors here).
double g_next_factor = 0;
} // namespace

SimgridComms::SimgridComms(const topo::Platform& platform, std::function<void(std::uint32_t, double)> landed)
    : platform_(platform), landed_(std::move(landed))
{
  XATTN_CHECK(g_comms == nullptr, "one SimgridComms per process");
  g_comms = this;
  if (g_connected) return;
  simgrid::s4u::Activity::on_completion_cb([](const simgrid::s4u::Activity& a) {
    if (g_comms != nullptr) g_comms->on_done(a);
  });
  simgrid::s4u::Engine::get_instance()->get_netzone_root()->get_network_model()->set_bw_factor_cb(
      [](double, const simgrid::s4u::Host*, const simgrid::s4u::Host*, const std::vector<simgrid::s4u::Link*>&,
         const std::unordered_set<simgrid::s4u::NetZone*>&) {
        XATTN_CHECK(g_next_factor > 0, "a SimGrid comm started outside SimgridComms::start");
        const double f = g_next_factor;
        g_next_factor = 0;
        return f;
      });
  g_connected = true;
}

SimgridComms::~SimgridComms()
{
  g_comms = nullptr;
}

std::uint64_t SimgridComms::start(std::uint32_t id, const Spec& t)
{
  if (!in_completion_) retired_.clear();
  // When the blocks together can outrun the path, the link limits the transfer: one flow per stream
  // between the copy-engine endpoints, which carry no dispatch cap, with the message's bandwidth
  // factor. Otherwise each thread block is a flow capped at the per-block rate by the platform's
  // dispatch link. Whole bytes, split evenly; a transfer below one byte arrives at once.
  const auto total = static_cast<std::uint64_t>(std::llround(t.payload));
  const int subs = static_cast<int>(std::min<std::uint64_t>(static_cast<std::uint64_t>(t.flows), total));
  if (subs == 0) return 0;
  if (transfers_.size() <= id) transfers_.resize(id + 1);
  InFlight& x = transfers_[id];
  x.left = subs;
  x.moved = t.payload - static_cast<double>(total); // the fraction of a byte SimGrid does not move
  x.comms.clear();
  x.bytes.clear();
  simgrid::s4u::Host* from = platform_.endpoint(t.src, t.src_rail, t.link_bound);
  simgrid::s4u::Host* to = platform_.endpoint(t.dst, t.dst_rail, t.link_bound);
  for (int s = 0; s < subs; ++s) {
    const std::uint64_t part = total / subs + (static_cast<std::uint64_t>(s) < total % subs ? 1 : 0);
    auto comm = simgrid::s4u::Comm::sendto_init(from, to);
    comm->set_payload_size(part);
    comm->set_data(reinterpret_cast<void*>(static_cast<std::uintptr_t>(id) + 1));
    g_next_factor = t.link_bound ? t.factor : 1.0;
    comm->start();
    x.comms.push_back(comm);
    x.bytes.push_back(static_cast<double>(part));
    counts_.bytes_handed += static_cast<double>(part);
    ++counts_.comms;
    ++in_flight_;
  }
  counts_.max_in_flight = std::max(counts_.max_in_flight, in_flight_);
  return total;
}

void SimgridComms::on_done(const simgrid::s4u::Activity& a)
{
  auto tag = reinterpret_cast<std::uintptr_t>(a.get_data<void>());
  if (tag == 0) return;
  XATTN_CHECK(tag <= transfers_.size() && transfers_[tag - 1].left > 0,
              "a SimGrid comm completed for a transfer that has no comm in flight");
  retired_.clear(); // comms retired by earlier completions: their callbacks have returned
  in_completion_ = true;
  const auto id = static_cast<std::uint32_t>(tag - 1);
  InFlight& x = transfers_[id];
  for (std::size_t s = 0; s < x.comms.size(); ++s)
    if (x.comms[s].get() == &a) {
      counts_.bytes_completed += x.bytes[s];
      x.moved += x.bytes[s];
    }
  --in_flight_;
  if (--x.left == 0) landed_(id, x.moved);
  in_completion_ = false;
}

void SimgridComms::for_each_left(const std::function<void(std::uint32_t, double)>& fn) const
{
  if (in_flight_ == 0) return;
  const double t = now();
  auto* model = dynamic_cast<simgrid::kernel::resource::Model*>(
      simgrid::s4u::Engine::get_instance()->get_netzone_root()->get_network_model());
  XATTN_CHECK(model != nullptr, "SimGrid's network model is a Model");
  std::unordered_map<const void*, double> left;
  for (const auto& a : *model->get_started_action_set())
    left[a.get_activity()] =
        a.get_remains_no_update() - (model->is_update_lazy() ? a.get_last_value() * (t - a.get_last_update()) : 0);
  for (std::uint32_t id = 0; id < transfers_.size(); ++id) {
    const InFlight& x = transfers_[id];
    if (x.left == 0) continue;
    for (const simgrid::s4u::CommPtr& c : x.comms)
      if (auto it = left.find(c->get_impl()); it != left.end()) fn(id, std::max(0.0, it->second));
  }
}

void SimgridComms::retire(std::uint32_t id)
{
  if (id >= transfers_.size()) return;
  for (auto& c : transfers_[id].comms)
    retired_.push_back(std::move(c));
  transfers_[id].comms.clear();
}

} // namespace xattn::sim::engine
