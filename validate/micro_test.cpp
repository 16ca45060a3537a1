// Micro-scenarios through the engine against hand computations from the paper prototype's
// published constants (16 us IBGDA probe, 25 GB/s NDR-200, one block per decode query, its kernel line).
#include "validate/micro.hpp"

#include "sim/core/error.hpp"

#include <catch2/catch.hpp>

using namespace xattn;
using namespace xattn::validate;

TEST_CASE("validate: a lone transfer micro-scenario is probe + bytes / link rate")
{
  MicroRunner run("h100-ndr200-ibgda");
  Micro m = transfer_micro(core::FabricClass::kIbSpine, 1e6, 0, 1, core::Transport::kGpu);
  MicroOutcome o = run.run(m);
  // 16 us probe + 1 MB at 25 GB/s (32 fetch blocks outrun the NDR-200 link).
  CHECK(o.at("fetch").step_mean_s == Approx(16e-6 + 1e6 / 25e9).epsilon(1e-6));
  CHECK(o.at("fetch").wire_bytes == 1e6);
  CHECK(o.invariants_ok);
}

TEST_CASE("validate: a routed decode call micro-scenario matches the hand-computed round trip")
{
  MicroRunner run("paper-prototype");
  Micro m;
  m.rows = 256, m.chunk_tokens = 2048;
  const double q = 256 * 1152.0, a = 256 * 1028.0;
  const double kernel = 2e-6 + 0.384e-9 * 2048 + 5.44e-12 * 2048 * 256;
  const double merge = 1e-6 + 0.5e-9 * 256;
  MicroOutcome o = run.run(m);
  CHECK(o.at("route").step_mean_s == Approx(16e-6 + q / 25e9 + kernel + a / 25e9 + merge).epsilon(1e-6));
  CHECK(o.at("route").wire_bytes == q + a);
}

TEST_CASE("validate: concurrent requesters share the holder's link in the engine")
{
  MicroRunner run("h100-ndr200-ibgda");
  Micro one = transfer_micro(core::FabricClass::kIbSameLeaf, 1e6, 0, 1, core::Transport::kGpu);
  Micro two = transfer_micro(core::FabricClass::kIbSameLeaf, 1e6, 0, 2, core::Transport::kGpu);
  const double t1 = run.run(one).at("fetch").step_mean_s;
  const double t2 = run.run(two).at("fetch").step_mean_s;
  // Two 1 MB flows out of one 25 GB/s port: each takes 80 us instead of 40 us.
  CHECK(t2 - t1 == Approx(40e-6).epsilon(1e-3));
}

TEST_CASE("validate: a user topology without the wanted GPU pair is bad input")
{
  MicroRunner run("h100-ndr200-ibgda", "dgx-h100");
  Micro m;
  m.fabric = core::FabricClass::kIbSpine;
  REQUIRE_THROWS_AS(run.run(m), core::InputError);
  m.fabric = core::FabricClass::kNvlink;
  CHECK(run.run(m).at("route").step_mean_s > 0);
}
