// The one owner of the bits of the ids a request carries (Request::session, agent, parent_agent)
// and of the block ids that readers namespace. Every reader, the generator and the overlay of
// copies (sim/engine/source.cpp) make ids through these functions, which check that each field
// fits: two places packing one id is how ids collide.
//
//   session id = | copy (16 bits) | session (32 bits) |                       48 bits used
//   agent id   = | copy (16 bits) | session (32 bits) | sub-agent (16 bits) |  64 bits
//
// `session` numbers the conversations of one workload (a trace or the generator), `sub-agent` is 0
// for a session's main agent and k for the k-th sub-agent it spawned (at any depth), `copy` is the
// overlay copy of the workload (workload.copies; 0 for the workload itself). Sub-agent 0xFFFF is
// never made, so kNoAgent (all ones) is never a real agent.
//
//   block id (a content id: the same id in two requests is the same tokens):
//     | 0 0 0 | trace or corpus block (61 bits) |   as the trace numbers them, shared by all copies
//     | 0 0 1 | system-prompt block             |   the generator's shared system prompt
//     | 0 1 0 | private block                   |   the generator's per-agent context
//   a session file's "local" block ids, inside the trace namespace:
//     | 0 0 0 | session (21 bits) | local id (40 bits) |
#pragma once

#include "sim/core/check.hpp"

#include <cstdint>

namespace xattn::workloads::ids
{

inline constexpr int kSubagentBits = 16;
inline constexpr int kSessionBits = 32;
inline constexpr int kCopyBits = 16;
static_assert(kSubagentBits + kSessionBits + kCopyBits == 64);

/// Sessions one workload may hold (ids 0 .. kSessions - 1).
inline constexpr std::uint64_t kSessions = 1ULL << kSessionBits;
/// Sub-agents one session may spawn (ids 1 .. kSubagents; 0 is the main agent).
inline constexpr std::uint64_t kSubagents = (1ULL << kSubagentBits) - 2;
/// Overlaid copies of a workload (workload.copies at most this).
inline constexpr std::uint64_t kCopies = 1ULL << kCopyBits;

/// True when `session` is a session id of one workload (before copies).
constexpr bool session_fits(std::uint64_t session)
{
  return session < kSessions;
}
/// True when `agent` is an agent id of one workload (below the copy field).
constexpr bool agent_fits(std::uint64_t agent)
{
  return agent < (1ULL << (kSessionBits + kSubagentBits));
}

/// The agent id of sub-agent `sub` (0: the main agent) of `session`.
/// REQUIRES: session_fits(session), sub <= kSubagents.
inline std::uint64_t agent_id(std::uint64_t session, std::uint64_t sub)
{
  XATTN_CHECK(session_fits(session) && sub <= kSubagents, "agent id fields out of range (workloads/request_id.hpp)");
  return (session << kSubagentBits) | sub;
}

/// The session id of copy `copy` of a workload's `session`.
/// REQUIRES: copy < kCopies, session_fits(session).
inline std::uint64_t copy_session(std::uint64_t session, std::uint64_t copy)
{
  XATTN_CHECK(copy < kCopies && session_fits(session), "session id of a copy out of range (workloads/request_id.hpp)");
  return (copy << kSessionBits) | session;
}

/// The agent id of copy `copy` of a workload's `agent`.
/// REQUIRES: copy < kCopies, agent_fits(agent).
inline std::uint64_t copy_agent(std::uint64_t agent, std::uint64_t copy)
{
  XATTN_CHECK(copy < kCopies && agent_fits(agent), "agent id of a copy out of range (workloads/request_id.hpp)");
  return (copy << (kSessionBits + kSubagentBits)) | agent;
}

// Block ids.
inline constexpr int kNamespaceShift = 61;
inline constexpr std::uint64_t kTraceBlocks = 1ULL << kNamespaceShift; ///< trace and corpus ids are below this
inline constexpr std::uint64_t kSystemBlockBase = 1ULL << kNamespaceShift;
inline constexpr std::uint64_t kPrivateBlockBase = 2ULL << kNamespaceShift;

/// The k-th block of the generator's system prompt. REQUIRES: k < kTraceBlocks.
inline std::uint64_t system_block(std::uint64_t k)
{
  XATTN_CHECK(k < kTraceBlocks, "system-prompt block number out of range");
  return kSystemBlockBase + k;
}
/// The k-th private block the generator made. REQUIRES: k < kTraceBlocks.
inline std::uint64_t private_block(std::uint64_t k)
{
  XATTN_CHECK(k < kTraceBlocks, "private block number out of range");
  return kPrivateBlockBase + k;
}

inline constexpr int kLocalBlockBits = 40;
/// Local block ids a session file may use (0 .. kLocalBlocks - 1).
inline constexpr std::uint64_t kLocalBlocks = 1ULL << kLocalBlockBits;
/// Sessions whose local block ids stay in the trace namespace (0 .. kLocalBlockSessions - 1).
inline constexpr std::uint64_t kLocalBlockSessions = 1ULL << (kNamespaceShift - kLocalBlockBits);

/// A session file's local block id made unique over the whole trace.
/// REQUIRES: session < kLocalBlockSessions, local < kLocalBlocks.
inline std::uint64_t session_block(std::uint64_t session, std::uint64_t local)
{
  XATTN_CHECK(session < kLocalBlockSessions && local < kLocalBlocks, "local block id fields out of range");
  return (session << kLocalBlockBits) | local;
}

} // namespace xattn::workloads::ids
