// The engine's parts on their own: the holder's processor sharing, the copy-stream pool, the LRU
// cache, the network's re-solves and its end-date heap, each against a hand-computed answer.
#include "calibrate/profile.hpp"
#include "sim/engine/cache.hpp"
#include "sim/engine/clock.hpp"
#include "sim/engine/compute.hpp"
#include "sim/engine/end_heap.hpp"
#include "sim/engine/maxmin.hpp"
#include "sim/engine/network.hpp"
#include "sim/engine/own_compute.hpp"

#include "sim/core/resources.hpp"

#include <catch2/catch.hpp>

#include <simgrid/s4u/Engine.hpp>

#include <limits>
#include <map>
#include <random>

using namespace xattn;
using namespace xattn::sim::engine;

namespace
{
std::unique_ptr<simgrid::s4u::Engine> make_engine()
{
  static int argc = 2;
  static const char* argv[] = {"test", "--log=root.thresh:critical", nullptr};
  auto e = std::make_unique<simgrid::s4u::Engine>(&argc, const_cast<char**>(argv));
  return e;
}

// Timers need a platform to run on: one host.
void one_host()
{
  auto* zone = simgrid::s4u::create_full_zone("z");
  zone->create_host("h", 1e9);
  zone->seal();
}
} // namespace

// The testbed's platform as the engine builds it (dispatch caps, copy-engine endpoints, no
// SimGrid latency) and a fast-path network over it.
struct TestNetwork {
  std::unique_ptr<simgrid::s4u::Engine> engine = make_engine();
  topo::Topology topo = topo::load_topology(*core::resolve_preset("testbed-ndr200", "topologies"));
  calibrate::Profile prof = calibrate::load_profile("h100-ndr200-ibgda");
  topo::Platform platform;
  std::unique_ptr<Network> net;
  TestNetwork()
  {
    topo::HostSpec spec;
    spec.dispatch = {core::BytesPerSec(25e9), core::BytesPerSec(20e9), core::BytesPerSec(25e9)};
    spec.copy_engine_hosts = true;
    platform = topo::build_platform(topo, *engine, spec);
    for (auto* l : platform.links)
      l->set_latency(0);
    net = std::make_unique<Network>(topo, platform, true);
  }
};

// One thread block's flow at 25 GB/s (the platform's dispatch cap above), written out here.
sim::Flow one_block()
{
  return {core::BytesPerSec(25e9), 1.0, false, 1};
}

TEST_CASE("engine parts: a holder runs its kernels at full speed while their shares fit, then shares")
{
  auto e = make_engine();
  one_host();
  // Three kernels of 1 s, each taking half the GPU, at t = 0: their shares sum to 1.5, so each runs
  // at 1 / 1.5 = 2/3 speed, and all three finish at 1.5 s.
  ComputeUnit gpu;
  std::vector<double> done;
  after(0.0, [&] {
    for (int i = 0; i < 3; ++i)
      gpu.submit(1.0, 0.5, [&] { done.push_back(now()); });
  });
  // A fourth kernel of 0.5 s alone later runs at full speed.
  after(10.0, [&] { gpu.submit(0.5, 0.5, [&] { done.push_back(now()); }); });
  e->run();
  REQUIRE(done.size() == 4);
  CHECK(done[0] == Approx(1.5));
  CHECK(done[2] == Approx(1.5));
  CHECK(done[3] == Approx(10.5));
  CHECK(gpu.stats().max_concurrent == 3);
  CHECK(gpu.stats().delay_s == Approx(3 * 0.5));
  CHECK(gpu.stats().gpu_s == Approx(3 * 0.5 + 0.25));
}

TEST_CASE("engine parts: a GPU's own kernels run one after another, alone or on the GPU it shares with calls")
{
  auto e = make_engine();
  one_host();
  // Alone: 3 s then 2 s, queued together at t = 0, end at 3 and 5 s, and never wait for a call.
  OwnCompute alone;
  // Sharing: the same two on a GPU that also runs a routed kernel of 2 s taking half of it, from
  // t = 0. The first own kernel fills the GPU: shares 1.5, both at 2/3 speed; the routed one ends
  // at 3 s (its 2 s of work), the own one has done 2 of its 3 s then and ends alone at 4 s, 1 s
  // late: the routed work times its share (2 x 0.5). The second starts then and ends at 6 s.
  ComputeUnit gpu;
  OwnCompute shared(&gpu);
  std::vector<double> ends_alone, ends_shared;
  double routed = 0;
  after(0.0, [&] {
    alone.run(3.0, [&] { ends_alone.push_back(now()); });
    alone.run(2.0, [&] { ends_alone.push_back(now()); });
    shared.run(3.0, [&] { ends_shared.push_back(now()); });
    shared.run(2.0, [&] { ends_shared.push_back(now()); });
    gpu.submit(2.0, 0.5, [&] { routed = now(); });
  });
  // Three more of 1 s across two alone ranks, one of them still busy until 7 s: both start at
  // 7 s, in lockstep, and the step goes on at 8 s.
  std::vector<OwnCompute> ranks(2);
  double together = 0, start = 0;
  after(5.0, [&] {
    ranks[0].run(2.0, [] {});
    start = OwnCompute::together_start(ranks);
    OwnCompute::run_together(ranks, 1.0, [&] { together = now(); });
  });
  e->run();
  REQUIRE(ends_alone.size() == 2);
  CHECK(ends_alone[0] == Approx(3.0));
  CHECK(ends_alone[1] == Approx(5.0));
  CHECK(alone.busy() == Approx(5.0));
  CHECK(alone.delay() == 0);
  REQUIRE(ends_shared.size() == 2);
  CHECK(routed == Approx(3.0));
  CHECK(ends_shared[0] == Approx(4.0));
  CHECK(ends_shared[1] == Approx(6.0));
  CHECK(shared.delay() == Approx(1.0));
  CHECK(shared.busy() == Approx(5.0));
  CHECK(gpu.stats().delay_s == Approx(1.0 + 1.0)); // the routed kernel's 1 s and the own one's
  CHECK(start == Approx(7.0));
  CHECK(together == Approx(8.0));
  CHECK(ranks[1].busy() == Approx(1.0));
}

TEST_CASE("engine parts: what a policy reads of a holder's load: its kernels' slowdown, its copy streams' queue")
{
  auto e = make_engine();
  one_host();
  ComputeUnit gpu;
  StreamPool streams(2);
  std::vector<double> seen;
  after(0.0, [&] {
    seen.push_back(gpu.slowdown(0.25)); // idle: it has the GPU to itself
    gpu.submit(1.0, 0.5, [] {});
    gpu.submit(1.0, 0.5, [] {});
    seen.push_back(gpu.slowdown(0.25)); // shares 1 + 0.25: 1.25 times slower
    seen.push_back(streams.ahead());    // both streams free
    streams.acquire([] {});
    seen.push_back(streams.ahead());  // one free
    seen.push_back(streams.ahead(1)); // after one more planned: none free, 1 copy ahead over 2 streams
    streams.acquire([] {});
    streams.acquire([] {});           // waits
    seen.push_back(streams.ahead());  // 2 copying + 1 waiting: 2 ahead of a new one, over 2 streams
    seen.push_back(streams.ahead(2)); // and 2 more planned: 4 over 2
  });
  e->run();
  CHECK(seen == std::vector<double>{1.0, 1.25, 0.0, 0.0, 0.5, 1.0, 2.0});
}

TEST_CASE("engine parts: sixteen kernels that each fill an eighth of the SMs take twice one's time")
{
  auto e = make_engine();
  one_host();
  // Alone, a kernel of 1 ms on 1/8 of the SMs takes 1 ms. Sixteen at once ask for 16/8 = 2 GPUs:
  // each gets half its speed and all end at 2 ms, the GPU busy 2 ms for 2 ms of its time.
  ComputeUnit gpu;
  double alone = 0;
  std::vector<double> done;
  after(0.0, [&] {
    const double t0 = now();
    gpu.submit(1e-3, 1.0 / 8, [&, t0] { alone = now() - t0; });
  });
  after(1.0, [&] {
    const double t0 = now();
    for (int i = 0; i < 16; ++i)
      gpu.submit(1e-3, 1.0 / 8, [&, t0] { done.push_back(now() - t0); });
  });
  e->run();
  REQUIRE(done.size() == 16);
  CHECK(alone == Approx(1e-3));
  for (double d : done)
    CHECK(d == Approx(2 * 1e-3));
  CHECK(gpu.stats().gpu_s == Approx(17 * 1e-3 / 8));
  CHECK(gpu.stats().busy_s == Approx(3e-3));
}

TEST_CASE("engine parts: kernels arriving mid-way slow the running ones down")
{
  auto e = make_engine();
  one_host();
  ComputeUnit gpu;
  double a = 0, b = 0;
  after(0.0, [&] { gpu.submit(1.0, 1.0, [&] { a = now(); }); });
  // At 0.5 s the first has 0.5 s left; both then run at half speed: the first ends at 1.5 s, the
  // second has done 0.5 of its 1.0 s then and finishes alone at 2.0 s.
  after(0.5, [&] { gpu.submit(1.0, 1.0, [&] { b = now(); }); });
  e->run();
  CHECK(a == Approx(1.5));
  CHECK(b == Approx(2.0));
}

TEST_CASE("engine parts: the copy-stream pool queues past K streams, first come first served")
{
  auto e = make_engine();
  one_host();
  StreamPool pool(2);
  std::vector<int> order;
  after(0.0, [&] {
    for (int i = 0; i < 4; ++i)
      pool.acquire([&, i] {
        order.push_back(i);
        after(1.0, [&] { pool.release(); });
      });
  });
  e->run();
  CHECK(order == std::vector<int>{0, 1, 2, 3});
  CHECK(pool.stats().max_queue == 2);
  CHECK(pool.stats().wait_s == Approx(2.0)); // copies 2 and 3 each waited 1 s
}

TEST_CASE("engine parts: the LRU cache evicts the least recently used entry")
{
  LruCache c(100);
  c.insert(1, 40);
  c.insert(2, 40);
  CHECK(c.touch(1)); // 1 is now the most recent
  c.insert(3, 40);   // evicts 2
  CHECK(c.contains(1));
  CHECK_FALSE(c.contains(2));
  CHECK(c.contains(3));
  CHECK(c.evictions() == 1);
  c.insert(4, 500); // larger than the budget: never kept
  CHECK_FALSE(c.contains(4));
  CHECK(c.used() == 80);
}

TEST_CASE("engine parts: the network re-solves the flows an event touches, and no others")
{
  TestNetwork tn;
  Network& net = *tn.net;
  const auto& topo = tn.topo;
  auto& e = tn.engine;
  const auto a = *topo.find_gpu("node0.gpu0"), b = *topo.find_gpu("node2.gpu0"), c = *topo.find_gpu("node2.gpu1");
  const auto d = *topo.find_gpu("node0.gpu1");
  double t1 = 0, t2 = 0, t3 = 0;
  after(0.0, [&] {
    // 25 MB over NVLink at one block: 1 ms, alone.
    net.transfer(a, d, 25e6, one_block(), 0.0, [&] { t1 = now(); });
    // 25 MB from node0.gpu0 to node2.gpu0 over IB: 1 ms alone (25 GB/s NIC).
    net.transfer(a, b, 25e6, one_block(), 0.0, [&] { t2 = now(); });
  });
  // At 0.5 ms a second IB transfer from the same GPU (same NIC) to node2.gpu1: the NIC is
  // shared from then on. The first had 12.5 MB left: both at 12.5 GB/s, it ends at 1.5 ms; the
  // second then has 12.5 MB left and runs alone at 25 GB/s until 2.0 ms.
  after(0.5e-3, [&] { net.transfer(a, c, 25e6, one_block(), 2e-3, [&] { t3 = now(); }); });
  e->run();
  CHECK(t1 == Approx(1e-3));
  CHECK(t2 == Approx(1.5e-3));
  CHECK(t3 == Approx(2.0e-3 + 2e-3)); // its 2 ms tail follows the last byte
  // The second IB transfer fills the NIC: the two on it are re-solved, the NVLink one is not.
  CHECK(net.stats().resolves == 2); // when the third starts, and when the second ends
  CHECK(net.stats().widest == 2);
  CHECK(net.stats().simgrid == 0);
  CHECK(net.stats().fluid == 3);
}

TEST_CASE("engine parts: a newcomer that fits in what a departure freed at the same instant still shares")
{
  TestNetwork tn;
  Network& net = *tn.net;
  const auto& topo = tn.topo;
  const auto a = *topo.find_gpu("node0.gpu0");
  const auto b0 = *topo.find_gpu("node2.gpu0"), b1 = *topo.find_gpu("node2.gpu1"), b2 = *topo.find_gpu("node2.gpu2");
  // node0.gpu0's 25 GB/s NIC carries A (1 block) and B (2 blocks, weight 2): A 25/3 GB/s, B 50/3
  // GB/s. B's 50/3 MB end at 1 ms, and C (1 block, capped at 15 GB/s) starts as B ends: it fits
  // in the 50/3 GB/s B frees, but A, held back by the NIC, takes its share: both at 12.5 GB/s.
  // C's 12.5 MB end at 2 ms; A has 25 - 25/3 - 12.5 = 25/6 MB left, alone at 25 GB/s: 2 + 1/6 ms.
  const sim::Flow one{core::BytesPerSec(25e9), 1.0, false, 1}, two{core::BytesPerSec(25e9), 1.0, false, 2},
      capped{core::BytesPerSec(15e9), 1.0, false, 1};
  double t_a = 0, t_c = 0;
  after(0.0, [&] {
    net.transfer(a, b0, 25e6, one, 0.0, [&] { t_a = now(); });
    net.transfer(a, b1, 50e6 / 3, two, 0.0, [&] { net.transfer(a, b2, 12.5e6, capped, 0.0, [&] { t_c = now(); }); });
  });
  tn.engine->run();
  CHECK(t_c == Approx(2e-3).epsilon(1e-9));
  CHECK(t_a == Approx(2e-3 + 1e-3 / 6).epsilon(1e-9));
}

TEST_CASE("engine parts: a link behind a narrower guard binds again once a flow bypasses the guard")
{
  // On the PCIe server a GPU's 32 GB/s PCIe link carries its IB traffic, which also crosses its
  // 25 GB/s NIC (the PCIe link's guard: while every flow on it crosses the NIC, it cannot fill
  // first and re-solves leave it out), and its PCIe traffic to the GPUs of its node, which does not.
  auto engine = make_engine();
  const topo::Topology topo = topo::load_topology(*core::resolve_preset("pcie-server", "topologies"));
  topo::HostSpec spec;
  spec.dispatch = {core::BytesPerSec(25e9), core::BytesPerSec(20e9), core::BytesPerSec(25e9)};
  spec.copy_engine_hosts = true;
  const topo::Platform platform = topo::build_platform(topo, *engine, spec);
  Network net(topo, platform, true);
  const auto a = *topo.find_gpu("node0.gpu0"), far = *topo.find_gpu("node1.gpu0"), near = *topo.find_gpu("node0.gpu1");
  const sim::Flow ib{core::BytesPerSec(25e9), 1.0, false, 1}, pcie{core::BytesPerSec(32e9), 1.0, false, 1};
  double t_ib = 0, t_pcie = 0, t_ib2 = 0;
  after(0.0, [&] {
    // 16 MB over IB (its route through the PCIe link comes first: the NIC becomes its guard) and
    // 32 MB to the GPU beside it over PCIe: the 32 GB/s PCIe link gives each 16 GB/s. The IB one
    // ends at 1 ms; the PCIe one has 16 MB left and runs alone at 32 GB/s until 1.5 ms.
    net.transfer(a, far, 16e6, ib, 0.0, [&] { t_ib = now(); });
    net.transfer(a, near, 32e6, pcie, 0.0, [&] { t_pcie = now(); });
  });
  // From 2 ms, two IB transfers of 25 MB alone on the NIC (the PCIe link guarded again): 12.5
  // GB/s each, both end at 4 ms.
  after(2e-3, [&] {
    net.transfer(a, far, 25e6, ib, 0.0, [&] { t_ib2 = now(); });
    net.transfer(a, far, 25e6, ib, 0.0, [] {});
  });
  engine->run();
  CHECK(t_ib == Approx(1e-3).epsilon(1e-9));
  CHECK(t_pcie == Approx(1.5e-3).epsilon(1e-9));
  CHECK(t_ib2 == Approx(4e-3).epsilon(1e-9));
}

TEST_CASE("engine parts: 80 transfers queued on one NIC are solved exactly, none by SimGrid")
{
  TestNetwork tn;
  Network& net = *tn.net;
  const auto& topo = tn.topo;
  auto& e = tn.engine;
  const auto a = *topo.find_gpu("node0.gpu0");
  // 80 transfers of 10 MB from one GPU to the GPUs of node 2 and 3, one every microsecond: they
  // all queue on node0.gpu0's 25 GB/s NIC, which never idles: the last byte leaves at
  // 80 x 10 MB / 25 GB/s = 32 ms after the first transfer starts.
  double last = 0;
  for (int i = 0; i < 80; ++i)
    after(i * 1e-6, [&, i] {
      net.transfer(a, static_cast<topo::GpuId>(16 + i % 16), 10e6, one_block(), 0.0,
                   [&] { last = std::max(last, now()); });
    });
  e->run();
  CHECK(last == Approx(80 * 10e6 / 25e9).epsilon(1e-6));
  CHECK(net.stats().simgrid == 0);
  CHECK(net.stats().fluid == 80);
  CHECK(net.stats().widest == 80);
  CHECK(net.stats().max_in_flight == 80);
}

TEST_CASE("engine parts: weighted max-min with caps")
{
  using Links = std::vector<std::uint32_t>;
  // Three flows on one 30-unit link: A capped at 5, B and C uncapped: A 5, B and C 12.5 each.
  MaxMinSolver one;
  const std::uint32_t link = one.add_link(30);
  for (double cap : {5.0, 1e9, 1e9})
    CHECK(one.add_flow(1, cap, Links{link}) == 0); // one group: they cross the same link
  auto rates = one.solve();
  CHECK(rates[0] == Approx(5));
  CHECK(rates[1] == Approx(12.5));
  CHECK(rates[2] == Approx(12.5));
  // Two links: D on both (cap 100), E on link 0, F on link 1; link 0 = 10, link 1 = 4:
  // link 1 binds D and F at 2 each; E takes 10 - 2 = 8 on link 0.
  MaxMinSolver two;
  const std::uint32_t l0 = two.add_link(10), l1 = two.add_link(4);
  CHECK(two.add_flow(1, 100, Links{l0, l1}) == 0);
  CHECK(two.add_flow(1, 100, Links{l0}) == 1);
  CHECK(two.add_flow(1, 100, Links{l1}) == 2);
  CHECK(two.add_flow(1, 100, Links{l1, l0}) == 3); // the same links in another order: its own group
  CHECK(two.groups() == 4);
  CHECK(two.group_members(0).size() == 1);
  // D and G on both, F on link 1: link 1 binds them at 4/3 each; E takes 10 - 8/3 on link 0.
  auto r2 = two.solve();
  CHECK(r2[0] == Approx(4.0 / 3));
  CHECK(r2[1] == Approx(10 - 8.0 / 3));
  CHECK(r2[2] == Approx(4.0 / 3));
  CHECK(r2[3] == Approx(4.0 / 3));
  // Weights: a flow of 3 thread blocks beside one of 1 on a 40-unit link gets 30 and 10; capped at
  // 24 (8 per block), it keeps 24 and the other takes the 16 left.
  one.clear();
  one.add_link(40);
  one.add_flow(3, 1e9, Links{0});
  one.add_flow(1, 1e9, Links{0});
  CHECK(one.solve()[0] == Approx(30));
  CHECK(one.solve()[1] == Approx(10));
  one.clear();
  one.add_link(40);
  one.add_flow(3, 24, Links{0});
  one.add_flow(1, 1e9, Links{0});
  CHECK(one.solve()[0] == Approx(24));
  CHECK(one.solve()[1] == Approx(16));
  // A group whose flows reach their caps at different levels: caps 2, 4 and 40 on a 30-unit link
  // with a fourth flow on it alone: 2, 4, then the other two share 24 at 12 each.
  one.clear();
  one.add_link(30);
  one.add_flow(1, 2, Links{0});
  one.add_flow(1, 40, Links{0});
  one.add_flow(1, 4, Links{0});
  one.add_flow(1, 1e9, Links{0});
  const auto& r3 = one.solve();
  CHECK(r3[0] == Approx(2));
  CHECK(r3[1] == Approx(12));
  CHECK(r3[2] == Approx(4));
  CHECK(r3[3] == Approx(12));
  CHECK(one.top(0) == Approx(12));
  CHECK(one.load(0) == Approx(30));
}

TEST_CASE("engine parts: the max-min solver finds a flow's group among many")
{
  // 40 links of 1 to 40 units, two flows on each alone (80 flows, 40 groups: more than the
  // solver's first table holds): each pair shares its link, whatever order the flows come in.
  MaxMinSolver solver;
  for (int k = 0; k < 40; ++k)
    solver.add_link(k + 1);
  std::vector<std::uint32_t> group(80);
  for (std::uint32_t i = 0; i < 80; ++i) {
    const std::uint32_t link = (i * 7) % 40; // 0, 7, 14, ... each link twice
    group[i] = solver.add_flow(1, 1e9, std::vector<std::uint32_t>{link});
  }
  CHECK(solver.groups() == 40);
  const auto& rates = solver.solve();
  for (std::uint32_t i = 0; i < 80; ++i) {
    const std::uint32_t link = (i * 7) % 40;
    CHECK(rates[i] == Approx((link + 1) / 2.0));
    CHECK(solver.group_links(group[i]).size() == 1);
    CHECK(solver.group_links(group[i])[0] == link);
    CHECK(solver.group_members(group[i]).size() == 2);
  }
  // Cleared, the same links make new groups from 0 again.
  solver.clear();
  solver.add_link(4);
  CHECK(solver.add_flow(1, 1e9, std::vector<std::uint32_t>{0}) == 0);
  CHECK(solver.groups() == 1);
}

TEST_CASE("engine parts: the end-date heap keeps the earliest on top through moves and removals")
{
  // Random sets, moves and removals against a plain map of dates, searched for its minimum.
  EndHeap heap;
  std::map<std::uint32_t, double> dates;
  std::mt19937 rng(7);
  for (int step = 0; step < 20000; ++step) {
    const auto id = static_cast<std::uint32_t>(rng() % 300);
    if (rng() % 3 == 0 && dates.count(id) != 0) {
      heap.erase(id);
      dates.erase(id);
    } else {
      const double date = static_cast<double>(rng() % 1000);
      heap.set(id, date);
      dates[id] = date;
    }
    REQUIRE(heap.size() == dates.size());
    if (dates.empty()) continue;
    double earliest = std::numeric_limits<double>::infinity();
    for (const auto& [k, d] : dates)
      earliest = std::min(earliest, d);
    REQUIRE(heap.top_date() == earliest);
    REQUIRE(dates.at(heap.top()) == earliest);
  }
}

TEST_CASE("engine parts: transfers that end together with equal tails finish in one date's order")
{
  // Two equal NVLink transfers from two GPUs end at one instant, each with a 1 ms tail. They finish
  // at one date, in the order they left, and what the first one's callback schedules for that date
  // runs after the second finished (as it would after two events scheduled when they left).
  TestNetwork tn;
  Network& net = *tn.net;
  const auto& topo = tn.topo;
  const auto a = *topo.find_gpu("node0.gpu0"), b = *topo.find_gpu("node0.gpu1");
  const auto c = *topo.find_gpu("node0.gpu2"), d = *topo.find_gpu("node0.gpu3");
  std::vector<std::string> order;
  std::vector<double> when;
  after(0.0, [&] {
    net.transfer(a, b, 25e6, one_block(), 1e-3, [&] {
      order.emplace_back("first");
      when.push_back(now());
      after(0.0, [&] { order.emplace_back("scheduled by the first"); });
    });
    net.transfer(c, d, 25e6, one_block(), 1e-3, [&] {
      order.emplace_back("second");
      when.push_back(now());
    });
  });
  tn.engine->run();
  REQUIRE(order.size() == 3);
  CHECK(order[2] == "scheduled by the first");
  CHECK(when[0] == when[1]);
  CHECK(when[0] == Approx(2e-3)); // 25 MB at one block's 25 GB/s, then the tail
}
