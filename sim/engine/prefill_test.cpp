// Prefill on the decoding instances (scenario `prefill`), worked by hand with the paper prototype's
// measured prefill rate (5,000 tokens/s, calibrate/profiles/paper-prototype.yaml) and the
// attention-only step, whose compute outside attention is 0 in that profile: a prefill iteration
// with nothing to decode lasts its tokens / 5,000 s.
#include "sim/engine/output.hpp"
#include "sim/engine/source.hpp"
#include "sim/engine/test_util.hpp"
#include "sim/model/prefill.hpp"
#include "workloads/stats.hpp"

#include <fstream>
#include <sstream>

using namespace xattn;
using namespace xattn::sim::engine;
using namespace xattn::sim::engine::test;

namespace
{
constexpr double kRate = 5000; // tokens/s, the profile's prefill.tokens_per_s

// A small MoE model (2 layers, 16 experts, top-4) prefilled in one expert-parallel group of
// `gpus` (ep = dp_attention = `ep`), its KV handed off after the prefill to node0.gpu0, with the
// default profile's roofline prices.
std::string ep_prefill(const std::string& gpus, int ep)
{
  return "name: ep-prefill\n"
         "model: {name: moe2, layers: 2, dense_layers: 0, heads: 16, kv_lora_rank: 512, rope_dim: 64, "
         "qk_nope_head_dim: 128, v_head_dim: 128, hidden: 2048, q_lora_rank: 512, experts: 16, experts_per_token: 4, "
         "expert_intermediate: 512, vocab: 32000}\n"
         "topology: testbed-ndr200\nprofile: h100-ndr200-ibgda\n"
         "instances: {requesters: [node0.gpu0], holders: [node0.gpu1], prefill: {gpus: " +
         gpus + ", dp_attention: " + std::to_string(ep) + ", ep: " + std::to_string(ep) +
         "}}\n"
         "corpus: {chunk_tokens: 2048}\nworkload: {trace: trace.jsonl}\npolicies: [route]\n"
         "engine: {route_protocol: absorbed}\nprefill: {enabled: true, handoff: after}\n";
}

// The scenario `text` as the engine loads it (an empty trace beside it).
Scenario loaded(const std::string& text)
{
  const auto dir = fresh_dir("loaded");
  std::ofstream(dir / "trace.jsonl") << "{\"xattn_trace\": 1, \"source\": \"engine test\"}\n";
  std::ofstream(dir / "s.yaml") << text;
  return load_scenario((dir / "s.yaml").string());
}

std::vector<std::string> split_csv_row(const std::string& row)
{
  std::vector<std::string> cells;
  std::stringstream in(row);
  for (std::string c; std::getline(in, c, ',');)
    cells.push_back(c);
  return cells;
}

std::string scenario(const std::string& prefill,
                     const std::string& instances = "{requesters: [node0.gpu0], holders: [node0.gpu1]}")
{
  return "name: prefill\n"
         "model: {name: dsv3, layers: 61, heads: 128, kv_lora_rank: 512, rope_dim: 64}\n"
         "topology: testbed-ndr200\n"
         "instances: " +
         instances +
         "\n"
         "corpus: {chunk_tokens: 2048}\n"
         "workload: {trace: trace.jsonl}\n"
         "policies: [route]\n"
         "profile: paper-prototype\n"
         "engine: {route_protocol: absorbed}\n"
         "prefill: " +
         prefill + "\n";
}
} // namespace

TEST_CASE("engine: a prompt that extends an earlier one prefills only its new tokens")
{
  // A: blocks 0-31 (2,048 tokens), two tokens out. B, long after A ended, in the same session:
  // blocks 0-47, the first 32 A's. A prefills 2,048 tokens, B the 1,024 after A's prefix.
  const std::string trace = request(0, 0.0, 0, 0, 32, 2) + request(1, 5.0, 0, 0, 48, 2);
  std::filesystem::path out;
  const nlohmann::json all = run(scenario("{enabled: true}"), trace, {}, &out);
  const nlohmann::json& p = all["policies"]["route"];
  const std::map<std::uint64_t, double> ttft = requests_column(out, "route", "ttft_s");
  REQUIRE(ttft.size() == 2);
  CHECK(ttft.at(0) == Approx(2048 / kRate).epsilon(1e-6));
  CHECK(ttft.at(1) == Approx(1024 / kRate).epsilon(1e-6));
  CHECK(p["prefill"]["block_references"].get<int>() == 80);
  CHECK(p["prefill"]["block_hits"].get<int>() == 32);
  CHECK(p["prefill"]["hit_share"].get<double>() == Approx(32.0 / 80));
  CHECK(p["prefill"]["prefilled_tokens"].get<int>() == 3072);
  CHECK(p["prefill"]["chunks"].get<int>() == 2); // each prompt fits vLLM's default budget
  // The run's table has a prefill row with these figures (40% of 80 references hit; all 48 blocks
  // of the one instance's misses and hits are its own).
  const std::string table = comparison_table(run_result(all));
  CHECK_THAT(table, Catch::Matchers::Contains("prefilled tok"));
  CHECK_THAT(table, Catch::Matchers::Contains("3072        2     40.0%                    32/0/48"));
  // The same trace without prefill: no prefill figures, and each first token after one decode
  // step (the longest step bounds the longest wait).
  const nlohmann::json off = run(scenario("{enabled: false}"), trace);
  const nlohmann::json& q = off["policies"]["route"];
  CHECK_FALSE(q.contains("prefill"));
  CHECK(q["ttft_s"]["max"].get<double>() <= q["step_latency_s"]["max"].get<double>() * (1 + 1e-6));
  CHECK(q["ttft_s"]["max"].get<double>() < 1024 / kRate);
}

TEST_CASE("engine: a token budget chunks a prompt, and the batch's decodes take their token first")
{
  // A (2,048 tokens) alone: four chunks of 512. B (1,024 new tokens) arrives while A decodes: A's
  // token comes first in every iteration, so B's chunks are 511, 511 and 2 tokens, and each of
  // A's tokens beside a 511-token chunk waits for the chunk's compute.
  const std::string trace = request(0, 0.0, 0, 0, 32, 400) + request(1, 0.5, 1, 100, 16, 2);
  std::filesystem::path out;
  const nlohmann::json all = run(scenario("{enabled: true, max_num_batched_tokens: 512}"), trace, {}, &out);
  const nlohmann::json& p = all["policies"]["route"];
  const std::map<std::uint64_t, double> ttft = requests_column(out, "route", "ttft_s");
  CHECK(ttft.at(0) == Approx(4 * 512 / kRate).epsilon(1e-6));
  CHECK(p["prefill"]["chunks"].get<int>() == 4 + 3);
  CHECK(ttft.at(1) > 1024 / kRate);
  CHECK(p["itl_s"]["max"].get<double>() >= 511 / kRate);
  const std::map<std::uint64_t, double> finish = requests_column(out, "route", "finish_s");
  REQUIRE(finish.at(0) > 0.5 + 1024 / kRate); // A was still decoding while B prefilled
}

TEST_CASE("engine: with prefill on, the share of block references that hit is the trace's reuse ratio")
{
  // Nothing is evicted: a block is found by every reference after its first, which is what
  // `xattn trace stats` counts as reuse (workloads/stats.cpp), over the same stream.
  const std::string s = "name: reuse\n"
                        "model: {name: dsv3, layers: 61, heads: 128, kv_lora_rank: 512, rope_dim: 64}\n"
                        "topology: testbed-ndr200\n"
                        "instances: {requesters: [node0.gpu0-3], holders: [node1]}\n"
                        "corpus: {chunk_tokens: 2048}\n"
                        "workload:\n"
                        "  generator:\n"
                        "    requests: 120\n"
                        "    block_tokens: 64\n"
                        "    corpus: {tokens: 400000, zipf_s: 1.0}\n"
                        "    agents: {count: 8, turns: 6}\n"
                        "    arrival: {process: poisson, interarrival: 400ms}\n"
                        "    output: {distribution: lognormal, mean: 8, cv: 0.5}\n"
                        "policies: [route]\n"
                        "profile: paper-prototype\n"
                        "engine: {route_protocol: absorbed}\n"
                        "prefill: {enabled: true}\n";
  const nlohmann::json all = run(s, "");
  auto dir = fresh_dir("reuse");
  std::ofstream(dir / "s.yaml") << s;
  const Scenario sc = load_scenario((dir / "s.yaml").string());
  workloads::TraceStats stats;
  workloads::Request r;
  for (auto src = open_workload(sc); src->next(r);)
    stats.add(r);
  const workloads::StatsReport report = stats.report();
  const nlohmann::json& p = all["policies"]["route"]["prefill"];
  REQUIRE(report.reuse_ratio > 0.1);
  CHECK(p["block_references"].get<std::uint64_t>() == report.block_refs);
  CHECK(p["hit_share"].get<double>() == Approx(report.reuse_ratio).epsilon(1e-12));
}

TEST_CASE("engine: where a prefix was prefilled decides whether a later prompt finds it here or across instances")
{
  // The first test's pair on two instances. Prefill prices the same either way (A 2,048 tokens,
  // B its 1,024 new ones); what differs is where B finds A's 32 blocks.
  const std::string trace = request(0, 0.0, 0, 0, 32, 2) + request(1, 5.0, 0, 0, 48, 2);
  auto two = [&](const std::string& router) {
    const std::string s = scenario("{enabled: true}", "{requesters: [node0.gpu0, node0.gpu1], holders: [node1.gpu0]}") +
                          "router: {policy: " + router + "}\n";
    std::filesystem::path out;
    const nlohmann::json all = run(s, trace, {}, &out);
    return std::make_pair(all["policies"]["route"], out);
  };
  SECTION("round-robin: B on the other instance, a cross-instance hit its decode routes to A's")
  {
    const auto [p, out] = two("round-robin");
    const std::map<std::uint64_t, double> ttft = requests_column(out, "route", "ttft_s");
    CHECK(ttft.at(0) == Approx(2048 / kRate).epsilon(1e-6));
    CHECK(ttft.at(1) == Approx(1024 / kRate).epsilon(1e-6));
    CHECK(requests_column(out, "route", "requester").at(1) == 1);
    const nlohmann::json& per = p["prefill"]["instances"];
    CHECK(per["remote_hits"] == nlohmann::json::array({0, 32}));
    CHECK(per["local_hits"] == nlohmann::json::array({0, 0}));
    CHECK(per["misses"] == nlohmann::json::array({32, 16}));
    // B's one decode step attends A's chunk on instance 0 (routed) and its own locally.
    CHECK(requests_column(out, "route", "routed").at(1) == 1);
    CHECK(requests_column(out, "route", "routed").at(0) == 0);
  }
  SECTION("prefix: B goes where its first 32 of 48 blocks are (over SGLang's half), and finds them there")
  {
    const auto [p, out] = two("prefix");
    CHECK(requests_column(out, "route", "requester").at(1) == 0);
    const nlohmann::json& per = p["prefill"]["instances"];
    CHECK(per["local_hits"] == nlohmann::json::array({32, 0}));
    CHECK(per["remote_hits"] == nlohmann::json::array({0, 0}));
    CHECK(requests_column(out, "route", "routed").at(1) == 0);
    CHECK(requests_column(out, "route", "ttft_s").at(1) == Approx(1024 / kRate).epsilon(1e-6));
  }
}

TEST_CASE("engine: a bounded pool evicts the least recent chunk no request is using, and its blocks are prefilled "
          "again")
{
  // A pool of one 2,048-token chunk and most of a second: each token's latent is (512 + 64) BF16
  // values (1,152 B) in each of 61 layers. A (chunk 0), then B (chunk 1) evicts it once A is done;
  // C reads A's blocks again: a miss, 2,048 tokens again.
  const double chunk_bytes = 61.0 * (512 + 64) * 2 * 2048;
  const std::string trace =
      request(0, 0.0, 0, 0, 32, 2) + request(1, 2.0, 1, 100, 32, 2) + request(2, 4.0, 2, 0, 32, 2);
  std::filesystem::path out;
  const nlohmann::json all =
      run(scenario("{enabled: true, kv_capacity: " + std::to_string(static_cast<long long>(1.9 * chunk_bytes)) + "B}"),
          trace, {}, &out);
  const nlohmann::json& p = all["policies"]["route"]["prefill"];
  CHECK(p["pool_chunks"].get<int>() == 1);
  CHECK(p["block_hits"].get<int>() == 0);
  CHECK(p["instances"]["evictions"] == nlohmann::json::array({2}));
  CHECK(p["instances"]["misses"] == nlohmann::json::array({96}));
  CHECK(requests_column(out, "route", "ttft_s").at(2) == Approx(2048 / kRate).epsilon(1e-6));
}

TEST_CASE("engine: a chunk evicted to the host tier is read back over PCIe before the prompt that finds it prefills")
{
  // The bounded pool above, and a host tier of one chunk (the one requester instance of node 0
  // has it all): B's placement sends A's chunk to the host; C finds it there, reads it back and
  // sends B's chunk down in its place. C's prompt is all cached: it computes its last token
  // (1 / 5,000 s) once the chunk is back. The read: 143.9 MB at the GPU's PCIe link of 64 GB/s
  // (its switch's 64 GB/s uplink has no other rank of the instance to share), after the slot
  // (0.5 us), the switch (0.1 us) and the uplink (0.5 us) of testbed-ndr200.
  const double chunk_bytes = 61.0 * (512 + 64) * 2 * 2048;
  const std::string trace =
      request(0, 0.0, 0, 0, 32, 2) + request(1, 2.0, 1, 100, 32, 2) + request(2, 4.0, 2, 0, 32, 2);
  const auto bytes = [](double b) { return std::to_string(static_cast<long long>(b)) + "B"; };
  std::filesystem::path out;
  const nlohmann::json all = run(scenario("{enabled: true, kv_capacity: " + bytes(1.9 * chunk_bytes) +
                                          ", host_capacity: " + bytes(1.5 * chunk_bytes) + "}"),
                                 trace, {}, &out);
  const nlohmann::json& p = all["policies"]["route"]["prefill"];
  CHECK(p["host_chunks"].get<int>() == 1);
  CHECK(p["block_hits"].get<int>() == 32);
  CHECK(p["instances"]["host_hits"] == nlohmann::json::array({32}));
  CHECK(p["instances"]["host_reads"] == nlohmann::json::array({1}));
  CHECK(p["instances"]["host_evictions"] == nlohmann::json::array({0}));
  CHECK(p["instances"]["evictions"] == nlohmann::json::array({2}));
  CHECK(p["instances"]["misses"] == nlohmann::json::array({64}));
  const double read = 1.1e-6 + chunk_bytes / 64e9;
  CHECK(requests_column(out, "route", "ttft_s").at(2) == Approx(read + 1 / kRate).epsilon(1e-6));
  const std::string table = comparison_table(run_result(all));
  CHECK_THAT(table, Catch::Matchers::Contains("host hits/reads/evicted"));
  CHECK_THAT(table, Catch::Matchers::Contains("32/1/0"));
}

TEST_CASE("engine: a disaggregated prompt is prefilled in the pool, handed off, then decoded")
{
  // One prefill instance (node1.gpu0) and one requester (node0.gpu0), one leaf apart. A's 2,048
  // tokens prefill in 2048 / 5,000 s; its KV moves in whole 16-token blocks, the prompt's 128 and
  // the one its first decoded token takes: 2,064 x 1,152 B x 61 layers = 145.0 MB, crosses
  // NDR-200 at the profile's 25 GB/s with its 15.5 us probe (same leaf; the path adds no latency
  // over the probe's own). After the prefill, the whole of it follows the prefill; layer by
  // layer, all but the last layer's share (1 / 61 of it) moved behind the prefill. Its one
  // output token is its first decode step.
  const std::string trace = request(0, 0.0, 0, 0, 32, 1);
  const double work = 2048 / kRate, kv = 129 * 16.0 * 1152 * 61, move = kv / 25e9, probe = 15.5e-6;
  const std::string pool = "{requesters: [node0.gpu0], holders: [node0.gpu1], prefill: {gpus: [node1.gpu0]}}";
  for (const std::string mode : {"after", "layer"}) {
    INFO(mode);
    std::filesystem::path out;
    const nlohmann::json all = run(scenario("{enabled: true, handoff: " + mode + "}", pool), trace, {}, &out);
    const nlohmann::json& p = all["policies"]["route"]["prefill"];
    CHECK(p["handoffs"].get<int>() == 1);
    CHECK(p["handoff_bytes"].get<double>() == Approx(kv));
    const double handoff = mode == "after" ? move + probe : move / 61 + probe;
    const double decode_from = requests_column(out, "route", "first_step_s").at(0);
    CHECK(decode_from == Approx(work + handoff).epsilon(1e-6));
    const double step = requests_column(out, "route", "mean_step_s").at(0);
    CHECK(requests_column(out, "route", "ttft_s").at(0) == Approx(work + handoff + step).epsilon(1e-6));
    CHECK(all["policies"]["route"]["wire_bytes_by_fabric"]["ib-same-leaf"].get<double>() == Approx(kv));
    // Layer by layer, the wait after the prefill is the last layer's share and the probe.
    CHECK(p["handoff_wait_s"]["mean"].get<double>() == Approx(handoff).epsilon(1e-6));
    const std::string table = comparison_table(run_result(all));
    CHECK_THAT(table, Catch::Matchers::Contains("handoffs (mean wait)"));
    CHECK_THAT(table, Catch::Matchers::Contains("1 (" + core::format_seconds(core::Seconds(handoff)) + ")"));
  }
}

TEST_CASE("engine: a disaggregated prompt hands off only the KV it prefilled, in either mode")
{
  // A (2,048 tokens), then B extending A's prompt by 1,024 tokens, long after: B finds A's
  // blocks in its requester instance's pool, prefills 1,024 tokens and moves only their KV: each
  // in whole 16-token blocks with its first decoded token's slot, 129 and 65 blocks.
  const std::string trace = request(0, 0.0, 0, 0, 32, 1) + request(1, 5.0, 0, 0, 48, 1);
  const std::string pool = "{requesters: [node0.gpu0], holders: [node0.gpu1], prefill: {gpus: [node1.gpu0]}}";
  for (const std::string mode : {"after", "layer"}) {
    INFO(mode);
    const nlohmann::json all = run(scenario("{enabled: true, handoff: " + mode + "}", pool), trace);
    const nlohmann::json& p = all["policies"]["route"]["prefill"];
    CHECK(p["handoffs"].get<int>() == 2);
    CHECK(p["prefilled_tokens"].get<int>() == 3072);
    CHECK(p["handoff_bytes"].get<double>() == Approx((129 + 65) * 16.0 * 1152 * 61));
  }
}

TEST_CASE("engine: a prompt kept on its prefill instance is served there by the policy: routed to, or fetched")
{
  // prefill.handoff none: A's KV stays on node1.gpu0 after its 2048 / 5,000 s prefill, and A
  // decodes on node0.gpu0 at once. Its one decode step calls its chunk on the prefill GPU: route
  // sends the queries there; fetch moves the chunk (the hand-off, as the policy's choice).
  const std::string trace = request(0, 0.0, 0, 0, 32, 1);
  const std::string pool = "{requesters: [node0.gpu0], holders: [node0.gpu1], prefill: {gpus: [node1.gpu0]}}";
  for (const std::string policy : {"route", "fetch"}) {
    INFO(policy);
    std::filesystem::path out;
    const nlohmann::json all =
        run(scenario("{enabled: true, handoff: none}", pool), trace, {"policies=[" + policy + "]"}, &out);
    const nlohmann::json& p = all["policies"][policy];
    CHECK(p["prefill"]["handoffs"].get<int>() == 0);
    CHECK(requests_column(out, policy, "first_step_s").at(0) == Approx(2048 / kRate).epsilon(1e-9));
    CHECK(requests_column(out, policy, policy == "route" ? "routed" : "fetched").at(0) >= 1);
    // The prompt's blocks were prefilled into the prefill instance's pool (the second of two).
    CHECK(p["prefill"]["instances"]["misses"] == nlohmann::json::array({0, 32}));
    CHECK(all["invariants"]["ok"].get<bool>());
    // The prefill ran on the GPU's compute that serves calls: one kernel of the whole iteration,
    // then under route the call's kernel beside it.
    std::ifstream holders(out / "holders.csv");
    std::string line, row;
    while (std::getline(holders, line))
      if (line.rfind(policy + ",node1.gpu0,", 0) == 0) row = line;
    const std::vector<std::string> cells = split_csv_row(row); // policy,gpu,kernels,busy_fraction,work_s,...
    REQUIRE(cells.size() > 4);
    CHECK(std::stoi(cells[2]) == (policy == "route" ? 2 : 1));
    CHECK(std::stod(cells[4]) >= 2048 / kRate);
    CHECK(std::stod(cells[4]) == Approx(2048 / kRate).epsilon(policy == "route" ? 1e-2 : 1e-12));
  }
}

TEST_CASE("engine: an expert-parallel prefill group runs its attention apart, then its MoE layers together")
{
  // Two prefill instances of one GPU each (node2.gpu0, node3.gpu0, one leaf apart from each other)
  // in one data-parallel group, the routed experts over both (ep 2: 8 of the 16 experts each),
  // roofline prices of the default profile. A's 2,048 tokens go to the first; the second has
  // nothing to prefill. The first runs its attention and dense layers (the model's prefill price
  // less its routed experts), then, as DeepEP's normal kernels do, sends the other node each token
  // that has one of its 4 experts there, once: all but those whose 4 experts are all among the
  // first's 8, 1 - C(8, 4) / C(16, 4) = 1 - 70 / 1,820 of them, both MoE layers at once, over
  // NDR-200 at 25 GB/s with the IBGDA probe's 15.5 us a layer. Each GPU runs its experts over the
  // group's 2,048 tokens; the second's begin when the dispatch arrived, then their results for
  // those tokens come back (BF16 hidden states, once a token). The first's own experts end
  // earlier: the combine's arrival ends the iteration. Then A's KV, whole 16-token blocks (2,064
  // tokens x 1,152 B x 2 layers), crosses the spine to its requester (node0.gpu0) with the 16 us
  // probe, and A decodes.
  const std::string text = ep_prefill("[node2.gpu0, node3.gpu0]", 2);
  const Scenario sc = loaded(text);
  const sim::ModelSpec& m = sc.model;
  const sim::PrefillPrice price =
      sim::prefill_price(m, sc.profile, {.tp = 1, .dp_attention = 2, .ep = 2}, {.tokens = 2048, .before = 0});
  const double dense = (price.total() - price.experts).value();
  const double experts = sim::expert_time(m, sc.profile, 2, 2048).value() * 2;
  const double sent = 2048 * (1 - 70.0 / 1820), probe = 15.5e-6;
  const double dispatch = 2 * sent * sim::dispatch_bytes(m).value() / 25e9 + 2 * probe;
  const double combine = 2 * sent * sim::combine_bytes(m).value() / 25e9 + 2 * probe;
  const double handoff = 2064 * 1152.0 * 2 / 25e9 + 16e-6;
  std::filesystem::path out;
  const nlohmann::json all = run(text, request(0, 0.0, 0, 0, 32, 1), {}, &out);
  const nlohmann::json& p = all["policies"]["route"];
  CHECK(p["prefill"]["handoffs"].get<int>() == 1);
  CHECK(requests_column(out, "route", "first_step_s").at(0) ==
        Approx(dense + dispatch + experts + combine + handoff).epsilon(1e-6));
  // The exchange's bytes and the hand-off's are on the wire: those tokens a layer each way.
  CHECK(p["wire_bytes"].get<double>() ==
        Approx(2 * sent * (sim::dispatch_bytes(m) + sim::combine_bytes(m)).value() + 2064 * 1152.0 * 2));
}

TEST_CASE("engine: a prefill group's tokens cross to another node once and are forwarded there over NVLink")
{
  // As above with two GPUs on each of two nodes (node2.gpu0-1, node3.gpu0-1), the 16 experts over
  // all four (ep 4: 4 each, 8 a node). A's 2,048 tokens are on node2.gpu0. Its peer on node2 gets
  // its tokens' pairs over NVLink: 2,048 x 4 experts / 4 GPUs = 2,048 pairs, at the profile's
  // 96 GB/s NVLink dispatch kernel rate with its 8 us probe a layer. node3 gets each token that has
  // an expert there once, at node3.gpu0 (the GPU at node2.gpu0's place on it), over NDR-200 as
  // above, which forwards node3.gpu1 its 2,048 pairs over NVLink. The results come back the same
  // ways: node3.gpu1's to node3.gpu0 over NVLink (121 GB/s, the combine kernel's rate), summed
  // there with node3.gpu0's, then once a token over the network. That chain is the longest.
  const std::string text = ep_prefill("[node2.gpu0-1, node3.gpu0-1]", 4);
  const Scenario sc = loaded(text);
  const sim::ModelSpec& m = sc.model;
  const sim::PrefillPrice price =
      sim::prefill_price(m, sc.profile, {.tp = 1, .dp_attention = 4, .ep = 4}, {.tokens = 2048, .before = 0});
  const double dense = (price.total() - price.experts).value();
  const double experts = sim::expert_time(m, sc.profile, 4, 2048).value() * 2;
  const double d = sim::dispatch_bytes(m).value(), c = sim::combine_bytes(m).value();
  const double sent = 2048 * (1 - 70.0 / 1820), pairs = 2048, ib = 15.5e-6, nvlink = 8e-6;
  const double rdma_dispatch = 2 * sent * d / 25e9 + 2 * ib, forward = 2 * pairs * d / 96e9 + 2 * nvlink;
  const double gather = 2 * pairs * c / 121e9 + 2 * nvlink, rdma_combine = 2 * sent * c / 25e9 + 2 * ib;
  const double handoff = 2064 * 1152.0 * 2 / 25e9 + 16e-6;
  std::filesystem::path out;
  const nlohmann::json all = run(text, request(0, 0.0, 0, 0, 32, 1), {}, &out);
  CHECK(requests_column(out, "route", "first_step_s").at(0) ==
        Approx(dense + rdma_dispatch + forward + experts + gather + rdma_combine + handoff).epsilon(1e-6));
  // On the wire: to and back from node2.gpu1 and node3.gpu1 over NVLink, the tokens across once
  // each way, the hand-off.
  const nlohmann::json& wire = all["policies"]["route"]["wire_bytes_by_fabric"];
  CHECK(wire["nvlink"].get<double>() == Approx(2 * 2 * pairs * (d + c)));
  CHECK(wire["ib-same-leaf"].get<double>() == Approx(2 * sent * (d + c)));
}

TEST_CASE("engine: a co-located iteration that prefills sends its tokens across nodes once, as the prefill pool does")
{
  // The model above served co-located by four GPUs on two nodes (node2.gpu0-1, node3.gpu0-1), data-
  // parallel attention, the 16 experts over all four (ep 4). A's 2,048-token prompt is prefilled
  // on node2.gpu0 (the router's first) in one iteration, which makes its one token. As DeepEP's
  // normal kernels send (and the pool's exchange above): node2.gpu1 gets its 2,048 pairs over
  // NVLink; node3 once each token with an expert there, 1 - C(8, 4) / C(16, 4) of them, over the
  // network to node3.gpu0, which forwards node3.gpu1 its 2,048 pairs over NVLink; the results come
  // back the same ways. Each MoE layer, each way.
  const std::string text = "name: colocated-ep-prefill\n"
                           "model: {name: moe2, layers: 2, dense_layers: 0, heads: 16, kv_lora_rank: 512, rope_dim: "
                           "64, qk_nope_head_dim: 128, v_head_dim: 128, hidden: 2048, q_lora_rank: 512, experts: 16, "
                           "experts_per_token: 4, expert_intermediate: 512, vocab: 32000}\n"
                           "topology: testbed-ndr200\nprofile: h100-ndr200-ibgda\n"
                           "instances: {requesters: [node2.gpu0-1, node3.gpu0-1], holders: [node2.gpu0-1, "
                           "node3.gpu0-1], dp_attention: 4, ep: 4}\n"
                           "corpus: {chunk_tokens: 2048}\nworkload: {trace: trace.jsonl}\npolicies: [route]\n"
                           "engine: {step: full, route_protocol: absorbed}\nprefill: {enabled: true}\n"
                           "router: {policy: round-robin}\n";
  const Scenario sc = loaded(text);
  const sim::ModelSpec& m = sc.model;
  const double d = sim::dispatch_bytes(m).value(), c = sim::combine_bytes(m).value();
  const double sent = 2048 * (1 - 70.0 / 1820), pairs = 2048;
  const nlohmann::json all = run(text, request(0, 0.0, 0, 0, 32, 1));
  const nlohmann::json& p = all["policies"]["route"];
  REQUIRE(p["requests"].get<int>() == 1);
  const nlohmann::json& wire = p["wire_bytes_by_fabric"];
  CHECK(wire["nvlink"].get<double>() == Approx(2 * 2 * pairs * (d + c)));
  CHECK(wire["ib-same-leaf"].get<double>() == Approx(2 * sent * (d + c)));
  CHECK(wire["ib-spine"].get<double>() == 0);
}
