// The coding-agent session importer and xattn's own trace format.
#include "workloads/claude_code.hpp"
#include "workloads/mooncake.hpp"
#include "workloads/stats.hpp"
#include "workloads/test_util.hpp"
#include "workloads/trace_format.hpp"
#include "workloads/xattn_trace.hpp"

#include <catch2/catch.hpp>

using namespace xattn::workloads;
using namespace xattn::workloads::testing;
using Catch::Matchers::Contains;

TEST_CASE("workloads: claude-code importer places nested sub-agent calls in the parent's timeline")
{
  ClaudeCodeReader src(fixture("session_nested.json"), {}, 3);
  auto rs = drain(src);
  REQUIRE(rs.size() == 7);
  CHECK(src.subagents() == 3);
  // Hand timeline: main 0, 20; agent_001 placed at 10 (calls 10, 16); agent_002 inside it at
  // 10 + 4 (calls 14.5, 44); agent_003 at 12.
  // The layout of workloads/request_id.hpp: agent = session << 16 | sub-agent, local block =
  // session << 40 | id.
  const std::uint64_t main = 3ULL << 16;
  const std::vector<double> t{0, 10, 12, 14.5, 16, 20, 44};
  const std::vector<std::uint64_t> agent{main, main + 1, main + 3, main + 2, main + 1, main, main + 2};
  const std::vector<std::uint64_t> parent{kNoAgent, main, main, main + 1, main, kNoAgent, main + 1};
  for (std::size_t i = 0; i < rs.size(); ++i) {
    INFO("request " << i);
    CHECK(rs[i].id == i);
    CHECK(rs[i].arrival.value() == Approx(t[i]));
    CHECK(rs[i].agent == agent[i]);
    CHECK(rs[i].parent_agent == parent[i]);
    CHECK(rs[i].session == 3);
    CHECK(rs[i].block_tokens == 64);
  }
  CHECK(rs[0].blocks == std::vector<std::uint64_t>{(3ULL << 40) + 1, (3ULL << 40) + 2, (3ULL << 40) + 3});
  CHECK(rs[4].think.value() == Approx(1.5));
}

TEST_CASE("workloads: claude-code importer handles any nesting depth")
{
  // 2,000 nested sub-agents, each with one call at +1 s: recursion would overflow the stack.
  const int depth = 2000;
  std::string text = R"({"block_size": 64, "requests": )";
  for (int i = 0; i < depth; ++i)
    text += R"([{"t": 1, "type": "n", "in": 64, "out": 1, "hash_ids": [1]}, {"t": 1, "type": "subagent", "requests": )";
  text += "[]";
  for (int i = 0; i < depth; ++i)
    text += "}]";
  text += "}";
  ClaudeCodeReader src(temp_file("deep.json", text));
  auto rs = drain(src);
  REQUIRE(rs.size() == depth);
  CHECK(src.subagents() == depth);
  CHECK(rs.back().arrival.value() == Approx(depth)); // level i: sub-agent placed at i, its call at i + 1
}

TEST_CASE("workloads: claude-code importer rejects malformed entries naming file and entry")
{
  auto err = [](const std::string& requests, bool skip = false) {
    try {
      ClaudeCodeReader src(temp_file("s.json", R"({"block_size": 64, "requests": )" + requests + "}"),
                           ImportOptions{.skip_bad = skip});
      auto rs = drain(src);
      return "read " + std::to_string(rs.size()) + " skipped " + std::to_string(src.skipped());
    } catch (const xattn::core::InputError& e) {
      return std::string(e.what());
    }
  };
  const std::string ok = R"({"t": 0, "type": "n", "in": 64, "out": 1, "hash_ids": [1]})";
  CHECK_THAT(err("[" + ok + R"(, {"t": 1, "type": "n", "in": 64, "out": 1, "hash_ids": [1, "x"]}])"),
             Contains("s.json: error: requests[1].hash_ids[1]: expected a block id"));
  CHECK_THAT(err("[" + ok +
                 R"(, {"t": 1, "type": "subagent", "requests": [{"t": 0, "type": "n", "in": 1, "hash_ids": []}]}])"),
             Contains("s.json: error: requests[1].requests[0].out: missing field"));
  CHECK_THAT(err("[" + ok + R"(, {"type": "n", "in": 64, "out": 1, "hash_ids": [1]}])"),
             Contains("requests[1].t: missing field"));
  CHECK_THAT(err("[" + ok + R"(, {"t": 2, "type": "x"}])"),
             Contains("requests[1].type: expected \"n\" or \"subagent\""));
  CHECK_THAT(err("[" + ok + R"(, {"t": 2, "type": "subagent"}])"), Contains("requests[1].requests: a sub-agent needs"));
  CHECK_THAT(err("[]"), Contains("s.json: error: requests: the session holds no requests"));
  CHECK_THAT(err("[" + ok + ",\n  {\"t\": 1,,}]"), Contains("s.json:2:") && Contains("invalid JSON"));
  CHECK(err("[" + ok + R"(, {"t": 2, "type": "x"}, {"t": 3, "type": "n", "in": 1, "out": 1, "hash_ids": []}])", true) ==
        "read 2 skipped 1");
}

namespace
{
struct HandCount {
  const char* file;
  std::size_t requests, top_calls, subagents;
  std::int64_t input_tokens, output_tokens;
  double first_sub_start, first_sub_last_call; // first sub-agent: placement and its last nested t
  std::size_t first_sub_calls;
};
} // namespace

TEST_CASE("workloads: claude-code sessions import with every request and sub-agent accounted for")
{
  // Counted by hand from the JSON (python: walk requests[], "n" entries and "subagent" entries at
  // every depth); token totals equal each file's own totals.combined_tokens.
  const HandCount expected[] = {
      {"trace_0274.json", 105, 57, 3, 5990912, 48868, 160.959, 115.0, 11},
      {"trace_0277.json", 53, 9, 4, 2576410, 31862, 79.224, 19.0, 4},
      {"trace_0291.json", 32, 20, 2, 2254119, 19504, 1148.013, 20.0, 5},
  };
  for (const HandCount& h : expected) {
    const std::string path = bundled_trace(std::string("claude-code/") + h.file + ".zst");
    INFO(h.file);
    ClaudeCodeReader src(path, {}, 7);
    auto rs = drain(src);
    CHECK(rs.size() == h.requests);
    CHECK(src.subagents() == h.subagents);
    std::size_t top = 0, first_sub = 0;
    std::int64_t in = 0, out = 0;
    double first_sub_min = 1e18, first_sub_max = 0;
    for (std::size_t i = 0; i < rs.size(); ++i) {
      top += !rs[i].is_subagent();
      in += rs[i].input_tokens;
      out += rs[i].output_tokens;
      if (i > 0) CHECK(rs[i - 1].arrival <= rs[i].arrival);
      if (rs[i].agent == (7ULL << 16) + 1) { // workloads/request_id.hpp: session 7, sub-agent 1
        ++first_sub;
        first_sub_min = std::min(first_sub_min, rs[i].arrival.value());
        first_sub_max = std::max(first_sub_max, rs[i].arrival.value());
      }
    }
    CHECK(top == h.top_calls);
    CHECK(in == h.input_tokens);
    CHECK(out == h.output_tokens);
    CHECK(first_sub == h.first_sub_calls);
    CHECK(first_sub_min == Approx(h.first_sub_start));
    CHECK(first_sub_max == Approx(h.first_sub_start + h.first_sub_last_call));
  }
}

TEST_CASE("workloads: xattn trace format round-trips through writer and reader")
{
  XattnTraceReader src(fixture("trace_v1.jsonl"));
  auto rs = drain(src);
  REQUIRE(rs.size() == 3);
  CHECK(src.source() == "hand-written fixture");
  CHECK(rs[1].parent_agent == 0);
  CHECK(rs[1].think.value() == 0.0);
  CHECK(rs[2].think.value() == 0.5);
  CHECK(rs[0].parent_agent == kNoAgent);

  rs[1].arrival = xattn::core::Seconds(0.1 + 0.2); // a value with no short decimal form
  const std::string out = temp_file("rt.jsonl", "");
  {
    XattnTraceWriter w(out, "test");
    for (const Request& r : rs)
      w.write(r);
    w.commit();
  }
  XattnTraceReader again(out);
  auto back = drain(again);
  REQUIRE(back.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(back[i].arrival == rs[i].arrival); // exact
    CHECK(back[i].blocks == rs[i].blocks);
    CHECK(back[i].agent == rs[i].agent);
    CHECK(back[i].parent_agent == rs[i].parent_agent);
    CHECK(back[i].input_tokens == rs[i].input_tokens);
  }
  CHECK(guess_format(out) == format_named("xattn"));
  CHECK(guess_format(fixture("mooncake_small.jsonl")) == format_named("mooncake"));
}

TEST_CASE("workloads: xattn trace writer leaves nothing behind without commit")
{
  const std::string out = temp_file("never.jsonl", "old contents");
  {
    XattnTraceWriter w(out, "test");
    w.write(Request{});
  }
  CHECK(drain_text(out) == "old contents");
}

TEST_CASE("workloads: xattn trace reader rejects malformed lines with file, line and key")
{
  auto err = [](const std::string& text) {
    try {
      XattnTraceReader src(temp_file("x.jsonl", text));
      drain(src);
    } catch (const xattn::core::InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string h = "{\"xattn_trace\": 1}\n";
  const std::string r0 =
      R"({"id":0,"t":0,"session":0,"agent":0,"parent":null,"block_tokens":64,"blocks":[1],"in":64,"out":1})";
  CHECK(err(h + r0) == "no error");
  CHECK_THAT(err(r0), Contains("x.jsonl:1: error: xattn_trace: not an xattn trace"));
  CHECK_THAT(err("{\"xattn_trace\": 2}\n" + r0), Contains("x.jsonl:1: error: xattn_trace: unsupported version 2"));
  CHECK_THAT(err(h), Contains("x.jsonl: error: the trace holds no requests"));
  CHECK_THAT(err(h + R"({"id":0,"t":0,"session":0,"agent":0,"block_tokens":64,"blocks":[1],"in":64})"),
             Contains("x.jsonl:2: error: out: missing field"));
  CHECK_THAT(err(h + R"({"id":0,"t":0,"session":0,"agent":0,"block_tokens":64,"blocks":[1],"in":64,"out":1,"tink":1})"),
             Contains("x.jsonl:2: error: tink: unknown key"));
  CHECK_THAT(err(h + R"({"id":0,"t":-1,"session":0,"agent":0,"block_tokens":64,"blocks":[1],"in":64,"out":1})"),
             Contains("x.jsonl:2: error: t: expected a non-negative number of seconds"));
  CHECK_THAT(err(h + r0 + "\n" + r0), Contains("x.jsonl:3: error: id: expected id 1, got 0"));
  CHECK_THAT(err(h + "{\"id\":0,\n"), Contains("x.jsonl:2:") && Contains("invalid JSON"));
}

TEST_CASE("workloads: a Mooncake request that begins with an earlier one's full blocks continues its session")
{
  // 512-token blocks; block 10 begins every prompt (a shared system prompt).
  // 0: [10 11 12], 1,100 tokens: full blocks 10 11, the last its own: turns may continue it.
  // 1: [10 20 21] begins with no request's full blocks: a new session, continued from 10 20.
  // 2: [10 11 13 14 15] begins with 0's full blocks: session 0, continued from 10 11 13 14.
  // 3: [10 30], 600 tokens: a new session; its one full block, 10, is not its own: nothing
  //    continues it (else every prompt would).
  // 4: [10 11 13 14 16 17] begins with 2's full blocks (longer than 0's): session 0.
  // 5: [10 20] is 1's full blocks: session 1.
  MooncakeReader by_prefix(fixture("mooncake_sessions.jsonl"), ImportOptions{.prefix_sessions = true});
  const auto rs = drain(by_prefix);
  REQUIRE(rs.size() == 6);
  const std::vector<std::uint64_t> session{0, 1, 0, 3, 0, 1};
  for (std::size_t i = 0; i < rs.size(); ++i) {
    INFO("request " << i);
    CHECK(rs[i].session == session[i]);
  }
  MooncakeReader each(fixture("mooncake_sessions.jsonl"));
  for (const Request& r : drain(each))
    CHECK(r.session == r.id);
}
