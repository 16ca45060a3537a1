// The request-id layout (workloads/request_id.hpp): ids of different sessions, sub-agents and
// copies never collide, every field is checked when an id is made.
#include "workloads/request_id.hpp"

#include "sim/core/error.hpp"
#include "workloads/request.hpp"

#include <catch2/catch.hpp>

#include <set>

using namespace xattn::workloads;

TEST_CASE("request ids: sessions, sub-agents and copies never collide")
{
  // The old packing (agent = session << 32, copy k adds k << 40) made session 256 of copy 0 the
  // same agent as session 0 of copy 1. Here every (copy, session, sub-agent) is its own id.
  std::set<std::uint64_t> agents, sessions;
  std::size_t made = 0;
  for (std::uint64_t copy : std::initializer_list<std::uint64_t>{0, 1, 2, ids::kCopies - 1})
    for (std::uint64_t s : std::initializer_list<std::uint64_t>{0, 1, 255, 256, 257, 65536, ids::kSessions - 1}) {
      sessions.insert(ids::copy_session(s, copy));
      for (std::uint64_t sub : std::initializer_list<std::uint64_t>{0, 1, 2, ids::kSubagents}) {
        agents.insert(ids::copy_agent(ids::agent_id(s, sub), copy));
        ++made;
      }
    }
  CHECK(agents.size() == made);
  CHECK(sessions.size() == made / 4);
  CHECK(agents.count(kNoAgent) == 0); // the largest id of every field is still not "no agent"
}

TEST_CASE("request ids: the layout is 16 copy, 32 session and 16 sub-agent bits")
{
  CHECK(ids::agent_id(3, 0) == 3ULL << 16);
  CHECK(ids::agent_id(3, 5) == (3ULL << 16) + 5);
  CHECK(ids::copy_session(7, 2) == (2ULL << 32) + 7);
  CHECK(ids::copy_agent(ids::agent_id(7, 1), 2) == (2ULL << 48) + (7ULL << 16) + 1);
  CHECK(ids::kCopies == 65536);
  CHECK(ids::kSessions == 4294967296ULL);
  CHECK(ids::kSubagents == 65534);
}

TEST_CASE("request ids: a field that does not fit is refused when the id is made")
{
  CHECK_THROWS_AS(ids::agent_id(ids::kSessions, 0), xattn::core::InternalError);
  CHECK_THROWS_AS(ids::agent_id(0, ids::kSubagents + 1), xattn::core::InternalError);
  CHECK_THROWS_AS(ids::copy_session(0, ids::kCopies), xattn::core::InternalError);
  CHECK_THROWS_AS(ids::copy_agent(1ULL << 48, 0), xattn::core::InternalError);
  CHECK_THROWS_WITH(ids::copy_agent(0, ids::kCopies), Catch::Contains("workloads/request_id.hpp"));
  CHECK_THROWS_AS(ids::session_block(ids::kLocalBlockSessions, 0), xattn::core::InternalError);
  CHECK_THROWS_AS(ids::session_block(0, ids::kLocalBlocks), xattn::core::InternalError);
}

TEST_CASE("request ids: block namespaces are apart")
{
  const std::uint64_t last_trace = ids::kTraceBlocks - 1;
  CHECK(ids::system_block(0) > last_trace);
  CHECK(ids::private_block(0) > ids::system_block(ids::kTraceBlocks - 1));
  CHECK(ids::session_block(ids::kLocalBlockSessions - 1, ids::kLocalBlocks - 1) == last_trace);
  CHECK(ids::session_block(3, 1) == (3ULL << 40) + 1);
}
