#include "topologies/platform.hpp"

#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <optional>
#include <stdexcept>
#include <string>

namespace xattn::topo
{
namespace
{

namespace s4u = simgrid::s4u;
using simgrid::kernel::resource::StandardLinkImpl;
using simgrid::kernel::routing::NetPoint;

// What a host of the platform stands for: a GPU, or one of its endpoints (a copy-engine endpoint
// carries no dispatch cap; a relay endpoint enters the fabric through another GPU of its node).
struct Endpoint {
  GpuId gpu = 0;
  GpuId via = 0; ///< the GPU its traffic crosses first (a relay's rail GPU); `gpu` itself otherwise
  bool copy_engine = false;
};

// The zone that holds every host and link and routes each pair as Topology::path() says.
class TopologyZone final : public simgrid::kernel::routing::NetZoneImpl
{
public:
  TopologyZone(const std::string& name, const Topology& topo) : NetZoneImpl(name), topo_(topo) {}

  void add_endpoint(const s4u::Host* host, Endpoint e)
  {
    const unsigned long id = host->get_netpoint()->id();
    if (endpoints_.size() <= id) endpoints_.resize(id + 1);
    endpoints_[id] = e;
  }
  void set_link(LinkId id, s4u::SplitDuplexLink* link)
  {
    if (up_.size() <= id) {
      up_.resize(id + 1);
      down_.resize(id + 1);
    }
    up_[id] = link->get_link_up();
    down_[id] = link->get_link_down();
  }
  /// The dispatch cap of each GPU and class [nvlink, pcie, ib] (null: uncapped).
  std::vector<std::array<s4u::Link*, 3>> caps;

protected:
  void get_local_route(const NetPoint* src, const NetPoint* dst, simgrid::kernel::routing::Route* into,
                       double* latency) override
  {
    const Endpoint& s = endpoints_.at(src->id());
    const Endpoint& d = endpoints_.at(dst->id());
    if (!s.copy_engine && !caps.empty()) {
      const core::FabricClass c = topo_.fabric_class(s.gpu, d.gpu);
      const int k = c == core::FabricClass::kNvlink ? 0 : c == core::FabricClass::kPcie ? 1 : 2;
      if (s4u::Link* cap = caps[s.gpu][k]; cap != nullptr && s.gpu != d.gpu)
        into->link_list_.push_back(cap->get_impl());
    }
    auto add = [&](GpuId a, GpuId b) {
      if (a == b) return;
      for (const Hop& h : topo_.path(a, b).hops) {
        s4u::Link* l = h.dir == Direction::kUp ? up_[h.link] : down_[h.link];
        into->link_list_.push_back(l->get_impl());
        if (latency != nullptr) *latency += l->get_latency();
      }
    };
    add(s.gpu, s.via);
    add(s.via, d.via);
    add(d.via, d.gpu);
  }

private:
  const Topology& topo_;
  std::vector<Endpoint> endpoints_;   ///< by netpoint id
  std::vector<s4u::Link*> up_, down_; ///< by LinkId: the two directions of each split-duplex link
};

} // namespace

s4u::Host* Platform::endpoint(GpuId g, int nic, bool copy_engine) const
{
  const auto& relays = copy_engine ? relay_ce_hosts : relay_hosts;
  s4u::Host* relay = nic < 0 || relays.empty() ? nullptr : relays[g * nics_per_node + nic];
  return relay != nullptr ? relay : (copy_engine ? ce_hosts[g] : hosts[g]);
}

void configure_network(s4u::Engine& engine)
{
  engine.set_config("network/model:CM02");
  engine.set_config("network/crosstraffic:0");
  engine.set_config("network/TCP-gamma:0");
}

Platform build_platform(const Topology& topo, s4u::Engine& engine, const HostSpec& host)
{
  configure_network(engine);
  Platform p;
  const std::size_t gpus = topo.gpu_count();
  p.hosts.resize(gpus);
  if (host.copy_engine_hosts) p.ce_hosts.resize(gpus);
  p.links.resize(topo.link_count());
  p.nics_per_node = topo.spec().nics ? topo.spec().nics->count : 0;
  if (!host.striping.empty() && topo.can_stripe()) {
    p.striping.assign(gpus, 0);
    for (GpuId g : host.striping)
      p.striping.at(g) = 1;
    p.relay_hosts.assign(gpus * p.nics_per_node, nullptr);
    if (host.copy_engine_hosts) p.relay_ce_hosts.assign(gpus * p.nics_per_node, nullptr);
  }

  s4u::NetZone* root = s4u::create_full_zone("fabric");
  auto* impl = new TopologyZone("gpus", topo); // owned by its parent zone from here on
  s4u::NetZone* zone = impl->get_iface();
  zone->set_parent(root);

  for (LinkId id = 0; id < topo.link_count(); ++id) {
    const Link& l = topo.link(id);
    auto* link = zone->create_split_duplex_link(l.name, l.bandwidth.value());
    link->set_latency(l.latency.value())->seal();
    p.links[id] = link;
    impl->set_link(id, link);
  }
  // Dispatch caps: a FATPIPE link per GPU and capped class (a FATPIPE limits every flow to its
  // bandwidth and shares nothing), first on the routes of that class, so that a comm is one
  // thread block's flow.
  static const char* kCapClass[3] = {"nvlink", "pcie", "ib"};
  if (host.dispatch[0].value() > 0 || host.dispatch[1].value() > 0 || host.dispatch[2].value() > 0) {
    impl->caps.assign(gpus, {nullptr, nullptr, nullptr});
    for (GpuId g = 0; g < gpus; ++g)
      for (int c = 0; c < 3; ++c)
        if (host.dispatch[c].value() > 0)
          impl->caps[g][c] = zone->create_link(topo.gpu_name(g) + ".dispatch." + kCapClass[c], host.dispatch[c].value())
                                 ->set_sharing_policy(s4u::Link::SharingPolicy::FATPIPE)
                                 ->set_latency(0)
                                 ->seal();
  }
  auto make_host = [&](const std::string& name, Endpoint e) {
    s4u::Host* h = zone->create_host(name, host.speed.value());
    if (!e.copy_engine && e.via == e.gpu) h->set_core_count(host.cores);
    h->seal();
    impl->add_endpoint(h, e);
    return h;
  };
  for (GpuId g = 0; g < gpus; ++g) {
    const std::string name = topo.gpu_name(g);
    p.hosts[g] = make_host(name, {g, g, false});
    if (host.copy_engine_hosts) p.ce_hosts[g] = make_host(name + ".ce", {g, g, true});
    if (!p.stripes(g)) continue;
    // One relay endpoint per rail this GPU reaches through another GPU of its node.
    const int node = topo.node_of(g);
    for (int nic = 0; nic < p.nics_per_node; ++nic) {
      const std::optional<GpuId> owner = topo.rail_gpu(node, nic);
      if (nic == topo.nic_of(g) || !owner) continue;
      const std::string rail = ".rail" + std::to_string(nic);
      p.relay_hosts[g * p.nics_per_node + nic] = make_host(name + rail, {g, *owner, false});
      if (host.copy_engine_hosts)
        p.relay_ce_hosts[g * p.nics_per_node + nic] = make_host(name + ".ce" + rail, {g, *owner, true});
    }
  }
  root->seal();
  return p;
}

} // namespace xattn::topo
