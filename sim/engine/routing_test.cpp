// How flows between leaves cross the spines (fabric.routing): transfers sharing a spine's trunks as
// each mode routes them, and a decode step whose holders sit one leaf away.
#include "sim/engine/clock.hpp"
#include "sim/engine/network.hpp"
#include "sim/engine/test_util.hpp"

#include "sim/core/resources.hpp"
#include "topologies/platform.hpp"
#include "topologies/test_topologies.hpp"

#include <simgrid/s4u/Engine.hpp>

#include <array>
#include <fstream>
#include <optional>
#include <sstream>

using namespace xattn;
using namespace xattn::sim::engine;

namespace
{

struct Pair {
  topo::GpuId src = 0, dst = 0;
};

// Three transfers of 6.25 MB at t = 0 from leaf 0 to leaf 1 of topo::test::small() under `routing`
// (each from its own NIC to its own NIC: only the trunks can hold them back), their ends. Trunks
// are 6.25 GB/s per spine (12.5 GB/s per leaf under adaptive), a NIC 25 GB/s, one thread block
// 25 GB/s, no latency. `busy`, if given: each pair's busiest link (Network::busiest) at 0.5 ms,
// while all three move, then at 10 ms, once they all ended.
std::vector<double> three_transfers(const std::string& routing, const std::array<Pair, 3>& pairs,
                                    std::vector<Network::Busy>* busy = nullptr)
{
  int argc = 2;
  const char* argv[] = {"test", "--log=root.thresh:critical", nullptr};
  simgrid::s4u::Engine engine(&argc, const_cast<char**>(argv));
  const topo::Topology topo = topo::test::small(true, "", "  routing: " + routing + "\n");
  topo::HostSpec spec;
  spec.dispatch = {core::BytesPerSec(25e9), core::BytesPerSec(25e9), core::BytesPerSec(25e9)};
  spec.copy_engine_hosts = true;
  topo::Platform platform = topo::build_platform(topo, engine, spec);
  for (auto* l : platform.links)
    l->set_latency(0);
  Network net(topo, platform, true);
  std::vector<double> ends(3, -1);
  after(0.0, [&] {
    for (std::size_t i = 0; i < 3; ++i)
      net.transfer(pairs[i].src, pairs[i].dst, 6.25e6, sim::Flow{core::BytesPerSec(25e9), 1.0, false, 1}, 0.0,
                   [&ends, i] { ends[i] = now(); });
  });
  if (busy != nullptr)
    for (double t : {0.5e-3, 10e-3})
      after(t, [&net, &pairs, busy] {
        for (const Pair& p : pairs)
          busy->push_back(net.busiest(p.src, p.dst));
      });
  engine.run();
  return ends;
}

// Pairs from leaf 0's four NICs (GPUs 0, 2, 4, 6) to leaf 1's (8, 10, 12, 14) under ecmp with seed
// 0: two that hash onto one spine and a third, of other NICs, onto the other.
std::array<Pair, 3> colliding()
{
  const topo::Topology t = topo::test::small(true, "", "  routing: ecmp\n");
  auto spine = [&](Pair p) { return t.spine_of(p.src, p.dst, 0, 1); };
  for (topo::GpuId a = 0; a < 8; a += 2)
    for (topo::GpuId b = 8; b < 16; b += 2)
      for (topo::GpuId c = a + 2; c < 8; c += 2)
        for (topo::GpuId d = 8; d < 16; d += 2)
          for (topo::GpuId e = 0; e < 8; e += 2)
            for (topo::GpuId f = 8; f < 16; f += 2) {
              const Pair p{a, b}, q{c, d}, r{e, f};
              if (d == b || e == a || e == c || f == b || f == d) continue;
              if (spine(p) == spine(q) && spine(r) != spine(p)) return {p, q, r};
            }
  FAIL("no two pairs of distinct NICs collide under this seed");
  return {};
}

// The quickstart's shape on the 1,024-GPU preset: 16 requester GPUs (node0-1, leaf 0) each decode
// one request whose one 2,048-token chunk sits on its own holder GPU: on node2-3 (leaf 0) or node4-5
// (leaf 1, one leaf away). One routed exchange per step; each GPU has its own NIC.
double routed_step(const std::string& routing, const std::string& holders)
{
  const auto topology = test::edited_preset(test::fresh_dir("routing"), "ndr400-128", "topologies",
                                            "fabric:", "  routing: " + routing + "\n", "  routing:");
  std::ostringstream s;
  s << "name: routing\n"
    << "model: {name: m, layers: 1, heads: 128, kv_lora_rank: 512, rope_dim: 64}\n"
    << "profile: h100-ndr200-ibgda\n"
    << "topology: " << topology.string() << "\n"
    << "instances: {requesters: [node0-1], holders: [" << holders << "]}\n"
    << "corpus: {chunk_tokens: 2048, placement: round-robin}\n"
    << "workload: {trace: trace.jsonl}\n"
    << "policies: [route]\n"
    << "engine: {route_protocol: absorbed}\n";
  std::string trace;
  for (int i = 0; i < 16; ++i)
    trace += test::request(i, 0.0, i, 32 * i, 32, 1); // chunk i on holder i, session i on requester i
  return test::step_mean(test::run(s.str(), trace), "route");
}

} // namespace

// Trunks of 6.25 GB/s per spine, 12.5 GB/s per leaf. Pinned: every pair of the two leaves on spine
// (0 + 1) % 2, the three share 6.25 GB/s: 6.25 MB each at 2.08 GB/s, 3 ms.
// What a policy reads of the path meanwhile (policy::Load): its busiest link is that trunk, full,
// with the three flows; once they ended, nothing.
void check_busy(const std::vector<Network::Busy>& busy, const std::array<int, 3>& flows)
{
  REQUIRE(busy.size() == 6);
  for (std::size_t i = 0; i < 3; ++i) {
    INFO("pair " << i);
    CHECK(busy[i].share == Approx(1).epsilon(1e-9));
    CHECK(busy[i].flows == flows[i]);
    CHECK(busy[3 + i].share == 0);
    CHECK(busy[3 + i].flows == 0);
  }
}

TEST_CASE("routing: pinned sends three transfers between two leaves over one spine")
{
  const std::array<Pair, 3> pairs = colliding();
  std::vector<Network::Busy> busy;
  for (double end : three_transfers("pinned", pairs, &busy))
    CHECK(end == Approx(3e-3).epsilon(1e-9));
  check_busy(busy, {3, 3, 3});
}

// Ecmp: the two that hash onto one spine share its 6.25 GB/s (2 ms); the third runs alone on the
// other (1 ms).
TEST_CASE("routing: ecmp shares a spine between the pairs that hash onto it, and only them")
{
  std::vector<Network::Busy> busy;
  const std::vector<double> ends = three_transfers("ecmp", colliding(), &busy);
  CHECK(ends[0] == Approx(2e-3).epsilon(1e-9));
  CHECK(ends[1] == Approx(2e-3).epsilon(1e-9));
  CHECK(ends[2] == Approx(1e-3).epsilon(1e-9));
  check_busy(busy, {2, 2, 1}); // the third fills its spine's trunk alone (25 GB/s NIC, 6.25 GB/s trunk)
}

// Adaptive: all three spread over both spines, 12.5 GB/s shared three ways: 1.5 ms.
TEST_CASE("routing: adaptive spreads three transfers between two leaves over every spine")
{
  std::vector<Network::Busy> busy;
  for (double end : three_transfers("adaptive", colliding(), &busy))
    CHECK(end == Approx(1.5e-3).epsilon(1e-9));
  check_busy(busy, {3, 3, 3});
}

// Holders one leaf away. Each step's query (147,456 B, one thread block: 25 GB/s) and answer cross
// the two leaves' trunks. Adaptive: a leaf's uplinks carry 1.6 TB/s, far above 16 x 25 GB/s, so the
// step only gains what the profile says a spine hop costs: its ib-spine probe is 16 us where
// ib-same-leaf's is 15.5 us, paid once per exchange (the holder's answer pays none under
// collapsed_response), and neither path's latency exceeds the probe's own measured path
// (wire_latency 3.53 and 3.99 us: the same-leaf and spine paths of this preset exactly). Pinned:
// the 16 queries share one 100 GB/s trunk, 6.25 GB/s each, so the query alone takes 147,456 B x
// (1 / 6.25 - 1 / 25) GB/s^-1 = 17.7 us longer.
TEST_CASE("routing: holders one leaf away cost a routed step only the spine hop under adaptive routing")
{
  const double near = routed_step("adaptive", "node2-3");
  CHECK(routed_step("adaptive", "node4-5") == Approx(near + 0.5e-6).epsilon(0).margin(1e-12)); // to a picosecond
  CHECK(routed_step("pinned", "node2-3") == Approx(near).epsilon(1e-12));
  CHECK(routed_step("pinned", "node4-5") > near + 0.5e-6 + 147456 * (1 / 6.25e9 - 1 / 25e9));
}
