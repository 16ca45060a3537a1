// The routers that read the run's state (router.cpp), by hand: without prefill, the prefix router
// sends a prompt to the instance whose fetch cache holds it.
#include "sim/engine/test_util.hpp"

#include <catch2/catch.hpp>

using namespace xattn::sim::engine::test;

TEST_CASE("router: without prefill, prefix sends a prompt where its context was fetched, session to the next "
          "instance")
{
  // Two requester instances, one holder across the spine, always fetch. A reads chunk 0 (blocks 0-31)
  // from 0 s for 2,000 tokens; B, another session, reads the same chunk from 0.1 s, when A's first
  // step has fetched it into instance 0's cache and A still decodes there: instance 1 is the
  // least loaded.
  const std::string trace = request(0, 0.0, 0, 0, 32, 2000) + request(1, 0.1, 1, 0, 32, 2);
  auto placed = [&](const std::string& router) {
    const std::string s = "name: router\nmodel: deepseek-v3\n" + two_leaf_topology(1) +
                          "instances: {requesters: [node0.gpu0, node0.gpu1], holders: [node2.gpu0]}\n"
                          "corpus: {chunk_tokens: 2048}\nworkload: {trace: trace.jsonl}\npolicies: [fetch]\n"
                          "router: {policy: " +
                          router + "}\n";
    std::filesystem::path out;
    const nlohmann::json all = run(s, trace, {}, &out);
    CHECK(all["invariants"]["ok"].get<bool>());
    return out;
  };
  SECTION("session: B, a new session, goes to the next instance and fetches the chunk again")
  {
    const auto out = placed("session");
    CHECK(requests_column(out, "fetch", "requester").at(1) == 1);
    CHECK(requests_column(out, "fetch", "fetched").at(1) == 1); // its first step
    CHECK(requests_column(out, "fetch", "cached").at(1) == 1);  // its second
  }
  SECTION("least-loaded: B goes to instance 1, where A is not, and fetches the chunk again")
  {
    const auto out = placed("least-loaded");
    CHECK(requests_column(out, "fetch", "requester").at(1) == 1);
    CHECK(requests_column(out, "fetch", "fetched").at(1) == 1);
  }
  SECTION("prefix: instance 0 holds all 32 of B's blocks (over SGLang's half): B goes there, busier as it is, and "
          "finds them")
  {
    const auto out = placed("prefix");
    CHECK(requests_column(out, "fetch", "requester").at(1) == 0);
    CHECK(requests_column(out, "fetch", "fetched").at(1) == 0);
    CHECK(requests_column(out, "fetch", "cached").at(1) == 2); // both of its steps
  }
}
