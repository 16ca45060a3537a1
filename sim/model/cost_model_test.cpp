#include "sim/model/cost_model.hpp"
#include "sim/model/pricing.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace xattn;
using core::FabricClass;

namespace
{
// A profile written out in the test, so that expected values are computed by hand here and not
// read back from the shipped YAML.
calibrate::Profile hand_profile()
{
  calibrate::Profile p;
  for (FabricClass f : {FabricClass::kNvlink, FabricClass::kPcie, FabricClass::kIbSameLeaf, FabricClass::kIbSpine})
    p.fabric(f) = {.probe_gpu = core::Seconds(16e-6),
                   .probe_proxy = core::Seconds(26.72e-6),
                   .block_rate = core::BytesPerSec(25e9),
                   .bandwidth = core::BytesPerSec(25e9),
                   .wire_latency = core::Seconds(0),
                   .nominal_bandwidth = core::BytesPerSec(0),
                   .curve = {}};
  p.fabric(FabricClass::kNvlink).bandwidth = core::BytesPerSec(450e9);
  p.fabric(FabricClass::kNvlink).probe_gpu = core::Seconds(8e-6);
  p.fabric(FabricClass::kSameGpu) = {.probe_gpu = core::Seconds(0),
                                     .probe_proxy = core::Seconds(0),
                                     .block_rate = core::BytesPerSec(1e30),
                                     .bandwidth = core::BytesPerSec(1e30),
                                     .wire_latency = core::Seconds(0),
                                     .nominal_bandwidth = core::BytesPerSec(0),
                                     .curve = {}};
  p.route_blocks = 1;
  p.fetch_blocks = 32;
  p.kernel_fixed = core::Seconds(2e-6);
  p.kernel_per_token = core::Seconds(0.384e-9);
  p.kernel_per_token_row = core::Seconds(5.44e-12);
  p.merge_fixed = core::Seconds(1e-6);
  p.merge_per_row = core::Seconds(0.5e-9);
  p.splice_fixed = core::Seconds(3e-3);
  p.splice_per_token = core::Seconds(0.17e-9);
  p.prefill_tokens_per_s = 5000;
  p.compute_concurrency = 8;
  p.measured = {.kernel = true, .merge = true, .splice = true, .prefill = true, .concurrency = true};
  // An H100's peaks, for the one kernel nothing measured: the DSA indexer's scan.
  p.gpu = {.sm_count = 132,
           .hbm = core::BytesPerSec(3.35e12),
           .bf16 = core::FlopsPerSec(989e12),
           .fp8 = core::FlopsPerSec(1979e12),
           .memory_efficiency = 0.895,
           .attention_efficiency = 0.586,
           .gemm_efficiency = 0.768,
           .launch = core::Seconds(3e-6)};
  return p;
}

sim::ModelSpec dsv3()
{
  sim::ModelSpec m;
  m.name = "dsv3";
  m.layers = 61;
  m.heads = 128;
  m.kv_lora_rank = 512;
  m.rope_dim = 64;
  return m;
}
} // namespace

TEST_CASE("cost model: route round trip at decode, M_q = 256 over IB")
{
  auto p = hand_profile();
  sim::CallShape s; // 256 rows, 2048 tokens, one holder
  sim::CallCost c = sim::price_call(dsv3(), p, s, sim::nominal_path(p, FabricClass::kIbSpine));
  // probe 16 us; query 256 x 1152 B at 25 GB/s; kernel 2 us + 2048 x 0.384 ns + 2048 x 256 x 5.44 ps;
  // answer 256 x 1028 B at 25 GB/s; merge 1 us + 256 x 0.5 ns.
  CHECK(c.route.probe.value() == Approx(16e-6));
  CHECK(c.route.transfer.value() == Approx(294912.0 / 25e9));
  CHECK(c.route.compute.value() == Approx(2e-6 + 2048 * 0.384e-9 + 2048 * 256 * 5.44e-12));
  CHECK(c.route.ret.value() == Approx(263168.0 / 25e9));
  CHECK(c.route.merge.value() == Approx(1e-6 + 256 * 0.5e-9));
  CHECK(c.route.total().value() == Approx(45.0897e-6).epsilon(1e-4));
  // The paper's 31-48 us range.
  CHECK(c.route.total().value() > 31e-6);
  CHECK(c.route.total().value() < 48e-6);
}

TEST_CASE("cost model: wire bytes, routing moves 76.3% fewer than fetch")
{
  auto p = hand_profile();
  sim::CallCost c = sim::price_call(dsv3(), p, sim::CallShape{}, sim::nominal_path(p, FabricClass::kIbSpine));
  CHECK(c.route_wire.value() == 558080.0);
  CHECK(c.fetch_wire.value() == 2359296.0);
  CHECK(1.0 - c.route_wire / c.fetch_wire == Approx(0.763).margin(0.0005));
}

TEST_CASE("cost model: fetch pays the splice and is 60-100x slower than route at decode")
{
  auto p = hand_profile();
  sim::CallCost c = sim::price_call(dsv3(), p, sim::CallShape{}, sim::nominal_path(p, FabricClass::kIbSpine));
  CHECK(c.fetch.splice.value() == Approx(3e-3 + 2048 * 0.17e-9));
  // The fetch is link-bound: 32 blocks x 25 GB/s is capped by the 25 GB/s NIC.
  CHECK(c.fetch.transfer.value() == Approx(2359296.0 / 25e9));
  CHECK(c.fetch.total().value() == Approx(16e-6 + 2359296.0 / 25e9 + 3e-3 + 2048 * 0.17e-9 + c.route.compute.value()));
  double ratio = c.fetch.total() / c.route.total();
  CHECK(ratio > 60);
  CHECK(ratio < 100);
}

TEST_CASE("cost model: over eight tensor-parallel ranks a fetch moves an eighth per rank, then NVLink")
{
  auto p = hand_profile();
  sim::CallShape s;
  s.gpus = 8;
  const sim::CallCost one = sim::price_call(dsv3(), p, sim::CallShape{}, sim::nominal_path(p, FabricClass::kIbSpine));
  const sim::CallCost c = sim::price_call(dsv3(), p, s, sim::nominal_path(p, FabricClass::kIbSpine));
  // 2,048 tokens x 1,152 B = 2,359,296 B in all over the scale-out fabric, once: 294,912 B a rank
  // at 25 GB/s; then each rank receives its 7 peers' shares over its 450 GB/s NVLink, after the
  // NVLink probe (8 us). The splice still covers every token, on every rank.
  CHECK(c.fetch_wire.value() == Approx(one.fetch_wire.value()));
  CHECK(c.fetch.transfer.value() == Approx(294912.0 / 25e9 + 8e-6 + 7 * 294912.0 / 450e9));
  CHECK(c.fetch.splice.value() == Approx(one.fetch.splice.value()));
  CHECK(c.fetch.transfer < one.fetch.transfer);
}

TEST_CASE("cost model: an attention kernel's query rows fill whole 64-row tiles")
{
  const calibrate::Profile p = calibrate::load_profile("h100-ndr200-ibgda");
  // 16 rows (128 heads over tp 8) over 4,096 tokens: one 64-row tile by 64 tiles of 64 tokens,
  // 64 of the H100's 132 SMs, as many as 64 rows take; 128 rows take twice that.
  const auto k16 = sim::attention_kernel(dsv3(), p, 1, 16, 4096, 16 * 4096);
  CHECK(k16.share == Approx(64.0 / 132));
  CHECK(sim::attention_kernel(dsv3(), p, 1, 64, 4096, 64 * 4096).share == Approx(64.0 / 132));
  CHECK(sim::attention_kernel(dsv3(), p, 1, 128, 4096, 128 * 4096).share == Approx(128.0 / 132));
  // Two requests of 16 rows over 2,048 tokens each: the same tiles as one over 4,096.
  CHECK(sim::attention_kernel(dsv3(), p, 1, 32, 4096, 16 * 4096).share == Approx(64.0 / 132));
}

TEST_CASE("cost model: single-block dispatch makes NVLink perform like IB at decode")
{
  auto p = hand_profile();
  p.fabric(FabricClass::kNvlink).probe_gpu = core::Seconds(16e-6); // same probe: compare transfers
  sim::CallShape s;
  auto nv = sim::price_call(dsv3(), p, s, sim::nominal_path(p, FabricClass::kNvlink));
  auto ib = sim::price_call(dsv3(), p, s, sim::nominal_path(p, FabricClass::kIbSpine));
  CHECK(nv.route.transfer.value() == Approx(ib.route.transfer.value()));
  // Many blocks (a large batch) reach NVLink's 450 GB/s: 18x the IB rate.
  p.route_blocks = 64;
  s.rows = 16384;
  nv = sim::price_call(dsv3(), p, s, sim::nominal_path(p, FabricClass::kNvlink));
  ib = sim::price_call(dsv3(), p, s, sim::nominal_path(p, FabricClass::kIbSpine));
  CHECK(ib.route.transfer / nv.route.transfer == Approx(18.0));
}

TEST_CASE("cost model: local re-prefill is priced per layer")
{
  auto p = hand_profile();
  auto c = sim::price_call(dsv3(), p, sim::CallShape{}, sim::nominal_path(p, FabricClass::kIbSpine));
  CHECK(c.local.prefill.value() == Approx(2048.0 / 5000.0 / 61.0));
  CHECK(c.local.total().value() == Approx(c.local.prefill.value() + c.route.compute.value()));
}

TEST_CASE("predicate: route at no reuse, fetch from the break-even on")
{
  auto p = hand_profile();
  auto c = sim::price_call(dsv3(), p, sim::CallShape{}, sim::nominal_path(p, FabricClass::kIbSpine));
  double r = c.route.total().value(), f = c.fetch.total().value(), a = c.reuse.value();
  double n = (f - r) / (r - a); // (1 + n) r = f + n a
  sim::Decision d0 = sim::decide(c, 0);
  CHECK(d0.choice == sim::Primitive::kRoute);
  CHECK(d0.break_even_reuse == Approx(n));
  CHECK(n > 70);
  CHECK(n < 90);
  CHECK(sim::decide(c, std::floor(n)).choice == sim::Primitive::kRoute);
  CHECK(sim::decide(c, std::ceil(n)).choice == sim::Primitive::kFetch);
  CHECK(sim::decide(c, 1e6).choice == sim::Primitive::kFetch);
}

TEST_CASE("predicate: cheap re-prefill makes local win, fetch never breaks even when route is free")
{
  auto p = hand_profile();
  p.prefill_tokens_per_s = 1e9;
  auto c = sim::price_call(dsv3(), p, sim::CallShape{}, sim::nominal_path(p, FabricClass::kIbSpine));
  CHECK(sim::decide(c, 10).choice == sim::Primitive::kLocal);
  // Same GPU: route is only compute and merge, always above local attention by the merge, so
  // fetch (which has nothing to move but the splice) breaks even late but does break even.
  auto same = sim::price_call(dsv3(), hand_profile(), sim::CallShape{}, sim::nominal_path(p, FabricClass::kSameGpu));
  CHECK(same.route.probe.value() == 0);
  CHECK(same.route.transfer.value() == 0);
  CHECK(same.fetch.transfer.value() == 0);
  // A route that costs less than attending locally never loses to fetch.
  sim::CallCost cheap = c;
  cheap.route = sim::Breakdown{};
  cheap.route.compute = core::Seconds(c.reuse.value() * 0.5);
  CHECK(std::isinf(sim::decide(cheap, 0).break_even_reuse));
}

namespace
{
/// A DSA top-2048 call (256 rows) spread over `holders`, one contiguous run each, on the IB spine
/// path with `lanes` NICs to spread them over.
sim::CallCost sparse_call(int holders, int lanes = 1)
{
  auto m = dsv3();
  m.index = {2048, 64, 128};
  auto path = sim::nominal_path(hand_profile(), FabricClass::kIbSpine);
  path.lanes = lanes;
  sim::CallShape s{.rows = 256, .tokens = 2048, .holders = holders, .runs = holders, .sparse = true};
  return sim::price_call(m, hand_profile(), s, path);
}
/// A routed query under selection: 256 x 1152 B rows and the 4 B ids of the holder's share of the top-2048.
double sparse_query(int holders)
{
  return 294912.0 + 4.0 * 2048 / holders;
}
} // namespace

TEST_CASE("cost model: scattered gather grows with holders, route stays an order of magnitude below")
{
  auto c1 = sparse_call(1);
  auto c4 = sparse_call(4);
  // Four splices instead of one; the same bytes through the same NIC.
  CHECK(c4.fetch.splice.value() == Approx(4 * 3e-3 + 2048 * 0.17e-9));
  CHECK(c4.fetch.transfer.value() == Approx(c1.fetch.transfer.value()));
  // Four queries share the requester's 25 GB/s link.
  CHECK(c4.route.transfer.value() == Approx(4 * sparse_query(4) / 25e9));
  CHECK(c4.route.compute.value() == Approx(2e-6 + 512 * 0.384e-9 + 512 * 256 * 5.44e-12));
  CHECK(c4.fetch.total() / c1.fetch.total() > 3.5);
  CHECK(c4.route.total() / c1.route.total() < 3.0);
  CHECK(c4.fetch.total() / c4.route.total() > 10.0);
  // Both first select: two decoded tokens' 8 KiB indexer queries out (16 us probe), the holder's
  // scan of 2 x 2048 index keys of 132 B (memory-bound: 557,056 B at 3.35 TB/s x 0.895, on 64
  // tiles of the 132 SMs, plus a 3 us launch), 2 x 2048 candidates of 8 B back.
  const double scan = 3e-6 + (4096 * 132 + 2 * 8192) / (3.35e12 * 0.895) * 132 / 64;
  CHECK(c1.fetch.index.value() == Approx(16e-6 + 16384 / 25e9 + scan + 32768 / 25e9));
  CHECK(c1.route.index.value() == Approx(c1.fetch.index.value()));
  CHECK(c1.reuse.value() == Approx(c1.fetch.compute.value() + c1.fetch.index.value()));
}

TEST_CASE("cost model: index keys on the requester: it scans the whole context itself, nothing crosses the wire")
{
  auto m = dsv3();
  m.index = {2048, 64, 128};
  const auto path = sim::nominal_path(hand_profile(), FabricClass::kIbSpine);
  sim::CallShape s{.rows = 256, .tokens = 2048, .holders = 4, .runs = 4, .sparse = true, .scanned = 32768};
  const sim::CallCost on_holders = sim::price_call(m, hand_profile(), s, path);
  s.index_on_requester = true;
  const sim::CallCost c = sim::price_call(m, hand_profile(), s, path);
  // Two decoded tokens each scan the 32,768 keys of 132 B (8 KiB indexer query each): 8,667,136 B
  // at 3.35 TB/s x 0.895, memory-bound (1.07 GFLOP at FP8 is 0.7 us), 1,024 tiles fill all 132 SMs.
  const double scan = 3e-6 + (2 * 32768 * 132 + 2 * 8192) / (3.35e12 * 0.895);
  CHECK(c.route.index.value() == Approx(scan));
  CHECK(c.fetch.index.value() == Approx(scan));
  CHECK(c.local.index.value() == Approx(scan));
  // Nothing of the selection on the wire: route's bytes are its queries (256 x 1152 B and the ids)
  // and answers (256 x 1028 B: the 512-dim latent output in fp16 and its fp32 log-sum-exp) to 4
  // holders.
  CHECK(c.route_wire.value() == Approx(4 * (sparse_query(4) + 256 * 1028.0)));
  CHECK(on_holders.route_wire.value() > c.route_wire.value());
  CHECK(c.route.transfer.value() == Approx(on_holders.route.transfer.value()));
}

TEST_CASE("cost model: a requester striping over its node's NICs keeps route flat over holders")
{
  auto c1 = sparse_call(1, 8);
  auto c8 = sparse_call(8, 8);
  // A holder per lane: each query and answer has a 25 GB/s NIC to itself.
  CHECK(c8.route.transfer.value() == Approx(sparse_query(8) / 25e9));
  CHECK(c8.route.ret.value() == Approx(c1.route.ret.value()));
  CHECK(c8.route.total() / c1.route.total() < 1.1);
  // Four lanes for eight holders: two share each lane.
  CHECK(sparse_call(8, 4).route.transfer.value() == Approx(2 * sparse_query(8) / 25e9));
  // Fetch still pays a splice per run: striping moves bytes faster, the gather penalty stays.
  CHECK(c8.fetch.total() / c1.fetch.total() > 3.5);
}

TEST_CASE("cost model: the proxy transport pays its own probe")
{
  auto p = hand_profile();
  sim::CallShape s;
  s.transport = core::Transport::kProxy;
  auto c = sim::price_call(dsv3(), p, s, sim::nominal_path(p, FabricClass::kIbSpine));
  CHECK(c.route.probe.value() == Approx(26.72e-6));
}

TEST_CASE("cost model: a topology path adds its wire latency to every transfer leg")
{
  auto p = hand_profile();
  sim::PathCost path{FabricClass::kIbSpine, core::BytesPerSec(25e9), core::Seconds(2e-6)};
  auto c = sim::price_call(dsv3(), p, sim::CallShape{}, path);
  auto c0 = sim::price_call(dsv3(), p, sim::CallShape{}, sim::nominal_path(p, FabricClass::kIbSpine));
  CHECK(c.route.total().value() == Approx(c0.route.total().value() + 4e-6));
  CHECK(c.fetch.total().value() == Approx(c0.fetch.total().value() + 2e-6));
  // Breakdowns sum to their totals; scaling by layers scales every term.
  auto b = c.route.scaled(61);
  CHECK(b.total().value() == Approx(61 * c.route.total().value()));
}

TEST_CASE("cost model: the probe's own wire latency is not counted twice on a topology path")
{
  auto p = hand_profile();
  p.fabric(FabricClass::kIbSpine).wire_latency = core::Seconds(4e-6);
  auto nominal = sim::price_call(dsv3(), p, sim::CallShape{}, sim::nominal_path(p, FabricClass::kIbSpine));
  // The probe was measured over 4 us of wire each way: the nominal path adds nothing to it...
  CHECK(nominal.route.transfer.value() == Approx(294912.0 / 25e9));
  // ...and a path of 5 us adds the 1 us beyond it to each leg.
  sim::PathCost longer{FabricClass::kIbSpine, core::BytesPerSec(25e9), core::Seconds(5e-6)};
  auto c = sim::price_call(dsv3(), p, sim::CallShape{}, longer);
  CHECK(c.route.total().value() == Approx(nominal.route.total().value() + 2e-6));
}
