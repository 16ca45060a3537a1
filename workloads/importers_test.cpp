#include "workloads/azure.hpp"
#include "workloads/mooncake.hpp"
#include "workloads/stats.hpp"
#include "workloads/test_util.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>

using namespace xattn::workloads;
using namespace xattn::workloads::testing;
using Catch::Matchers::Contains;

TEST_CASE("workloads: mooncake importer reads requests, ms timestamps and 512-token blocks")
{
  MooncakeReader src(fixture("mooncake_small.jsonl"));
  auto rs = drain(src);
  REQUIRE(rs.size() == 4);
  CHECK(rs[2].id == 2);
  CHECK(rs[2].arrival.value() == Approx(2.5));
  CHECK(rs[2].block_tokens == 512);
  CHECK(rs[2].blocks == std::vector<std::uint64_t>{0, 4});
  CHECK(rs[3].input_tokens == 2048);
  CHECK(rs[3].output_tokens == 7);
  CHECK_FALSE(rs[3].is_subagent());
  CHECK(rs[1].session != rs[0].session);
}

TEST_CASE("workloads: mooncake importer rejects malformed lines with file and line")
{
  const std::string path = fixture("mooncake_bad.jsonl");
  MooncakeReader strict(path);
  Request r;
  REQUIRE(strict.next(r));
  CHECK_THROWS_WITH(strict.next(r), Contains("mooncake_bad.jsonl:2:") && Contains("invalid JSON"));

  auto err = [](const std::string& line) {
    try {
      MooncakeReader src(temp_file("one.jsonl", line + "\n"));
      drain(src);
    } catch (const xattn::core::InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(err(R"({"timestamp": 0, "input_length": 6, "output_length": 5, "hash_ids": [0, -4]})"),
             Contains("one.jsonl:1: error: hash_ids: expected non-negative integer block ids"));
  CHECK_THAT(err(R"({"timestamp": 0, "input_length": "6", "output_length": 5, "hash_ids": [0]})"),
             Contains("one.jsonl:1: error: input_length: expected a non-negative integer (tokens), got a string"));
  CHECK_THAT(err(R"({"timestamp": 0, "input_length": 6, "hash_ids": [0]})"),
             Contains("one.jsonl:1: error: output_length: missing field"));
  CHECK_THAT(err(R"({"timestamp": 0, "input_length": 6, "output_length": 5, "hash_ids": 3})"),
             Contains("hash_ids: expected an array of block ids, got an integer"));
  CHECK_THAT(err(R"([1, 2])"), Contains("one.jsonl:1:1: error: invalid JSON: expected a JSON object"));
  CHECK_THAT(err(""), Contains("one.jsonl: error: the trace holds no requests"));
  CHECK_THAT(err("{\"timestamp\": 9, \"input_length\": 6, \"output_length\": 5, \"hash_ids\": [0]}\n"
                 "{\"timestamp\": 8, \"input_length\": 6, \"output_length\": 5, \"hash_ids\": [0]}"),
             Contains("one.jsonl:2: error: timestamp: timestamps must not decrease"));
}

TEST_CASE("workloads: mooncake importer with skip-bad counts and reports what it skipped")
{
  MooncakeReader src(fixture("mooncake_bad.jsonl"), ImportOptions{.skip_bad = true});
  auto rs = drain(src);
  REQUIRE(rs.size() == 2);
  CHECK(rs[1].arrival.value() == Approx(0.05));
  CHECK(rs[1].id == 1); // ids stay dense over what was kept
  CHECK(src.skipped() == 4);
  REQUIRE(src.skip_messages().size() == 4);
  CHECK_THAT(src.skip_messages()[3], Contains("mooncake_bad.jsonl:5: error: output_length: missing field"));
}

TEST_CASE("workloads: mooncake conversation trace has the published statistics")
{
  MooncakeReader src(bundled_trace("mooncake/conversation_trace.jsonl.zst"));
  TraceStats stats;
  Request r;
  while (src.next(r))
    stats.add(r);
  StatsReport s = stats.report();
  CHECK(s.requests == 12031);
  CHECK(s.block_refs == 288500);
  CHECK(s.distinct_blocks == 182790);
  CHECK(s.reuse_ratio == Approx(0.366).margin(0.0005));
  CHECK(s.duration_s == Approx(3536.999));
  CHECK(s.top_block_share == 1.0); // block 0 opens every request
  CHECK(s.block_tokens == 512);
}

TEST_CASE("workloads: the mooncake conversation trace's sessions by prefix (workloads/README.md's figures)")
{
  // Counted independently of the reader (a script over the decompressed trace, the same rule).
  MooncakeReader src(bundled_trace("mooncake/conversation_trace.jsonl.zst"), ImportOptions{.prefix_sessions = true});
  std::map<std::uint64_t, int> turns;
  Request r;
  while (src.next(r))
    ++turns[r.session];
  int multi = 0, in_multi = 0, most = 0;
  for (const auto& [session, n] : turns) {
    multi += n > 1 ? 1 : 0;
    in_multi += n > 1 ? n : 0;
    most = std::max(most, n);
  }
  CHECK(turns.size() == 8067);
  CHECK(multi == 2011);
  CHECK(in_multi == 5975);
  CHECK(most == 43);
}

TEST_CASE("workloads: azure importer reads arrivals relative to the first row")
{
  AzureReader src(fixture("azure_small.csv"));
  auto rs = drain(src);
  REQUIRE(rs.size() == 4);
  CHECK(rs[0].arrival.value() == 0.0);
  CHECK(rs[1].arrival.value() == Approx(0.052).margin(1e-9));
  CHECK(rs[3].arrival.value() == Approx(5 * 3600 + 42 * 60 + 57.02004).margin(1e-6));
  CHECK(rs[2].input_tokens == 110);
  CHECK(rs[2].output_tokens == 27);
  CHECK(rs[2].blocks.empty());
  CHECK(rs[2].block_tokens == 0);
}

TEST_CASE("workloads: azure importer rejects malformed rows with file, line and column")
{
  auto err = [](const std::string& text, bool skip = false) {
    try {
      AzureReader src(temp_file("a.csv", text), ImportOptions{.skip_bad = skip});
      auto rs = drain(src);
      return "read " + std::to_string(rs.size()) + " skipped " + std::to_string(src.skipped());
    } catch (const xattn::core::InputError& e) {
      return std::string(e.what());
    }
  };
  const std::string h = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  CHECK_THAT(err(h + "2023-11-16 18:17:03.97,48x,10\n"),
             Contains("a.csv:2:24: error: ContextTokens: expected a non-negative integer"));
  CHECK_THAT(err(h + "2023-11-16 18:17:03.97,48,-1\n"), Contains("a.csv:2:27: error: GeneratedTokens"));
  CHECK_THAT(err(h + "2023-13-16 18:17:03,48,1\n"), Contains("a.csv:2:1: error: TIMESTAMP: expected YYYY-MM-DD"));
  CHECK_THAT(err(h + "2023-11-16 18:17:03,48\n"), Contains("a.csv:2:1: error: expected 3 comma-separated fields"));
  CHECK_THAT(err(h + "2023-11-16 18:17:04,48,1\n2023-11-16 18:17:03,48,1\n"),
             Contains("a.csv:3:1: error: TIMESTAMP: timestamps must not decrease"));
  CHECK_THAT(err("time,in,out\n"), Contains("a.csv:1:1: error: expected the header"));
  CHECK_THAT(err(h), Contains("a.csv: error: the trace holds no requests"));
  CHECK(err(h + "2023-11-16 18:17:03,48,1\nbad\n2023-11-16 18:17:05,48,1\n", true) == "read 2 skipped 1");
}

TEST_CASE("workloads: azure code trace imports every row")
{
  AzureReader src(bundled_trace("azure/AzureLLMInferenceTrace_code_2023.csv.zst"));
  TraceStats stats;
  Request r;
  while (src.next(r))
    stats.add(r);
  CHECK(stats.report().requests == 8819);
  CHECK(stats.report().block_refs == 0);
}
