// Contention: SimGrid's max-min sharing where flows meet, hand-computed answers; the fused fast
// path against all-SimGrid runs; determinism by seed.
#include "sim/core/resources.hpp"
#include "sim/engine/test_util.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

using namespace xattn;
using namespace xattn::sim::engine::test;

namespace
{

// A thin uplink: oversubscription 8 makes each leaf-spine trunk 2 nodes x 8 NICs x 25 GB/s / 8 =
// 50 GB/s.
constexpr int kThinUplink = 8;

// N requests at t = 0, request i on requester node0.gpu<i> with its own chunk on holder
// node2.gpu<j> (a distinct holder each): every flow crosses the leaf0 -> spine trunk, nothing else
// is shared.
std::string scenario(int n, const std::string& policy, int layers)
{
  std::ostringstream s;
  s << "name: congestion\n"
    << "model: {name: m, layers: " << layers << ", heads: 128, kv_lora_rank: 512, rope_dim: 64}\n"
    << two_leaf_topology(kThinUplink) << "instances: {requesters: [node0.gpu0-" << (n - 1) << "], holders: [node2.gpu0-"
    << (n - 1) << "]}\n"
    << "corpus: {chunk_tokens: 2048, placement: round-robin}\n"
    << "workload: {trace: trace.jsonl}\n"
    << "policies: [" << policy << "]\n"
    << "engine: {fast_path: false, route_protocol: absorbed}\n";
  return s.str();
}

std::string trace(int n, int steps)
{
  std::string t;
  for (int i = 0; i < n; ++i)
    t += request(i, 0.0, i, 32 * i, 32, steps);
  return t;
}

} // namespace

TEST_CASE("engine: concurrent fetches through one uplink share it max-min fairly")
{
  // Each fetch moves 2048 tokens x 1152 B x 61 layers = 143,917,056 B over a path whose NICs run
  // at 25 GB/s; n of them share the 50 GB/s trunk: each gets min(25, 50 / n) GB/s.
  const double bytes = 2048.0 * 1152.0 * 61.0;
  const double base = step_mean(run(scenario(1, "fetch", 61), trace(1, 1)), "fetch");
  for (int n : {2, 4, 8}) {
    INFO("n = " << n);
    const double share = std::min(25e9, 50e9 / n);
    const double step = step_mean(run(scenario(n, "fetch", 61), trace(n, 1)), "fetch");
    // Within 1e-5: the step check's tolerance (iteration.cpp).
    CHECK(step - base == Approx(bytes / share - bytes / 25e9).epsilon(1e-5).margin(1e-9));
  }
}

TEST_CASE("engine: small routed messages stay at their idle latency until the uplink saturates")
{
  // One layer: each query leg is 128 rows x 1152 B = 147,456 B at one thread block (25 GB/s).
  // Two flows fill the 50 GB/s trunk exactly and are not slowed; at four each gets 12.5 GB/s.
  const double idle = step_mean(run(scenario(1, "route", 1), trace(1, 1)), "route");
  const double two = step_mean(run(scenario(2, "route", 1), trace(2, 1)), "route");
  const double four = step_mean(run(scenario(4, "route", 1), trace(4, 1)), "route");
  CHECK(two == Approx(idle).epsilon(1e-9));
  // Queries (147,456 B) and then answers (128 x 1028 B = 131,584 B) cross the trunks four at a time.
  CHECK(four - idle == Approx((147456.0 + 131584.0) * (1 / 12.5e9 - 1 / 25e9)).epsilon(1e-5));
}

TEST_CASE("engine: the fused fast path gives SimGrid's answer")
{
  // Uncontended and contended runs, with and without the fast path: the same times.
  for (int n : {1, 2, 4, 8}) {
    INFO("n = " << n);
    nlohmann::json slow = run(scenario(n, "route, fetch", 61), trace(n, 3));
    nlohmann::json fast = run(scenario(n, "route, fetch", 61), trace(n, 3), {"engine.fast_path=true"});
    for (const char* policy : {"route", "fetch"}) {
      for (const char* q : {"mean", "max"})
        CHECK(fast["policies"][policy]["step_latency_s"][q].get<double>() ==
              Approx(slow["policies"][policy]["step_latency_s"][q].get<double>()).epsilon(1e-9));
      CHECK(fast["policies"][policy]["wire_bytes"] == slow["policies"][policy]["wire_bytes"]);
    }
    // It did take the fast path where nothing was shared.
    if (n == 1) CHECK(fast["policies"]["route"]["engine"]["fluid"].get<int>() > 0);
  }
}

TEST_CASE("engine: the fast path stays within 1% of all-SimGrid on a loaded agentic run")
{
  // Batching makes a loaded run chaotic: a last-bit difference in one completion can regroup a
  // later batch, so exact equality is not expected; the statistics must agree.
  const std::vector<std::string> sets{"workload.generator.requests=60"};
  auto q = core::find_data("scenarios/quickstart.yaml");
  REQUIRE(q);
  auto dir = fresh_dir("fast");
  auto run_q = [&](bool fast) {
    auto s = sets;
    s.push_back(std::string("engine.fast_path=") + (fast ? "true" : "false"));
    s.push_back("policies=[route, predicate]");
    sim::engine::Scenario sc = sim::engine::load_scenario(q->string(), s);
    sim::engine::RunOptions opt;
    opt.out_dir = (dir / (fast ? "fast" : "slow")).string();
    opt.progress = false;
    return sim::engine::run_scenario(sc, opt).summary;
  };
  nlohmann::json fast = run_q(true), slow = run_q(false);
  for (const char* policy : {"route", "predicate"})
    CHECK(step_mean(fast, policy) == Approx(step_mean(slow, policy)).epsilon(0.01));
}

TEST_CASE("engine: the same seed gives byte-identical summaries, another seed does not")
{
  auto q = core::find_data("scenarios/quickstart.yaml");
  REQUIRE(q);
  auto dir = fresh_dir("seed");
  auto summary = [&](const std::string& tag, int seed) {
    sim::engine::Scenario sc = sim::engine::load_scenario(
        q->string(), {"workload.generator.requests=40", "policies=[route, predicate]", "seed=" + std::to_string(seed)});
    sim::engine::RunOptions opt;
    opt.out_dir = (dir / tag).string();
    opt.run_id = "seed-test"; // the same id: summaries differ only by what ran
    opt.progress = false;
    sim::engine::run_scenario(sc, opt);
    std::ifstream in(dir / tag / "summary.json");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  const std::string a = summary("a", 1), b = summary("b", 1), c = summary("c", 2);
  CHECK(a == b);
  auto without_seed = [](std::string s) {
    nlohmann::json j = nlohmann::json::parse(s);
    j.erase("seed");
    return j.dump();
  };
  CHECK(without_seed(a) != without_seed(c));
}

TEST_CASE("engine: answers converging on one requester at different times match SimGrid")
{
  // One request whose context spans four chunks on four holders with different token counts:
  // the kernels end at different times, and the four answers overlap on the requester's NIC.
  std::string blocks;
  std::string t = "";
  // Chunks of 32 blocks; the request holds 32 + 24 + 16 + 8 blocks of them.
  std::string line = "{\"id\":0,\"t\":0,\"session\":0,\"agent\":0,\"parent\":null,\"block_tokens\":64,\"blocks\":[";
  bool first = true;
  for (int c = 0; c < 4; ++c)
    for (int b = 0; b < 32 - 8 * c; ++b) {
      line += (first ? "" : ",") + std::to_string(32 * c + b);
      first = false;
    }
  line += "],\"in\":5120,\"out\":3}\n";
  // Filler blocks make each chunk exist whole in the corpus (a second request, later).
  std::string filler = request(1, 50.0, 1, 0, 128, 1);
  const char* scen = R"(name: fanin
model: {name: m, layers: 61, heads: 128, kv_lora_rank: 512, rope_dim: 64}
topology: testbed-ndr200
instances: {requesters: [node0.gpu0], holders: [node2.gpu0-3]}
corpus: {chunk_tokens: 2048, placement: round-robin}
workload: {trace: trace.jsonl}
policies: [route]
)";
  nlohmann::json slow =
      run(std::string(scen) + "engine: {fast_path: false, route_protocol: absorbed}\n", line + filler);
  nlohmann::json fast = run(std::string(scen) + "engine: {fast_path: true, route_protocol: absorbed}\n", line + filler);
  for (const char* q : {"mean", "max", "p50"})
    CHECK(fast["policies"]["route"]["step_latency_s"][q].get<double>() ==
          Approx(slow["policies"]["route"]["step_latency_s"][q].get<double>()).epsilon(1e-6));
  CHECK(fast["policies"]["route"]["engine"]["simgrid_transfers"].get<int>() == 0); // all solved exactly
  CHECK(slow["policies"]["route"]["engine"]["fluid"].get<int>() == 0);
}

TEST_CASE("engine: a chunk's copies: an idle call takes the near copy, a loaded holder sends calls to the far one")
{
  // Every chunk on two holders (hot-replicated, all of them hot): node0.gpu7, over NVLink from the
  // requesters of node0, and node2.gpu0, across the spine. The model's 128 query heads fill the
  // near holder's GPU with a few calls at once.
  auto scenario = [](const std::string& choice) {
    return "name: replicas\nmodel: {name: m, layers: 61, heads: 128, kv_lora_rank: 512, rope_dim: 64}\n" +
           two_leaf_topology(1) +
           "instances: {requesters: [node0.gpu0-5], holders: [node0.gpu7, node2.gpu0]}\n"
           "corpus: {chunk_tokens: 2048, placement: hot-replicated, replicas: 2, hot_set_fraction: 1}\n"
           "workload: {trace: trace.jsonl}\npolicies: [route]\n"
           "engine: {route_protocol: absorbed, replica_choice: " +
           choice + "}\n";
  };
  auto kernels = [](const std::filesystem::path& out) { return csv_column(out / "holders.csv", "gpu", "kernels"); };
  // One request alone: both choices send its calls to the near copy.
  for (const char* choice : {"load", "nearest"}) {
    INFO(choice);
    std::filesystem::path out;
    run(scenario(choice), request(0, 0, 0, 0, 32, 4), {}, &out);
    CHECK(kernels(out)["node0.gpu7"] == 4);
    CHECK(kernels(out)["node2.gpu0"] == 0);
  }
  // Six requesters each decoding 16 requests of 8 contexts, each requester 5 ms after the one
  // before (in phase, every step would find the holders idle): by load, once the near holder's
  // kernels overfill it, calls go to the idle far copy; the nearest choice never sends any.
  std::string t;
  for (int k = 0; k < 6; ++k)
    for (int j = 0; j < 16; ++j)
      t += request(16 * k + j, 5e-3 * k, k, 32 * 8 * (j % 8), 32 * 8, 4);
  std::filesystem::path by_load, nearest;
  const nlohmann::json load = run(scenario("load"), t, {}, &by_load);
  const nlohmann::json near = run(scenario("nearest"), t, {}, &nearest);
  CHECK(kernels(nearest)["node2.gpu0"] == 0);
  CHECK(kernels(by_load)["node2.gpu0"] > 0);
  CHECK(kernels(by_load)["node0.gpu7"] > 0);
  // Spread over both copies, the calls end sooner.
  CHECK(step_mean(load, "route") < step_mean(near, "route"));
}

TEST_CASE("engine: a chunk read often gets a copy near its reader, priced as a fetch there, and its calls follow")
{
  // One request on node0.gpu0 decoding 8 tokens over one 2,048-token chunk, placed on node2.gpu0
  // across the spine; node0.gpu7 holds nothing. With dynamic replication, a copy every 2 reads: the
  // second step's read sends the chunk to the holder nearest the reader without one, node0.gpu7
  // (NVLink), 2,048 tokens x (512 + 64) BF16 values x 61 layers from node2.gpu0, and once it landed
  // the calls go there (the nearer copy ends a call sooner).
  auto scenario = [](const std::string& engine, const std::string& policy = "route") {
    return "name: replication\nmodel: {name: m, layers: 61, heads: 128, kv_lora_rank: 512, rope_dim: 64}\n" +
           two_leaf_topology(1) +
           "instances: {requesters: [node0.gpu0], holders: [node2.gpu0, node0.gpu7]}\n"
           "corpus: {chunk_tokens: 2048, seed: 0}\nworkload: {trace: trace.jsonl}\npolicies: [" +
           policy + "]\nengine: {route_protocol: absorbed" + engine + "}\n";
  };
  auto kernels = [](const std::filesystem::path& out) { return csv_column(out / "holders.csv", "gpu", "kernels"); };
  const std::string trace = request(0, 0, 0, 0, 32, 8);
  const std::string dynamic = ", replication: dynamic, replicate_after: 2, max_copies: 1";
  std::filesystem::path none_out, kept_out;
  const nlohmann::json none = run(scenario(""), trace, {}, &none_out);
  const nlohmann::json kept = run(scenario(dynamic), trace, {}, &kept_out);
  const nlohmann::json &n = none["policies"]["route"], &k = kept["policies"]["route"];
  CHECK(n["memory"]["replica_copies"].get<int>() == 0);
  CHECK(kernels(none_out)["node2.gpu0"] == 8);
  CHECK(k["memory"]["replica_copies"].get<int>() == 1);
  CHECK(k["memory"]["replica_evictions"].get<int>() == 0);
  CHECK(kernels(kept_out)["node2.gpu0"] >= 2);
  CHECK(kernels(kept_out)["node0.gpu7"] > 0);
  CHECK(kernels(kept_out)["node2.gpu0"] + kernels(kept_out)["node0.gpu7"] == 8);
  // The calls carry the same bytes over either path: what more crossed a wire is the copy.
  CHECK(k["wire_bytes"].get<double>() - n["wire_bytes"].get<double>() ==
        Approx(2048.0 * (512 + 64) * 2 * 61).epsilon(1e-9));
  CHECK(k["wire_bytes_by_fabric"]["nvlink"].get<double>() > 0);
  CHECK(step_mean(kept, "route") < step_mean(none, "route"));
  // Fetched once, the chunk is then read from the requester's cache: one read of the holder, no
  // copy.
  const nlohmann::json fetched = run(scenario(dynamic, "fetch"), trace)["policies"]["fetch"];
  CHECK(fetched["decisions"]["fetch"].get<int>() == 1);
  CHECK(fetched["decisions"]["cached"].get<int>() == 7);
  CHECK(fetched["memory"]["replica_copies"].get<int>() == 0);
}
