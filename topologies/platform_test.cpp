// The SimGrid platform against the graph: same routes, same idle times, max-min sharing.
#include "sim/core/yaml.hpp"
#include "topologies/sim_check.hpp"
#include "topologies/test_topologies.hpp"

#include <catch2/catch.hpp>

#include <simgrid/s4u/Host.hpp>

#include <algorithm>

using namespace xattn;
using topo::GpuId;

TEST_CASE("topo: every SimGrid route is the graph's routed path")
{
  topo::Topology t = topo::test::small(true, "[0, 0, 0, 0]"); // shared NIC across switches too
  auto engine = topo::test::make_engine();
  topo::HostSpec spec;
  spec.speed = core::FlopsPerSec(1e12);
  spec.cores = 8;
  topo::Platform p = topo::build_platform(t, *engine, spec);
  REQUIRE(p.hosts.size() == 16);
  CHECK(p.hosts[13]->get_name() == "node3.gpu1");
  CHECK(p.hosts[13]->get_core_count() == 8);
  CHECK(p.hosts[13]->get_speed() == 1e12);
  CHECK(p.links[t.path(0, 8).hops[3].link]->get_name() == "leaf0.spine1");
  for (GpuId a = 0; a < t.gpu_count(); ++a)
    for (GpuId b = 0; b < t.gpu_count(); ++b) {
      if (a == b) continue;
      topo::Path path = t.path(a, b);
      std::vector<std::string> want;
      for (const topo::Hop& h : path.hops)
        want.push_back(t.link(h.link).name + (h.dir == topo::Direction::kUp ? "_UP" : "_DOWN"));
      std::vector<simgrid::s4u::Link*> links;
      double latency = 0;
      p.hosts[a]->route_to(p.hosts[b], links, &latency);
      std::vector<std::string> got;
      for (auto* l : links)
        got.push_back(l->get_name());
      INFO(t.gpu_name(a) << " -> " << t.gpu_name(b));
      CHECK(got == want);
      CHECK(latency == Approx(path.latency.value()).epsilon(1e-12));
    }
}

TEST_CASE("topo: idle transfers take latency sum plus size over bottleneck (hand-computed)")
{
  topo::Topology t = topo::test::small();
  auto engine = topo::test::make_engine();
  topo::Platform p = topo::build_platform(t, *engine, {});
  // nvlink 2.2us + 1 GB / 450 GB/s; same leaf 4.4us + 1 GB / 25 GB/s; spine 6.0us + 1 GB / 6.25 GB/s.
  std::vector<topo::test::Transfer> runs{{0, 1, 1e9}, {1, 6, 1e9}, {0, 8, 1e9}, {0, 8, 1024}};
  topo::test::run_sequential(*engine, p, runs);
  CHECK(runs[0].seconds == Approx(2.2e-6 + 1e9 / 450e9).epsilon(1e-3));
  CHECK(runs[1].seconds == Approx(4.4e-6 + 1e9 / 25e9).epsilon(1e-3));
  CHECK(runs[2].seconds == Approx(6.0e-6 + 1e9 / 6.25e9).epsilon(1e-3));
  CHECK(runs[3].seconds == Approx(6.0e-6 + 1024 / 6.25e9).epsilon(1e-3));
}

TEST_CASE("topo: two flows sharing a link get the max-min fair share")
{
  topo::Topology t = topo::test::small();
  auto engine = topo::test::make_engine();
  topo::Platform p = topo::build_platform(t, *engine, {});
  // Both flows leave node 0 through NIC 0 (node0.nic0.ib, 25 GB/s). Flow A (node0.gpu0 -> node2.gpu0)
  // crosses the spine, whose 6.25 GB/s trunk limits it; max-min gives flow B (node0.gpu1 ->
  // node1.gpu2, same leaf) the rest of the NIC link: 25 - 6.25 = 18.75 GB/s.
  std::vector<topo::test::Transfer> flows{{0, 8, 1e9}, {1, 6, 1e9}};
  topo::test::run_concurrent(*engine, p, flows);
  CHECK(flows[1].seconds == Approx(4.4e-6 + 1e9 / 18.75e9).epsilon(1e-3));
  CHECK(flows[0].seconds == Approx(6.0e-6 + 1e9 / 6.25e9).epsilon(1e-3));

  // Without the trunk limit the two would split 12.5 / 12.5: check the share really is max-min.
  CHECK(flows[1].seconds < 0.9 * (1e9 / 12.5e9));
}

TEST_CASE("topo: two equal flows on one NVLink port split it evenly")
{
  topo::Topology t = topo::test::small();
  auto engine = topo::test::make_engine();
  topo::Platform p = topo::build_platform(t, *engine, {});
  // node0.gpu0 sends to gpu1 and gpu2 at once: they share node0.gpu0.nvlink (UP), 225 GB/s each;
  // the reverse direction (gpu3 -> gpu0) is a separate split-duplex direction at the full 450 GB/s.
  std::vector<topo::test::Transfer> flows{{0, 1, 4.5e9}, {0, 2, 4.5e9}, {3, 0, 4.5e9}};
  topo::test::run_concurrent(*engine, p, flows);
  CHECK(flows[0].seconds == Approx(2.2e-6 + 4.5e9 / 225e9).epsilon(1e-3));
  CHECK(flows[1].seconds == Approx(2.2e-6 + 4.5e9 / 225e9).epsilon(1e-3));
  CHECK(flows[2].seconds == Approx(2.2e-6 + 4.5e9 / 450e9).epsilon(1e-3));
}

namespace
{
std::vector<std::string> names(const topo::Topology& t, const topo::Path& path)
{
  std::vector<std::string> out;
  for (const topo::Hop& h : path.hops)
    out.push_back(t.link(h.link).name + (h.dir == topo::Direction::kUp ? "_UP" : "_DOWN"));
  return out;
}
std::vector<std::string> route(simgrid::s4u::Host* a, simgrid::s4u::Host* b, double& latency)
{
  std::vector<simgrid::s4u::Link*> links;
  latency = 0;
  a->route_to(b, links, &latency);
  std::vector<std::string> out;
  for (auto* l : links)
    out.push_back(l->get_name());
  return out;
}
} // namespace

TEST_CASE("topo: a striping GPU's relay endpoints route over NVLink to the rail's NIC, both ways")
{
  topo::Topology t = topo::test::small(); // NIC 0 serves GPUs 0-1, NIC 1 GPUs 2-3 of each node
  auto engine = topo::test::make_engine();
  topo::HostSpec spec;
  spec.copy_engine_hosts = true;
  spec.striping = {0};
  topo::Platform p = topo::build_platform(t, *engine, spec);
  REQUIRE(p.nics_per_node == 2);
  // GPU 0 uses NIC 0 itself; rail 1 is reached through node0.gpu2, the first GPU on NIC 1.
  CHECK(p.endpoint(0, 0, false) == p.hosts[0]);
  CHECK(p.endpoint(0, 1, false)->get_name() == "node0.gpu0.rail1");
  CHECK(p.endpoint(0, 1, true)->get_name() == "node0.gpu0.ce.rail1");
  CHECK(p.endpoint(1, 1, false) == p.hosts[1]);      // not striping: no relay endpoints
  for (GpuId b : {GpuId{6}, GpuId{10}, GpuId{15}}) { // node1.gpu2 (same leaf), node2.gpu2, node3.gpu3 (spine)
    auto via = t.rail_relay(0, b);
    REQUIRE(via);
    CHECK(*via == 2);
    double lat = 0;
    const topo::Path out = t.path_via(0, 2, b), back = t.path_via(b, 2, 0);
    INFO(t.gpu_name(b));
    CHECK(out.fabric == t.fabric_class(0, b));
    CHECK(route(p.endpoint(0, 1, true), p.ce_hosts[b], lat) == names(t, out));
    CHECK(lat == Approx(out.latency.value()).epsilon(1e-12));
    CHECK(route(p.ce_hosts[b], p.endpoint(0, 1, true), lat) == names(t, back));
    CHECK(lat == Approx(back.latency.value()).epsilon(1e-12));
    // The relayed path crosses NVLink to gpu2 and leaves through NIC 1, never NIC 0.
    const auto hops = names(t, out);
    CHECK(hops[0] == "node0.gpu0.nvlink_UP");
    CHECK(hops[1] == "node0.gpu2.nvlink_DOWN");
    CHECK(std::find(hops.begin(), hops.end(), "node0.nic1.ib_UP") != hops.end());
    CHECK(std::find(hops.begin(), hops.end(), "node0.nic0.ib_UP") == hops.end());
  }
  CHECK_FALSE(t.rail_relay(0, 8)); // node2.gpu0 is on NIC 0: GPU 0's own rail
  CHECK_FALSE(t.rail_relay(0, 3)); // same node: NVLink, no rail
}

TEST_CASE("topo: striping over the node's NICs doubles what one GPU sends to two rails")
{
  topo::Topology t = topo::test::small();
  auto engine = topo::test::make_engine();
  topo::HostSpec spec;
  spec.striping = {0};
  topo::Platform p = topo::build_platform(t, *engine, spec);
  // node0.gpu0 sends 1 GB to node1.gpu0 (rail 0) and 1 GB to node1.gpu2 (rail 1), same leaf. Through
  // its own NIC the two would share 25 GB/s (12.5 each); relayed, each has a 25 GB/s NIC.
  std::vector<topo::test::Transfer> flows{{0, 4, 1e9}, {0, 6, 1e9, -1, 1}};
  topo::test::run_concurrent(*engine, p, flows);
  const double relay_lat = t.path_via(0, 2, 6).latency.value();
  CHECK(flows[0].seconds == Approx(t.path(0, 4).latency.value() + 1e9 / 25e9).epsilon(1e-3));
  CHECK(flows[1].seconds == Approx(relay_lat + 1e9 / 25e9).epsilon(1e-3));
}

namespace
{
// Every ordered GPU pair: the SimGrid route (names, latency) between the hosts is path(a, b); with
// dispatch caps the sender's cap of the path's class comes first, and the copy-engine endpoints
// carry the path alone.
void check_every_route(const topo::Topology& t)
{
  auto engine = topo::test::make_engine();
  topo::HostSpec spec;
  spec.dispatch = {core::BytesPerSec(25e9), core::BytesPerSec(20e9), core::BytesPerSec(24e9)};
  spec.copy_engine_hosts = true;
  topo::Platform p = topo::build_platform(t, *engine, spec);
  for (GpuId a = 0; a < t.gpu_count(); ++a)
    for (GpuId b = 0; b < t.gpu_count(); ++b) {
      if (a == b) continue;
      const topo::Path path = t.path(a, b);
      INFO(t.gpu_name(a) << " -> " << t.gpu_name(b));
      double lat = 0;
      CHECK(route(p.ce_hosts[a], p.ce_hosts[b], lat) == names(t, path));
      CHECK(lat == Approx(path.latency.value()).epsilon(1e-12));
      std::vector<std::string> capped = names(t, path);
      const char* cls = path.fabric == core::FabricClass::kNvlink ? ".dispatch.nvlink"
                        : path.fabric == core::FabricClass::kPcie ? ".dispatch.pcie"
                                                                  : ".dispatch.ib";
      capped.insert(capped.begin(), t.gpu_name(a) + cls);
      CHECK(route(p.hosts[a], p.hosts[b], lat) == capped);
    }
}
} // namespace

TEST_CASE("topo: every SimGrid route is the routed path on a rail-optimised fabric with PXN")
{
  check_every_route(topo::test::rail("pxn"));
}

TEST_CASE("topo: every SimGrid route is the routed path on a rail-optimised fabric through the spine")
{
  check_every_route(topo::test::rail("spine"));
}

TEST_CASE("topo: every SimGrid route is the routed path across NVLink domains of several nodes")
{
  check_every_route(topo::test::domains());
}

TEST_CASE("topo: flows crossing an NVL72 domain get the max-min share of the GPUs' NVLink ports")
{
  // One GB200 NVL72-shaped rack: 18 trays of 4 GPUs, 9 switch trays x 100 GB/s = 900 GB/s per GPU
  // each way; folded NVLink latency 1 + 0.2 / 2 = 1.1us per port, 2.2us per path.
  const std::string yaml =
      "name: nvl72\nnodes: 18\ngpus_per_node: 4\n"
      "nvlink: {latency: 1us, switch_latency: 0.2us, nodes_per_domain: 18, switch_trays: 9,"
      " tray_bandwidth: 100GBps}\n"
      "nics: {count: 4}\n"
      "fabric: {nodes_per_leaf: 18, leaves: 1, spines: 1, link: {bandwidth: 400Gbps, latency: 1us}}\n";
  topo::Topology t = topo::load_topology(core::parse_yaml(yaml, "nvl72.yaml"));
  auto engine = topo::test::make_engine();
  topo::Platform p = topo::build_platform(t, *engine, {});
  auto g = [&](const char* name) { return *t.find_gpu(name); };
  // Three trays send 9 GB each to node5.gpu0: its port down (900 GB/s) gives each 300 GB/s. The
  // first sender also sends 9 GB to node12.gpu1: its port up carries 300 GB/s of the first flow,
  // so max-min gives the second flow the other 600 GB/s (an even split would be 450).
  std::vector<topo::test::Transfer> flows{{g("node0.gpu0"), g("node5.gpu0"), 9e9},
                                          {g("node9.gpu2"), g("node5.gpu0"), 9e9},
                                          {g("node17.gpu3"), g("node5.gpu0"), 9e9},
                                          {g("node0.gpu0"), g("node12.gpu1"), 9e9}};
  for (const auto& f : flows)
    REQUIRE(t.fabric_class(f.from, f.to) == core::FabricClass::kNvlink);
  topo::test::run_concurrent(*engine, p, flows);
  for (int i = 0; i < 3; ++i)
    CHECK(flows[i].seconds == Approx(2.2e-6 + 9e9 / 300e9).epsilon(1e-3));
  CHECK(flows[3].seconds == Approx(2.2e-6 + 9e9 / 600e9).epsilon(1e-3));
}

TEST_CASE("topo: flows sharing a rail leaf and its uplink get the max-min share (PXN)")
{
  topo::Topology t = topo::test::rail("pxn");
  auto engine = topo::test::make_engine();
  topo::Platform p = topo::build_platform(t, *engine, {});
  // SimGrid (CM02) weights each flow's share by its route latency, as TCP's RTT unfairness does;
  // the engine zeroes link latencies (its delays are its own), and so does this test: plain max-min.
  for (auto* l : p.links)
    l->set_latency(0);
  auto g = [&](const char* name) { return *t.find_gpu(name); };
  // A: node0.gpu0 -> node2.gpu3, PXN through node0.gpu3, up node0.nic3 to rail leaf 3, trunk
  //    leaf3.spine0 (6.25 GB/s), down leaf 7.
  // B: node1.gpu3 -> node3.gpu3, rail 3 too, the same trunk.
  // C: node0.gpu3 -> node1.gpu3, rail leaf 3 only, node0.nic3 up.
  // D: node0.gpu1 -> node1.gpu3, PXN through node0.gpu3, node0.nic3 up.
  // The trunk binds first: A = B = 6.25 / 2 = 3.125 GB/s. node0.nic3's 25 GB/s up then leaves
  // 25 - 3.125 = 21.875 GB/s to C and D, 10.9375 each (node1.nic3 down would allow 12.5 each).
  std::vector<topo::test::Transfer> flows{{g("node0.gpu0"), g("node2.gpu3"), 1e9},
                                          {g("node1.gpu3"), g("node3.gpu3"), 1e9},
                                          {g("node0.gpu3"), g("node1.gpu3"), 1e9},
                                          {g("node0.gpu1"), g("node1.gpu3"), 1e9}};
  topo::test::run_concurrent(*engine, p, flows);
  CHECK(flows[0].seconds == Approx(1e9 / 3.125e9).epsilon(1e-3));
  CHECK(flows[1].seconds == Approx(1e9 / 3.125e9).epsilon(1e-3));
  CHECK(flows[2].seconds == Approx(1e9 / 10.9375e9).epsilon(1e-3));
  CHECK(flows[3].seconds == Approx(1e9 / 10.9375e9).epsilon(1e-3));
}
