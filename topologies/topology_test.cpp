#include "topologies/test_topologies.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

using namespace xattn;
using topo::Direction;
using topo::GpuId;

namespace
{
// "name+" for kUp, "name-" for kDown, joined by spaces.
std::string hops_of(const topo::Topology& t, const topo::Path& p)
{
  std::string out;
  for (const topo::Hop& h : p.hops)
    out += (out.empty() ? "" : " ") + t.link(h.link).name + (h.dir == Direction::kUp ? "+" : "-");
  return out;
}
} // namespace

TEST_CASE("topo: counts, names and GPU indexing")
{
  topo::Topology t = topo::test::small();
  CHECK(t.gpu_count() == 16);
  CHECK(t.node_count() == 4);
  CHECK(t.leaf_count() == 2);
  CHECK(t.spine_count() == 2);
  // Per node: 4 GPUs, NVSwitch, 2 PCIe switches, CPU, 2 NICs = 10 vertices; 4 NVLink + 4 GPU slots +
  // 2 NIC slots + 2 host links = 12 links. Plus 2 leaves + 2 spines; 8 access links + 4 trunks.
  CHECK(t.vertex_count() == 4 * 10 + 4);
  CHECK(t.link_count() == 4 * 12 + 8 + 4);
  CHECK(t.gpu_name(13) == "node3.gpu1");
  CHECK(t.find_gpu("node3.gpu1") == GpuId{13});
  CHECK(t.find_gpu("node0.gpu0") == GpuId{0});
  CHECK_FALSE(t.find_gpu("node4.gpu0"));
  CHECK_FALSE(t.find_gpu("node3.gpu4"));
  CHECK_FALSE(t.find_gpu("node3.gpu1x"));
  CHECK_FALSE(t.find_gpu("gpu1"));
  CHECK(t.node_of(13) == 3);
  CHECK(t.leaf_of(13) == 1);
  CHECK(t.leaf_of_node(1) == 0);
  CHECK(t.nic_of(13) == 0);
  CHECK(t.nic_of(14) == 1);
  CHECK(t.vertex(t.gpu_vertex(13)).name == "node3.gpu1");
}

TEST_CASE("topo: fabric class of GPU pairs")
{
  topo::Topology t = topo::test::small();
  CHECK(t.fabric_class(5, 5) == core::FabricClass::kSameGpu);
  CHECK(t.fabric_class(4, 7) == core::FabricClass::kNvlink);
  CHECK(t.fabric_class(0, 7) == core::FabricClass::kIbSameLeaf);
  CHECK(t.fabric_class(0, 8) == core::FabricClass::kIbSpine);
  CHECK(topo::test::small(false).fabric_class(4, 7) == core::FabricClass::kPcie);
}

TEST_CASE("topo: paths, latency sums and bottlenecks by hand")
{
  topo::Topology t = topo::test::small();
  topo::Path nv = t.path(0, 1);
  CHECK(hops_of(t, nv) == "node0.gpu0.nvlink+ node0.gpu1.nvlink-");
  CHECK(nv.fabric == core::FabricClass::kNvlink);
  CHECK(nv.latency.value() == Approx(2.2e-6));
  CHECK(nv.bottleneck.value() == 450e9);

  topo::Path leaf = t.path(1, 6); // node0.gpu1 -> node1.gpu2
  CHECK(hops_of(t, leaf) == "node0.gpu1.pcie+ node0.nic0.pcie- node0.nic0.ib+ node1.nic1.ib- node1.nic1.pcie+ "
                            "node1.gpu2.pcie-");
  CHECK(leaf.latency.value() == Approx((0.55 + 0.75 + 0.9) * 2 * 1e-6));
  CHECK(leaf.bottleneck.value() == 25e9);

  topo::Path spine = t.path(0, 8); // leaf 0 -> leaf 1 over spine (0 + 1) % 2 = 1
  CHECK(hops_of(t, spine) == "node0.gpu0.pcie+ node0.nic0.pcie- node0.nic0.ib+ leaf0.spine1+ leaf1.spine1- "
                             "node2.nic0.ib- node2.nic0.pcie+ node2.gpu0.pcie-");
  CHECK(spine.latency.value() == Approx((0.55 + 0.75 + 0.9 + 0.8) * 2 * 1e-6));
  CHECK(spine.bottleneck.value() == 6.25e9);
  CHECK(spine.time(core::Bytes(6.25e9)).value() == Approx(1.0 + 6.0e-6));
  CHECK(hops_of(t, t.path(8, 0)) == "node2.gpu0.pcie+ node2.nic0.pcie- node2.nic0.ib+ leaf1.spine1+ leaf0.spine1- "
                                    "node0.nic0.ib- node0.nic0.pcie+ node0.gpu0.pcie-");

  topo::Path same = t.path(3, 3);
  CHECK(same.hops.empty());
  CHECK(same.fabric == core::FabricClass::kSameGpu);
  CHECK(same.time(core::Bytes(1e9)).value() == 0.0);
}

TEST_CASE("topo: adaptive routing carries a leaf's uplinks as one trunk")
{
  // small() under adaptive routing: each leaf's two 6.25 GB/s trunks become one of 12.5 GB/s to
  // one vertex standing for both spines; 4 x 12 node links + 8 access links + 2 trunks.
  topo::Topology t = topo::test::small(true, "", "  routing: adaptive\n");
  CHECK(t.routing() == topo::Routing::kAdaptive);
  CHECK(t.spine_count() == 2);
  CHECK(t.vertex_count() == 4 * 10 + 2 + 1);
  CHECK(t.link_count() == 4 * 12 + 8 + 2);
  topo::Path spine = t.path(0, 8);
  CHECK(hops_of(t, spine) == "node0.gpu0.pcie+ node0.nic0.pcie- node0.nic0.ib+ leaf0.spines+ leaf1.spines- "
                             "node2.nic0.ib- node2.nic0.pcie+ node2.gpu0.pcie-");
  CHECK(spine.latency.value() == Approx((0.55 + 0.75 + 0.9 + 0.8) * 2 * 1e-6)); // as pinned
  CHECK(spine.bottleneck.value() == 12.5e9);
  CHECK(t.vertex(t.link(spine.hops[3].link).b).name == "spines");
  // Every pair between the leaves crosses the same two trunks, each way.
  for (GpuId a = 0; a < 8; ++a)
    for (GpuId b = 8; b < 16; ++b) {
      CHECK(t.link(t.path(a, b).hops[3].link).name == "leaf0.spines");
      CHECK(t.link(t.path(b, a).hops[3].link).name == "leaf1.spines");
    }
  // One spine: adaptive routing has nothing to spread over, and the graph is the pinned one.
  topo::Topology one = topo::load_topology(core::parse_yaml(
      [] {
        std::string y = topo::test::small_yaml(true, "", "  routing: adaptive\n");
        y.replace(y.find("spines: 2"), 9, "spines: 1");
        return y;
      }(),
      "one.yaml"));
  CHECK(one.link(one.path(0, 8).hops[3].link).name == "leaf0.spine0");
}

TEST_CASE("topo: ecmp hashes each GPU pair onto a spine, seeded, each direction on its own")
{
  // small() has 2 spines; 4 x 8 x 8 ordered pairs cross between its leaves (both directions, 4 NIC
  // pairs of leaf 0 and 1 each). A pair's path crosses the spine spine_of() picks, up and down.
  auto spines_of = [](const topo::Topology& t) {
    std::vector<int> picked;
    for (GpuId a = 0; a < 16; ++a)
      for (GpuId b = 0; b < 16; ++b) {
        if (t.leaf_of(a) == t.leaf_of(b)) continue;
        const topo::Path p = t.path(a, b);
        const int s = t.spine_of(a, b, t.leaf_of(a), t.leaf_of(b));
        const std::string spine = "spine" + std::to_string(s);
        CHECK(t.link(p.hops[3].link).name == "leaf" + std::to_string(t.leaf_of(a)) + "." + spine);
        CHECK(t.link(p.hops[4].link).name == "leaf" + std::to_string(t.leaf_of(b)) + "." + spine);
        picked.push_back(s);
      }
    return picked;
  };
  const std::vector<int> seed0 = spines_of(topo::test::small(true, "", "  routing: ecmp\n"));
  const std::vector<int> again = spines_of(topo::test::small(true, "", "  routing: ecmp\n  ecmp_seed: 0\n"));
  const std::vector<int> seed7 = spines_of(topo::test::small(true, "", "  routing: ecmp\n  ecmp_seed: 7\n"));
  CHECK(seed0 == again); // deterministic, 0 by default
  CHECK(seed0 != seed7); // another seed, other collisions
  REQUIRE(seed0.size() == 128);
  // Both spines carry pairs, neither all of them (128 fair coin flips: 64 +- 8 is one standard
  // deviation; 40 to 88 holds but for one seed in 10^5).
  const auto ones = std::count(seed0.begin(), seed0.end(), 1);
  CHECK(ones >= 40);
  CHECK(ones <= 88);
  // A pair and its reverse are two connections: some take different spines.
  topo::Topology t = topo::test::small(true, "", "  routing: ecmp\n");
  int differ = 0;
  for (GpuId a = 0; a < 8; ++a)
    for (GpuId b = 8; b < 16; ++b)
      differ += t.spine_of(a, b, 0, 1) != t.spine_of(b, a, 1, 0) ? 1 : 0;
  CHECK(differ > 0);
  // Pinned: (leaf_a + leaf_b) % spines, both directions alike.
  topo::Topology pinned = topo::test::small(true, "", "  routing: pinned\n");
  for (GpuId a = 0; a < 8; ++a)
    for (GpuId b = 8; b < 16; ++b)
      CHECK(pinned.spine_of(a, b, 0, 1) == 1);
}

TEST_CASE("topo: PCIe-only paths cross the host between switches")
{
  topo::Topology t = topo::test::small(false);
  topo::Path near = t.path(0, 1);
  CHECK(hops_of(t, near) == "node0.gpu0.pcie+ node0.gpu1.pcie-");
  CHECK(near.latency.value() == Approx(1.1e-6));
  CHECK(near.bottleneck.value() == 64e9);
  topo::Path far = t.path(0, 3);
  CHECK(hops_of(t, far) == "node0.gpu0.pcie+ node0.pcie0.host+ node0.pcie1.host- node0.gpu3.pcie-");
  CHECK(far.fabric == core::FabricClass::kPcie);
  CHECK(far.latency.value() == Approx((0.55 + 1.2) * 2 * 1e-6));
  CHECK(far.bottleneck.value() == 32e9);
}

TEST_CASE("topo: shared NICs across PCIe switches route through the host")
{
  // Every GPU uses NIC 0, which sits on switch 0; NIC 1 is unused (placed on switch 1).
  topo::Topology t = topo::test::small(true, "[0, 0, 0, 0]");
  topo::Path p = t.path(2, 4); // node0.gpu2 (switch 1) -> node1.gpu0 (switch 0)
  CHECK(hops_of(t, p) == "node0.gpu2.pcie+ node0.pcie1.host+ node0.pcie0.host- node0.nic0.pcie- node0.nic0.ib+ "
                         "node1.nic0.ib- node1.nic0.pcie+ node1.gpu0.pcie-");
  CHECK(p.bottleneck.value() == 25e9);
  CHECK(p.latency.value() == Approx((0.55 + 1.2 + 1.2 + 0.75 + 0.9 + 0.9 + 0.75 + 0.55) * 1e-6));
}

TEST_CASE("topo: routed paths are fewest-hop paths of the graph")
{
  for (const auto& [routing, mode] : topo::kRoutings)
    for (bool nvlink : {true, false}) {
      topo::Topology t = topo::test::small(nvlink, "", std::string("  routing: ") + routing + "\n");
      REQUIRE(t.routing() == mode);
      for (GpuId a = 0; a < t.gpu_count(); ++a)
        for (GpuId b = 0; b < t.gpu_count(); ++b) {
          topo::Path p = t.path(a, b);
          INFO(t.gpu_name(a) << " -> " << t.gpu_name(b));
          CHECK(p.hops.size() == t.shortest_path(t.gpu_vertex(a), t.gpu_vertex(b)).size());
          // Hops chain: each hop leaves the vertex the previous one entered.
          topo::VertexId at = t.gpu_vertex(a);
          for (const topo::Hop& h : p.hops) {
            const topo::Link& l = t.link(h.link);
            REQUIRE(at == (h.dir == Direction::kUp ? l.a : l.b));
            at = h.dir == Direction::kUp ? l.b : l.a;
          }
          CHECK(at == t.gpu_vertex(b));
        }
    }
}

TEST_CASE("topo: DOT export names every vertex and link")
{
  topo::Topology t = topo::test::small();
  std::ostringstream dot;
  t.write_dot(dot);
  std::string s = dot.str();
  CHECK(s.rfind("graph G {", 0) == 0);
  CHECK(s.find("label=\"node3.gpu1\",shape=box") != std::string::npos);
  CHECK(s.find("leaf0.spine1\\n6.25GBps 800ns") != std::string::npos);
  std::size_t edges = 0;
  for (std::size_t at = s.find("--"); at != std::string::npos; at = s.find("--", at + 2))
    ++edges;
  CHECK(edges == t.link_count());
}
