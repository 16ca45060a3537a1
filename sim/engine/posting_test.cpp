// Posting network messages: a CPU proxy posts one message at a time, thread blocks post in parallel
// (posting.hpp), by hand and in a routed fan-out.
#include "sim/engine/posting.hpp"
#include "sim/engine/test_util.hpp"

#include "sim/core/resources.hpp"
#include "topologies/test_topologies.hpp"

#include <fstream>
#include <sstream>

using namespace xattn;
using namespace xattn::sim::engine;

namespace
{

calibrate::Profile posting_profile(double proxy_post, int threads)
{
  calibrate::Profile p = calibrate::load_profile("h100-ndr200-ibgda");
  p.proxy_post = core::Seconds(proxy_post);
  p.proxy_threads = threads;
  return p;
}

// One requester (node0.gpu0 of ndr400-128) routing one query to each of `holders` holder GPUs on
// node1-8 (one 2,048-token chunk each), one decode step, h100-ndr200-ibgda with `dispatch` (lines
// of posting costs) in place of its own, and the KV traffic's `transport`.
double fan_out(int holders, const std::string& dispatch, const std::string& transport)
{
  // The profile's own posting costs replaced.
  const auto profile = test::edited_preset(test::fresh_dir("posting"), "h100-ndr200-ibgda", "calibrate/profiles",
                                           "dispatch:", dispatch, "  proxy_");
  std::ostringstream s;
  s << "name: fan-out\n"
    << "model: {name: m, layers: 1, heads: 128, kv_lora_rank: 512, rope_dim: 64}\n"
    << "profile: " << profile.string() << "\n"
    << "topology: ndr400-128\n"
    << "instances: {requesters: [node0.gpu0], holders: [node1-8]}\n"
    << "corpus: {chunk_tokens: 2048, placement: round-robin}\n"
    << "workload: {trace: trace.jsonl}\n"
    << "policies: [route]\n"
    << "engine: {route_protocol: absorbed, transport: " << transport << "}\n";
  return test::step_mean(test::run(s.str(), test::request(0, 0.0, 0, 0, 32 * holders, 1)), "route");
}

} // namespace

TEST_CASE("posting: a proxy thread posts one message at a time, thread blocks post in parallel")
{
  const topo::Topology t = topo::test::small(); // GPUs 0-3 node0, 4-7 node1 (same leaf), 8-15 leaf 1
  // One proxy thread of 2 us per post: three messages sent at 1 us leave at 1, 3 and 5 us (each
  // waits for the posts before it; its own is inside the probe); another GPU's proxy is its own;
  // an NVLink message is not posted to a NIC.
  Posting one(posting_profile(2e-6, 1), t);
  CHECK(one.priced(core::Transport::kProxy));
  CHECK_FALSE(one.priced(core::Transport::kGpu));
  CHECK(one.leave(0, 8, core::Transport::kProxy, 1e-6) == Approx(1e-6));
  CHECK(one.leave(0, 4, core::Transport::kProxy, 1e-6) == Approx(3e-6));
  CHECK(one.leave(0, 9, core::Transport::kProxy, 1e-6) == Approx(5e-6));
  CHECK(one.leave(1, 8, core::Transport::kProxy, 1e-6) == Approx(1e-6));
  CHECK(one.leave(0, 1, core::Transport::kProxy, 1e-6) == 1e-6);
  // Free again by 20 us: the next leaves at once.
  CHECK(one.leave(0, 8, core::Transport::kProxy, 20e-6) == Approx(20e-6));
  // Two threads: pairs leave together.
  Posting two(posting_profile(2e-6, 2), t);
  for (double expected : {0.0, 0.0, 2e-6, 2e-6, 4e-6})
    CHECK(two.leave(0, 8, core::Transport::kProxy, 0) == Approx(expected).margin(1e-15));
  // Device-initiated: each message's blocks post it, in parallel: every one leaves when sent.
  for (int k = 0; k < 4; ++k)
    CHECK(one.leave(2, 8, core::Transport::kGpu, 1e-6) == 1e-6);
  // No post priced: no queue.
  Posting none(posting_profile(0, 1), t);
  CHECK_FALSE(none.priced(core::Transport::kProxy));
  CHECK(none.leave(0, 8, core::Transport::kProxy, 1e-6) == 1e-6);
}

// The requester posts its N queries through its one proxy thread, P apart; each holder posts its
// one answer through its own, at once. With P = 10 and 20 us every query's 147 kB leaves the
// requester in 6 us (one thread block's 25 GB/s), before the next leaves, and each answer likewise:
// no two messages share a link, and the last query (posted after N - 1 others) and its answer end
// the step. So doubling P adds (N - 1) x 10 us (to 1e-7 of the step: the rates' sums round
// differently when the same flows run at other dates), nothing for one holder.
TEST_CASE("posting: a routed fan-out through a CPU proxy waits for one post per holder before it")
{
  for (int n : {1, 8, 64}) {
    INFO(n << " holders");
    const double p10 = fan_out(n, "  proxy_post: 10us\n", "proxy");
    const double p20 = fan_out(n, "  proxy_post: 20us\n", "proxy");
    CHECK(p20 == Approx(p10 + (n - 1) * 10e-6).epsilon(1e-7));
  }
}

// Device-initiated, the messages post from their own thread blocks, each in its probe: the proxy's
// posts cost nothing, whatever the fan-out.
TEST_CASE("posting: device-initiated messages do not queue behind a proxy")
{
  for (int n : {1, 8, 64}) {
    INFO(n << " holders");
    CHECK(fan_out(n, "  proxy_post: 10us\n", "gpu") == fan_out(n, "  proxy_post: 0s\n", "gpu"));
  }
}
