// Rail-optimised fabrics and multi-node NVLink domains: path classes, hops, latencies and
// bottlenecks computed by hand from the small test topologies (test_topologies.hpp).
#include "topologies/test_topologies.hpp"

#include <catch2/catch.hpp>

using namespace xattn;
using core::FabricClass;
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
GpuId gpu(const topo::Topology& t, const char* name)
{
  auto g = t.find_gpu(name);
  REQUIRE(g);
  return *g;
}
} // namespace

TEST_CASE("topo: a rail-optimised fabric cables NIC k of every node to its group's rail leaf k")
{
  topo::Topology t = topo::test::rail();
  CHECK(t.leaf_count() == 8);
  CHECK(t.rails() == 4);
  // 4 nodes x (4 NVLink + 4 GPU slots + 4 NIC slots + 2 host links) + 16 access links + 8 x 2 trunks.
  CHECK(t.link_count() == 4 * 14 + 16 + 16);
  CHECK(t.leaf_of(gpu(t, "node1.gpu2")) == 2);
  CHECK(t.leaf_of(gpu(t, "node2.gpu2")) == 6);
  CHECK(t.leaf_of_node(3) == 4);
  CHECK(t.vertex(t.link(t.path(gpu(t, "node3.gpu1"), gpu(t, "node2.gpu1")).hops[2].link).b).name == "leaf5");
  CHECK(t.link(t.path(gpu(t, "node0.gpu0"), gpu(t, "node2.gpu0")).hops[3].link).bandwidth.value() == 6.25e9);
}

TEST_CASE("topo: same-rail GPUs of two nodes of a group are one rail leaf apart")
{
  topo::Topology t = topo::test::rail();
  topo::Path p = t.path(gpu(t, "node0.gpu1"), gpu(t, "node1.gpu1"));
  CHECK(p.fabric == FabricClass::kIbSameLeaf);
  CHECK(hops_of(t, p) == "node0.gpu1.pcie+ node0.nic1.pcie- node0.nic1.ib+ node1.nic1.ib- node1.nic1.pcie+ "
                         "node1.gpu1.pcie-");
  CHECK(p.hops.size() == 6);
  CHECK(p.latency.value() == Approx(2 * (0.55 + 0.75 + 0.9) * 1e-6));
  CHECK(p.bottleneck.value() == 25e9);
  CHECK_FALSE(t.pxn_relay(gpu(t, "node0.gpu1"), gpu(t, "node1.gpu1")));
}

TEST_CASE("topo: a cross-rail pair under PXN crosses NVLink to the rail's GPU, then one rail leaf")
{
  topo::Topology t = topo::test::rail("pxn");
  const GpuId a = gpu(t, "node0.gpu0"), b = gpu(t, "node1.gpu3");
  CHECK(t.pxn_relay(a, b) == gpu(t, "node0.gpu3"));
  topo::Path p = t.path(a, b);
  CHECK(p.fabric == FabricClass::kIbSameLeaf); // the network part crosses leaf 3 only
  CHECK(hops_of(t, p) == "node0.gpu0.nvlink+ node0.gpu3.nvlink- node0.gpu3.pcie+ node0.nic3.pcie- node0.nic3.ib+ "
                         "node1.nic3.ib- node1.nic3.pcie+ node1.gpu3.pcie-");
  CHECK(p.latency.value() == Approx((2 * 1.1 + 2 * (0.55 + 0.75 + 0.9)) * 1e-6));
  CHECK(p.bottleneck.value() == 25e9);
  // The way back relays on node1: through node1.gpu0, rail 0.
  CHECK(hops_of(t, t.path(b, a)) == "node1.gpu3.nvlink+ node1.gpu0.nvlink- node1.gpu0.pcie+ node1.nic0.pcie- "
                                    "node1.nic0.ib+ node0.nic0.ib- node0.nic0.pcie+ node0.gpu0.pcie-");

  // Across groups: rail leaf 3 of group 0, spine (3 + 7) % 2 = 0, rail leaf 3 of group 1 (leaf 7).
  topo::Path far = t.path(a, gpu(t, "node2.gpu3"));
  CHECK(far.fabric == FabricClass::kIbSpine);
  CHECK(far.hops.size() == 10);
  CHECK(hops_of(t, far) == "node0.gpu0.nvlink+ node0.gpu3.nvlink- node0.gpu3.pcie+ node0.nic3.pcie- "
                           "node0.nic3.ib+ leaf3.spine0+ leaf7.spine0- node2.nic3.ib- node2.nic3.pcie+ "
                           "node2.gpu3.pcie-");
  CHECK(far.latency.value() == Approx((2 * 1.1 + 2 * (0.55 + 0.75 + 0.9) + 2 * 0.8) * 1e-6));
  CHECK(far.bottleneck.value() == 6.25e9);
}

TEST_CASE("topo: a cross-rail pair with cross_rail: spine goes up its own rail and through a spine")
{
  topo::Topology t = topo::test::rail("spine");
  const GpuId a = gpu(t, "node0.gpu0"), b = gpu(t, "node1.gpu3");
  CHECK_FALSE(t.pxn_relay(a, b));
  topo::Path p = t.path(a, b); // leaf 0 -> spine (0 + 3) % 2 = 1 -> leaf 3
  CHECK(p.fabric == FabricClass::kIbSpine);
  CHECK(hops_of(t, p) == "node0.gpu0.pcie+ node0.nic0.pcie- node0.nic0.ib+ leaf0.spine1+ leaf3.spine1- "
                         "node1.nic3.ib- node1.nic3.pcie+ node1.gpu3.pcie-");
  CHECK(p.latency.value() == Approx((2 * (0.55 + 0.75 + 0.9) + 2 * 0.8) * 1e-6));
  CHECK(p.bottleneck.value() == 6.25e9);
  // Same node stays on NVLink whatever the rails.
  CHECK(t.path(a, gpu(t, "node0.gpu3")).fabric == FabricClass::kNvlink);
}

TEST_CASE("topo: a striping GPU on a rail fabric relays through the GPU of its node on the other end's rail")
{
  topo::Topology t = topo::test::rail("spine");
  const GpuId a = gpu(t, "node0.gpu0");
  CHECK(t.rail_relay(a, gpu(t, "node2.gpu2")) == gpu(t, "node0.gpu2"));
  CHECK_FALSE(t.rail_relay(a, gpu(t, "node2.gpu0"))); // already its own rail
}

TEST_CASE("topo: GPUs of one NVLink domain on different nodes and leaves are an nvlink path")
{
  topo::Topology t = topo::test::domains();
  CHECK(t.domain_count() == 2);
  CHECK(t.spec().nvlink->bandwidth.value() == 200e9); // 2 trays x 100 GB/s
  // 4 nodes x (2 NVLink + 2 GPU slots + 2 NIC slots + 1 host) + 8 access + 4 trunks; vertices: 4 x
  // (2 GPUs + PCIe switch + CPU + 2 NICs) + 2 domain switches + 4 leaves + 1 spine.
  CHECK(t.link_count() == 4 * 7 + 8 + 4);
  CHECK(t.vertex_count() == 4 * 6 + 2 + 4 + 1);
  const GpuId a = gpu(t, "node0.gpu0"), b = gpu(t, "node1.gpu1");
  CHECK(t.leaf_of(a) != t.leaf_of(b));
  topo::Path p = t.path(a, b);
  CHECK(p.fabric == FabricClass::kNvlink);
  CHECK(hops_of(t, p) == "node0.gpu0.nvlink+ node1.gpu1.nvlink-");
  CHECK(t.vertex(t.link(p.hops[0].link).b).name == "domain0.nvswitch");
  CHECK(p.latency.value() == Approx(2.2e-6));
  CHECK(p.bottleneck.value() == 200e9);
  CHECK(t.fabric_class(a, gpu(t, "node2.gpu0")) == FabricClass::kIbSpine); // the next domain
  CHECK(t.vertex(t.link(t.path(gpu(t, "node3.gpu0"), gpu(t, "node2.gpu1")).hops[0].link).b).name == "domain1.nvswitch");
}

TEST_CASE("topo: NVLink domain paths are fewest-hop paths of the graph")
{
  topo::Topology t = topo::test::domains();
  for (GpuId a = 0; a < t.gpu_count(); ++a)
    for (GpuId b = 0; b < t.gpu_count(); ++b) {
      INFO(t.gpu_name(a) << " -> " << t.gpu_name(b));
      CHECK(t.path(a, b).hops.size() == t.shortest_path(t.gpu_vertex(a), t.gpu_vertex(b)).size());
    }
}
