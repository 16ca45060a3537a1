// Every preset in topologies/ is loaded, checked against hand-computed figures, and run through
// SimGrid: for each path class it has, a 1 KB and a 1 GiB transfer on the idle platform must take
// latency sum + size / bottleneck of the graph's path, within 0.1%.
#include "topologies/sim_check.hpp"

#include <catch2/catch.hpp>

#include <map>

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
  CHECK(t.link_count() == 128 * 28 + 1024 + 32 * 16);
  CHECK(t.path(0, 8).bottleneck.value() == 50e9);
  CHECK(t.path(0, 1023).fabric == FabricClass::kIbSpine);
  CHECK(t.link(t.path(0, 1023).hops[4].link).bandwidth.value() == 50e9 * 32 / 16);
}

TEST_CASE("topo: preset ndr400-1024 by hand")
{
  topo::Topology t = preset("ndr400-1024");
  CHECK(t.gpu_count() == 8192);
  CHECK(t.node_count() == 1024);
  CHECK(t.leaf_count() == 128);
  CHECK(t.spine_count() == 64);
  CHECK(t.link_count() == 1024 * 28 + 8192 + 128 * 64);
  CHECK(t.gpu_name(8191) == "node1023.gpu7");
  CHECK(t.path(0, 63).fabric == FabricClass::kIbSameLeaf);
  CHECK(t.path(0, 64).fabric == FabricClass::kIbSpine);
  CHECK(t.path(0, 64).bottleneck.value() == 50e9 * 64 / (2 * 64)); // 2:1 oversubscribed trunk
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

TEST_CASE("topo: preset ndr400-1024 in SimGrid matches the closed form")
{
  check_closed_form("ndr400-1024", {FabricClass::kNvlink, FabricClass::kIbSameLeaf, FabricClass::kIbSpine});
}

TEST_CASE("topo: preset pcie-server in SimGrid matches the closed form")
{
  check_closed_form("pcie-server", {FabricClass::kPcie, FabricClass::kIbSameLeaf});
}
