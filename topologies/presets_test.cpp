// Every preset in topologies/ is loaded, checked against hand-computed figures, and run through
// SimGrid: for each path class it has, a 1 KB and a 1 GiB transfer on the idle platform must take
// latency sum + size / bottleneck of the graph's path, within 0.1%.
#include "topologies/sim_check.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <set>

using namespace xattn;
using core::FabricClass;
using topo::GpuId;

namespace
{

topo::Topology preset(const std::string& name)
{
  return topo::load_topology(std::filesystem::path(XATTN_SOURCE_DIR) / "topologies" / (name + ".yaml"));
}

// A few GPU pairs of each class present, spread over the cluster, deterministic.
std::map<FabricClass, std::vector<std::pair<GpuId, GpuId>>> sample_pairs(const topo::Topology& t)
{
  std::map<FabricClass, std::vector<std::pair<GpuId, GpuId>>> out;
  const GpuId n = static_cast<GpuId>(t.gpu_count());
  for (GpuId i = 0; i < 4096; ++i) {
    GpuId a = (i * 2654435761u) % n, b = (i * 40503u + 7) % n;
    if (i % 2 == 0) b = (a + 1 + i % 7) % n; // near pairs too, so same-node classes show up in big clusters
    auto& list = out[t.fabric_class(a, b)];
    if (list.size() < 3) list.emplace_back(a, b);
  }
  out.erase(FabricClass::kSameGpu);
  return out;
}

// Runs 1 KB and 1 GiB over every sampled pair and compares with the graph's closed form.
void check_closed_form(const std::string& name, const std::vector<FabricClass>& expected_classes)
{
  topo::Topology t = preset(name);
  auto pairs = sample_pairs(t);
  std::vector<FabricClass> classes;
  for (const auto& [c, list] : pairs)
    classes.push_back(c);
  CHECK(classes == expected_classes);

  auto engine = topo::test::make_engine();
  topo::Platform p = topo::build_platform(t, *engine, {});
  std::vector<topo::test::Transfer> runs;
  for (const auto& [c, list] : pairs)
    for (auto [a, b] : list)
      for (double size : {1024.0, 1073741824.0})
        runs.push_back({a, b, size});
  topo::test::run_sequential(*engine, p, runs);
  for (const topo::test::Transfer& r : runs) {
    topo::Path path = t.path(r.from, r.to);
    INFO(name << ": " << t.gpu_name(r.from) << " -> " << t.gpu_name(r.to) << " (" << to_string(path.fabric) << "), "
              << r.bytes << " B");
    CHECK(r.seconds == Approx(path.time(core::Bytes(r.bytes)).value()).epsilon(1e-3));
  }
}

} // namespace

TEST_CASE("topo: preset dgx-h100 by hand")
{
  topo::Topology t = preset("dgx-h100");
  CHECK(t.gpu_count() == 8);
  CHECK(t.leaf_count() == 0);
  CHECK(t.vertex_count() == 8 + 1 + 4 + 1 + 8);
  CHECK(t.link_count() == 8 + 8 + 8 + 4);
  topo::Path p = t.path(0, 7);
  CHECK(p.fabric == FabricClass::kNvlink);
  CHECK(p.latency.value() == Approx(2 * (0.4 + 0.1) * 1e-6));
  CHECK(p.bottleneck.value() == 450e9);
  // Up to host memory: GPU 5's slot to its PCIe switch (two GPUs a switch: switch 2), then that
  // switch's link to the CPU, 0.5 + 0.05 and 0.5 + 0.05 us, 64 GB/s each.
  const std::vector<topo::Hop> host = t.gpu_to_host(5);
  REQUIRE(host.size() == 2);
  CHECK(t.link(host[0].link).name == "node0.gpu5.pcie");
  CHECK(t.link(host[1].link).name == "node0.pcie2.host");
  CHECK((host[0].latency + host[1].latency).value() == Approx(1.1e-6));
  CHECK(host[1].bandwidth.value() == 64e9);
}

TEST_CASE("topo: preset testbed-ndr200 by hand")
{
  topo::Topology t = preset("testbed-ndr200");
  CHECK(t.gpu_count() == 32);
  CHECK(t.node_count() == 4);
  CHECK(t.leaf_count() == 2);
  CHECK(t.spine_count() == 1);
  CHECK(t.link_count() == 4 * 28 + 32 + 2);
  // GPU slot 0.5 + 0.05; NIC slot 0.5 + 0.05 + 0.25; access 0.1 + 0.25 + 0.065; trunk 0.1 + 0.13 (us).
  topo::Path leaf = t.path(*t.find_gpu("node0.gpu3"), *t.find_gpu("node1.gpu5"));
  CHECK(leaf.fabric == FabricClass::kIbSameLeaf);
  CHECK(leaf.latency.value() == Approx(2 * (0.55 + 0.8 + 0.415) * 1e-6));
  CHECK(leaf.bottleneck.value() == 25e9); // NDR-200
  topo::Path spine = t.path(*t.find_gpu("node1.gpu0"), *t.find_gpu("node2.gpu0"));
  CHECK(spine.fabric == FabricClass::kIbSpine);
  CHECK(spine.hops.size() == 8);
  CHECK(spine.latency.value() == Approx((2 * (0.55 + 0.8 + 0.415) + 2 * 0.23) * 1e-6));
  CHECK(spine.bottleneck.value() == 25e9); // trunk 16 x 25 GB/s
}

TEST_CASE("topo: preset ndr400-128 by hand")
{
  topo::Topology t = preset("ndr400-128");
  CHECK(t.gpu_count() == 1024);
  CHECK(t.leaf_count() == 32);
  CHECK(t.spine_count() == 16);
  CHECK(t.routing() == topo::Routing::kAdaptive);
  CHECK(t.link_count() == 128 * 28 + 1024 + 32); // each leaf's 32 uplinks as one trunk
  CHECK(t.path(0, 8).bottleneck.value() == 50e9);
  CHECK(t.path(0, 1023).fabric == FabricClass::kIbSpine);
  CHECK(t.link(t.path(0, 1023).hops[4].link).name == "leaf31.spines");
  CHECK(t.link(t.path(0, 1023).hops[4].link).bandwidth.value() == 50e9 * 32);
}

TEST_CASE("topo: preset ndr400-1024 by hand")
{
  topo::Topology t = preset("ndr400-1024");
  CHECK(t.gpu_count() == 8192);
  CHECK(t.node_count() == 1024);
  CHECK(t.leaf_count() == 128);
  CHECK(t.spine_count() == 64);
  CHECK(t.link_count() == 1024 * 28 + 8192 + 128);
  CHECK(t.gpu_name(8191) == "node1023.gpu7");
  CHECK(t.path(0, 63).fabric == FabricClass::kIbSameLeaf);
  CHECK(t.path(0, 64).fabric == FabricClass::kIbSpine);
  CHECK(t.path(0, 64).bottleneck.value() == 50e9); // a NIC; the leaf's uplinks, 2:1 oversubscribed:
  CHECK(t.link(t.path(0, 64).hops[3].link).bandwidth.value() == 50e9 * 64 / 2);
}

TEST_CASE("topo: preset h800-cx7-256 by hand")
{
  topo::Topology t = preset("h800-cx7-256");
  CHECK(t.gpu_count() == 2048);
  CHECK(t.node_count() == 256);
  CHECK(t.leaf_count() == 1); // a non-blocking fabric as one switch
  // Inside a node: NVLink at the H800's 200 GB/s each way.
  CHECK(t.path(0, 7).fabric == FabricClass::kNvlink);
  CHECK(t.path(0, 7).bottleneck.value() == 200e9);
  // Any two nodes: GPU to NIC over PCIe and back at the far end, 2 x (0.55 + 0.8) us; the NICs' links,
  // 2 x (0.1 + 0.5 / 2) us; the switch, 0.39 us, standing for a leaf-spine-leaf path's three.
  const topo::Path far = t.path(t.find_gpu("node0.gpu0").value(), t.find_gpu("node255.gpu3").value());
  CHECK(far.fabric == FabricClass::kIbSameLeaf);
  CHECK(far.bottleneck.value() == 50e9);
  CHECK(far.latency.value() == Approx(3.79e-6));
}

TEST_CASE("topo: preset h800-roce-2 by hand")
{
  topo::Topology t = preset("h800-roce-2");
  CHECK(t.gpu_count() == 16);
  CHECK(t.node_count() == 2);
  CHECK(t.leaf_count() == 1);
  CHECK(t.path(0, 7).fabric == FabricClass::kNvlink);
  CHECK(t.path(0, 7).bottleneck.value() == 200e9);
  // GPU r of one node to GPU r of the other (a tp 8 hand-off's rank pair): GPU to NIC over PCIe
  // and back at the far end, 2 x (0.55 + 0.8) us; the NICs' links, 2 x (0.1 + 0.5 / 2) us; the
  // switch, 0.6 us; each rank on its own 200 Gb/s NIC.
  const topo::Path across = t.path(t.find_gpu("node0.gpu3").value(), t.find_gpu("node1.gpu3").value());
  CHECK(across.fabric == FabricClass::kIbSameLeaf);
  CHECK(across.bottleneck.value() == 25e9);
  CHECK(across.latency.value() == Approx(4.0e-6));
}

TEST_CASE("topo: preset pcie-server by hand")
{
  topo::Topology t = preset("pcie-server");
  CHECK(t.gpu_count() == 16);
  CHECK_FALSE(t.has_nvlink());
  CHECK(t.vertex_count() == 2 * (8 + 2 + 1 + 2) + 2);
  CHECK(t.link_count() == 2 * (8 + 2 + 2) + 4 + 1);
  // slot 0.6 + 0.075; host 0.8 + 0.075 + 0.2; NIC slot 0.6 + 0.075 + 0.25; access 0.1 + 0.25 + 0.065 (us).
  topo::Path pcie = t.path(0, 7);
  CHECK(pcie.fabric == FabricClass::kPcie);
  CHECK(pcie.latency.value() == Approx(2 * (0.675 + 1.075) * 1e-6));
  CHECK(pcie.bottleneck.value() == 32e9);
  topo::Path ib = t.path(*t.find_gpu("node0.gpu4"), *t.find_gpu("node1.gpu0"));
  CHECK(ib.fabric == FabricClass::kIbSameLeaf);
  CHECK(ib.latency.value() == Approx((0.675 + 1.075 + 1.075 + 0.925 + 0.415 + 0.415 + 0.925 + 0.675) * 1e-6));
  CHECK(ib.bottleneck.value() == 25e9);
}

TEST_CASE("topo: preset h100-rail-1024 by hand")
{
  topo::Topology t = preset("h100-rail-1024");
  CHECK(t.gpu_count() == 1024);
  CHECK(t.leaf_count() == 32);
  CHECK(t.spine_count() == 16);
  CHECK(t.rails() == 8);
  CHECK_THAT(t.spec().description, Catch::Contains("rail-optimised"));
  CHECK(t.link_count() == 128 * 28 + 1024 + 32);
  auto g = [&](const char* n) { return *t.find_gpu(n); };
  // Folded (us): NVLink 0.4 + 0.1; GPU slot 0.5 + 0.05; NIC slot 0.5 + 0.05 + 0.25; access 0.1 +
  // 0.25 + 0.065; trunk 0.1 + 0.13.
  const double nvlink = 2 * 0.5, up_down = 2 * (0.55 + 0.8 + 0.415), trunks = 2 * 0.23;
  topo::Path rail = t.path(g("node0.gpu5"), g("node31.gpu5")); // one SU, rail 5: leaf 5
  CHECK(rail.fabric == FabricClass::kIbSameLeaf);
  CHECK(rail.hops.size() == 6);
  CHECK(rail.latency.value() == Approx(up_down * 1e-6));
  CHECK(rail.bottleneck.value() == 50e9);
  topo::Path pxn = t.path(g("node0.gpu0"), g("node1.gpu3")); // cross-rail: NVLink to node0.gpu3, rail 3
  CHECK(pxn.fabric == FabricClass::kIbSameLeaf);
  CHECK(pxn.hops.size() == 8);
  CHECK(t.link(pxn.hops[1].link).name == "node0.gpu3.nvlink");
  CHECK(t.link(pxn.hops[4].link).name == "node0.nic3.ib");
  CHECK(pxn.latency.value() == Approx((nvlink + up_down) * 1e-6));
  CHECK(pxn.bottleneck.value() == 50e9);
  topo::Path su = t.path(g("node0.gpu2"), g("node40.gpu2")); // SU 1: leaf 8 + 2, over every spine
  CHECK(su.fabric == FabricClass::kIbSpine);
  CHECK(su.hops.size() == 8);
  CHECK(t.link(su.hops[3].link).name == "leaf2.spines");
  CHECK(t.link(su.hops[3].link).bandwidth.value() == 50e9 * 32); // two cables to each of 16 spines
  CHECK(su.latency.value() == Approx((up_down + trunks) * 1e-6));
  topo::Path both = t.path(g("node0.gpu0"), g("node40.gpu3")); // PXN, then leaf 3 -> the spines -> leaf 11
  CHECK(both.fabric == FabricClass::kIbSpine);
  CHECK(both.hops.size() == 10);
  CHECK(t.link(both.hops[5].link).name == "leaf3.spines");
  CHECK(both.latency.value() == Approx((nvlink + up_down + trunks) * 1e-6));
}

TEST_CASE("topo: preset b200-rail-512 by hand")
{
  topo::Topology t = preset("b200-rail-512");
  CHECK(t.gpu_count() == 512);
  CHECK(t.leaf_count() == 16);
  CHECK(t.spine_count() == 8);
  CHECK(t.link_count() == 64 * 28 + 512 + 16);
  auto g = [&](const char* n) { return *t.find_gpu(n); };
  topo::Path nv = t.path(g("node3.gpu1"), g("node3.gpu6"));
  CHECK(nv.fabric == FabricClass::kNvlink);
  CHECK(nv.bottleneck.value() == 900e9); // NVLink 5
  topo::Path pxn = t.path(g("node0.gpu0"), g("node1.gpu3"));
  CHECK(pxn.fabric == FabricClass::kIbSameLeaf);
  CHECK(pxn.latency.value() == Approx((2 * 0.5 + 2 * (0.55 + 0.8 + 0.415)) * 1e-6));
  CHECK(pxn.bottleneck.value() == 50e9);
  topo::Path su = t.path(g("node0.gpu0"), g("node32.gpu0")); // leaf 0 -> the spines -> leaf 8
  CHECK(su.fabric == FabricClass::kIbSpine);
  CHECK(t.link(su.hops[3].link).bandwidth.value() == 50e9 * 32);
}

TEST_CASE("topo: preset b200-leafspine-512 by hand")
{
  topo::Topology t = preset("b200-leafspine-512");
  CHECK(t.gpu_count() == 512);
  CHECK(t.leaf_count() == 16); // the switches of b200-rail-512, cabled 4 nodes per leaf
  CHECK(t.spine_count() == 8);
  CHECK(t.rails() == 1);
  CHECK(t.link_count() == 64 * 28 + 512 + 16);
  auto g = [&](const char* n) { return *t.find_gpu(n); };
  topo::Path leaf = t.path(g("node0.gpu0"), g("node3.gpu5")); // own NICs, one leaf
  CHECK(leaf.fabric == FabricClass::kIbSameLeaf);
  CHECK(leaf.hops.size() == 6);
  CHECK(leaf.latency.value() == Approx(2 * (0.55 + 0.8 + 0.415) * 1e-6));
  topo::Path spine = t.path(g("node0.gpu0"), g("node4.gpu0")); // leaf 0 -> the spines -> leaf 1
  CHECK(spine.fabric == FabricClass::kIbSpine);
  CHECK(t.link(spine.hops[3].link).name == "leaf0.spines");
  CHECK(t.link(spine.hops[3].link).bandwidth.value() == 50e9 * 4 * 8); // 32 NIC ports' worth of uplinks
  CHECK(spine.latency.value() == Approx((2 * (0.55 + 0.8 + 0.415) + 2 * 0.23) * 1e-6));
}

TEST_CASE("topo: preset gb200-nvl72-576 by hand")
{
  topo::Topology t = preset("gb200-nvl72-576");
  CHECK(t.gpu_count() == 576);
  CHECK(t.node_count() == 144);
  CHECK(t.domain_count() == 8);
  CHECK(t.nodes_per_domain() * t.spec().gpus_per_node == 72);
  CHECK_THAT(t.spec().description, Catch::Contains("72"));
  CHECK(t.leaf_count() == 32);
  CHECK(t.spine_count() == 9);
  CHECK(t.link_count() == 144 * 14 + 576 + 32);
  CHECK(t.vertex_count() == 144 * 11 + 8 + 32 + 1); // the 9 spines as one vertex
  auto g = [&](const char* n) { return *t.find_gpu(n); };
  // Two trays of rack 0: NVLink through the switch trays, 9 x 100 GB/s; (0.5 + 0.1) us per port.
  topo::Path tray = t.path(g("node0.gpu0"), g("node5.gpu0"));
  CHECK(tray.fabric == FabricClass::kNvlink);
  CHECK(tray.hops.size() == 2);
  CHECK(t.vertex(t.link(tray.hops[0].link).b).name == "domain0.nvswitch");
  CHECK(tray.latency.value() == Approx(1.2e-6));
  CHECK(tray.bottleneck.value() == 900e9);
  CHECK(t.fabric_class(g("node0.gpu0"), g("node17.gpu3")) == FabricClass::kNvlink);
  // Rack 0 to rack 1 on rail 1: leaf 1 -> the spines -> leaf 5.
  topo::Path rack = t.path(g("node0.gpu1"), g("node18.gpu1"));
  CHECK(rack.fabric == FabricClass::kIbSpine);
  CHECK(rack.hops.size() == 8);
  CHECK(t.link(rack.hops[3].link).name == "leaf1.spines");
  CHECK(t.link(rack.hops[3].link).bandwidth.value() == 50e9 * 18);
  CHECK(rack.latency.value() == Approx((2 * (0.55 + 0.8 + 0.415) + 2 * 0.23) * 1e-6));
  CHECK(rack.bottleneck.value() == 50e9);
  // Cross-rail to another rack: NVLink to node0.gpu2 first (PXN), then rail 2.
  topo::Path pxn = t.path(g("node0.gpu0"), g("node18.gpu2"));
  CHECK(pxn.fabric == FabricClass::kIbSpine);
  CHECK(pxn.hops.size() == 10);
  CHECK(t.link(pxn.hops[1].link).name == "node0.gpu2.nvlink");
  CHECK(pxn.latency.value() == Approx((1.2 + 2 * (0.55 + 0.8 + 0.415) + 2 * 0.23) * 1e-6));
}

TEST_CASE("topo: every preset in topologies/ loads and is checked by hand and in SimGrid here")
{
  // A preset added without its tests here fails this test: add a "by hand" and a "SimGrid" case.
  const std::set<std::string> checked{"b200-leafspine-512", "b200-rail-512", "dgx-h100",      "gb200-nvl72-576",
                                      "h100-rail-1024",     "h800-cx7-256",  "h800-roce-2",   "ndr400-1024",
                                      "ndr400-128",         "pcie-server",   "testbed-ndr200"};
  std::set<std::string> found;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(XATTN_SOURCE_DIR) / "topologies"))
    if (e.path().extension() == ".yaml") {
      const std::string name = e.path().stem().string();
      found.insert(name);
      INFO(name);
      CHECK(preset(name).name() == name);
    }
  CHECK(found == checked);
}

TEST_CASE("topo: preset dgx-h100 in SimGrid matches the closed form")
{
  check_closed_form("dgx-h100", {FabricClass::kNvlink});
}

TEST_CASE("topo: preset testbed-ndr200 in SimGrid matches the closed form")
{
  check_closed_form("testbed-ndr200", {FabricClass::kNvlink, FabricClass::kIbSameLeaf, FabricClass::kIbSpine});
}

TEST_CASE("topo: preset ndr400-128 in SimGrid matches the closed form")
{
  check_closed_form("ndr400-128", {FabricClass::kNvlink, FabricClass::kIbSameLeaf, FabricClass::kIbSpine});
}

TEST_CASE("topo: preset h800-roce-2 in SimGrid matches the closed form")
{
  check_closed_form("h800-roce-2", {FabricClass::kNvlink, FabricClass::kIbSameLeaf});
}

TEST_CASE("topo: preset h800-cx7-256 in SimGrid matches the closed form")
{
  check_closed_form("h800-cx7-256", {FabricClass::kNvlink, FabricClass::kIbSameLeaf});
}

TEST_CASE("topo: preset ndr400-1024 in SimGrid matches the closed form")
{
  check_closed_form("ndr400-1024", {FabricClass::kNvlink, FabricClass::kIbSameLeaf, FabricClass::kIbSpine});
}

TEST_CASE("topo: preset pcie-server in SimGrid matches the closed form")
{
  check_closed_form("pcie-server", {FabricClass::kPcie, FabricClass::kIbSameLeaf});
}

TEST_CASE("topo: preset h100-rail-1024 in SimGrid matches the closed form")
{
  check_closed_form("h100-rail-1024", {FabricClass::kNvlink, FabricClass::kIbSameLeaf, FabricClass::kIbSpine});
}

TEST_CASE("topo: preset b200-rail-512 in SimGrid matches the closed form")
{
  check_closed_form("b200-rail-512", {FabricClass::kNvlink, FabricClass::kIbSameLeaf, FabricClass::kIbSpine});
}

TEST_CASE("topo: preset b200-leafspine-512 in SimGrid matches the closed form")
{
  check_closed_form("b200-leafspine-512", {FabricClass::kNvlink, FabricClass::kIbSameLeaf, FabricClass::kIbSpine});
}

TEST_CASE("topo: preset gb200-nvl72-576 in SimGrid matches the closed form")
{
  // Every GPU of a rack is an NVLink hop away and every NIC of a rack has its own rail leaf, so two
  // GPUs are either one NVLink domain or a spine apart: no pair is ib-same-leaf.
  check_closed_form("gb200-nvl72-576", {FabricClass::kNvlink, FabricClass::kIbSpine});
}
