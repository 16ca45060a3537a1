#include "topologies/platform.hpp"

#include <simgrid/s4u/NetZone.hpp>

#include <cassert>
#include <optional>
#include <string>

namespace xattn::topo
{
namespace
{

namespace s4u = simgrid::s4u;
using simgrid::kernel::routing::NetPoint;
using InRoute = s4u::LinkInRoute;

std::vector<InRoute> to_route(const std::vector<Hop>& hops, const Platform& p)
{
  std::vector<InRoute> out;
  out.reserve(hops.size());
  for (const Hop& h : hops)
    out.emplace_back(p.links[h.link], h.dir == Direction::kUp ? InRoute::Direction::UP : InRoute::Direction::DOWN);
  return out;
}

} // namespace

s4u::Host* Platform::endpoint(GpuId g, int nic, bool copy_engine) const
{
  const auto& relays = copy_engine ? relay_ce_hosts : relay_hosts;
  s4u::Host* relay   = nic < 0 || relays.empty() ? nullptr : relays[g * nics_per_node + nic];
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
  p.hosts.resize(topo.gpu_count());
  if (host.copy_engine_hosts)
    p.ce_hosts.resize(topo.gpu_count());
  p.links.resize(topo.link_count());
  p.nics_per_node = topo.spec().nics ? topo.spec().nics->count : 0;
  if (!host.striping.empty() && topo.can_stripe()) {
    p.striping.assign(topo.gpu_count(), 0);
    for (GpuId g : host.striping)
      p.striping.at(g) = 1;
    p.relay_hosts.assign(topo.gpu_count() * p.nics_per_node, nullptr);
    if (host.copy_engine_hosts)
      p.relay_ce_hosts.assign(topo.gpu_count() * p.nics_per_node, nullptr);
  }
  const int leaves = std::max<int>(1, static_cast<int>(topo.leaf_count()));
  const int gpn = static_cast<int>(topo.spec().gpus_per_node);

  s4u::NetZone* fabric = s4u::create_full_zone("fabric");
  std::vector<s4u::NetZone*> leaf_zones;
  std::vector<NetPoint*> gateways;
  auto make_link = [&](s4u::NetZone* zone, LinkId id) {
    const Link& l = topo.link(id);
    p.links[id] = zone->create_split_duplex_link(l.name, l.bandwidth.value())->set_latency(l.latency.value())->seal();
  };

  // Node links (NVLink, PCIe, NIC access) live in their leaf's zone: every node's links form one
  // contiguous block in link-id order, then the access links; make them per node as we go.
  std::vector<std::vector<LinkId>> node_links(topo.node_count());
  for (LinkId id = 0; id < topo.link_count(); ++id) {
    const Link& l = topo.link(id);
    if (l.kind == LinkKind::kIbTrunk) continue;
    node_links[topo.node_of_vertex(l.a)].push_back(id); // a non-trunk link starts inside a node
  }

  for (int leaf = 0; leaf < leaves; ++leaf) {
    const std::string name = "leaf" + std::to_string(leaf);
    s4u::NetZone* zone = s4u::create_star_zone(name);
    zone->set_parent(fabric);
    NetPoint* gw = zone->create_router(name + ".sw");
    zone->add_route(gw, nullptr, nullptr, nullptr, {}, true);
    leaf_zones.push_back(zone);
    gateways.push_back(gw);
  }
  for (int node = 0; node < static_cast<int>(topo.node_count()); ++node) {
    s4u::NetZone* zone = leaf_zones[topo.leaf_of_node(node)];
    for (LinkId id : node_links[node])
      make_link(zone, id);
    // Dispatch caps: [nvlink, pcie, ib] FATPIPE links of each GPU of the node (null: uncapped).
    static const char* kCapClass[3] = {"nvlink", "pcie", "ib"};
    std::vector<std::array<s4u::Link*, 3>> caps(gpn, {nullptr, nullptr, nullptr});
    for (int local = 0; local < gpn; ++local)
      for (int c = 0; c < 3; ++c)
        if (host.dispatch[c].value() > 0)
          caps[local][c] = zone->create_link(topo.gpu_name(static_cast<GpuId>(node * gpn + local)) + ".dispatch." +
                                                 kCapClass[c],
                                             host.dispatch[c].value())
                               ->set_sharing_policy(s4u::Link::SharingPolicy::FATPIPE)
                               ->set_latency(0)
                               ->seal();
    auto capped = [&](std::vector<InRoute> route, int local, int c) {
      if (caps[local][c] != nullptr)
        route.insert(route.begin(), InRoute(caps[local][c]));
      return route;
    };
    for (int local = 0; local < gpn; ++local) {
      const GpuId g = static_cast<GpuId>(node * gpn + local);
      p.hosts[g] = zone->create_host(topo.gpu_name(g), host.speed.value())->set_core_count(host.cores)->seal();
      zone->add_route(p.hosts[g]->get_netpoint(), nullptr, nullptr, nullptr,
                      capped(to_route(topo.gpu_to_leaf(g), p), local, 2), true);
      if (host.copy_engine_hosts) {
        p.ce_hosts[g] = zone->create_host(topo.gpu_name(g) + ".ce", host.speed.value())->seal();
        zone->add_route(p.ce_hosts[g]->get_netpoint(), nullptr, nullptr, nullptr, to_route(topo.gpu_to_leaf(g), p), true);
      }
      if (!p.stripes(g))
        continue;
      // One relay endpoint per rail this GPU reaches through another GPU of its node.
      for (int nic = 0; nic < p.nics_per_node; ++nic) {
        const std::optional<GpuId> owner = topo.rail_gpu(node, nic);
        if (nic == topo.nic_of(g) || !owner)
          continue;
        std::vector<Hop> hops = topo.path(g, *owner).hops;
        const std::vector<Hop> up = topo.gpu_to_leaf(*owner);
        hops.insert(hops.end(), up.begin(), up.end());
        const std::string rail = ".rail" + std::to_string(nic);
        s4u::Host* r = zone->create_host(topo.gpu_name(g) + rail, host.speed.value())->seal();
        zone->add_route(r->get_netpoint(), nullptr, nullptr, nullptr, capped(to_route(hops, p), local, 2), true);
        p.relay_hosts[g * p.nics_per_node + nic] = r;
        if (host.copy_engine_hosts) {
          s4u::Host* ce = zone->create_host(topo.gpu_name(g) + ".ce" + rail, host.speed.value())->seal();
          zone->add_route(ce->get_netpoint(), nullptr, nullptr, nullptr, to_route(hops, p), true);
          p.relay_ce_hosts[g * p.nics_per_node + nic] = ce;
        }
      }
    }
    for (int a = 0; a < gpn; ++a)
      for (int b = 0; b < gpn; ++b) {
        if (a == b)
          continue;
        const GpuId ga = node * gpn + a, gb = node * gpn + b;
        const Path path = topo.path(ga, gb);
        zone->add_bypass_route(p.hosts[ga]->get_netpoint(), p.hosts[gb]->get_netpoint(), nullptr, nullptr,
                               capped(to_route(path.hops, p), a, path.fabric == core::FabricClass::kNvlink ? 0 : 1));
        if (host.copy_engine_hosts)
          zone->add_bypass_route(p.ce_hosts[ga]->get_netpoint(), p.ce_hosts[gb]->get_netpoint(), nullptr, nullptr,
                                 to_route(path.hops, p));
      }
  }
  for (s4u::NetZone* zone : leaf_zones)
    zone->seal();

  // Leaf to leaf over the spine that Topology::path picks: the trunk hops of any GPU pair between them.
  for (LinkId id = 0; id < topo.link_count(); ++id)
    if (topo.link(id).kind == LinkKind::kIbTrunk) make_link(fabric, id);
  const int gpl = static_cast<int>(topo.gpu_count()) / leaves; // GPUs per leaf
  for (int la = 0; la < leaves; ++la)
    for (int lb = la + 1; lb < leaves; ++lb) {
      Path path = topo.path(static_cast<GpuId>(la * gpl), static_cast<GpuId>(lb * gpl));
      assert(path.fabric == core::FabricClass::kIbSpine);
      std::vector<Hop> trunks;
      for (const Hop& h : path.hops)
        if (topo.link(h.link).kind == LinkKind::kIbTrunk) trunks.push_back(h);
      fabric->add_route(leaf_zones[la]->get_netpoint(), leaf_zones[lb]->get_netpoint(), gateways[la], gateways[lb],
                        to_route(trunks, p), true);
    }
  fabric->seal();
  return p;
}

} // namespace xattn::topo
