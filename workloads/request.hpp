// The unit of load: one request of one agent, and the pull interface every trace reader,
// importer and generator implements, so that the engine draws requests one at a time, in arrival
// order, in constant memory (docs/architecture.md, "Data flow").
#pragma once

#include "sim/core/units.hpp"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace xattn::workloads
{

/// "No agent" for Request::parent_agent (a top-level agent has no parent).
inline constexpr std::uint64_t kNoAgent = std::numeric_limits<std::uint64_t>::max();

/// One LLM call. Block ids are unique over the whole trace: the same id in two requests means
/// the same `block_tokens` tokens of content (prefix or corpus reuse). Readers namespace ids that
/// their source numbers per session (coding-agent traces) so that this holds.
struct Request {
  std::uint64_t id = 0;                  ///< position in the stream, 0-based
  core::Seconds arrival{0.0};            ///< s since trace start; never decreases along a stream
  std::uint64_t session = 0;             ///< a conversation: stays on one requester
  std::uint64_t agent = 0;               ///< the agent issuing the call (top-level or sub-agent)
  std::uint64_t parent_agent = kNoAgent; ///< the spawning agent of a sub-agent, else kNoAgent
  std::int64_t block_tokens = 0;         ///< tokens per block id (0: the trace has no block ids)
  std::vector<std::uint64_t> blocks;     ///< context as block ids, in prompt order
  std::int64_t input_tokens = 0;         ///< prompt length, tokens (may exceed blocks × block_tokens)
  std::int64_t output_tokens = 0;        ///< tokens generated
  core::Seconds think{0.0};              ///< s the client waited before sending it (0: not known)

  bool is_subagent() const { return parent_agent != kNoAgent; }
};

/// A stream of requests in non-decreasing arrival order. Implementations keep their memory
/// independent of the stream's length (a session file importer holds one session).
class RequestSource
{
public:
  virtual ~RequestSource() = default;
  /// Fills `out` with the next request and returns true, or returns false at the end. `out`'s
  /// buffers are reused (no allocation per request in steady state). Throws core::InputError on
  /// bad input, naming the file and line or entry.
  virtual bool next(Request& out) = 0;
  /// Entries skipped as unreadable (only with ImportOptions::skip_bad; always 0 otherwise).
  virtual std::uint64_t skipped() const { return 0; }
  /// The first few skip diagnostics, rendered ("file:line: error: ..."), for the report.
  virtual std::vector<std::string> skip_messages() const { return {}; }
};

/// Options shared by the importers of foreign formats.
struct ImportOptions {
  bool skip_bad = false; ///< count and skip unreadable entries instead of failing on the first
  /// Formats without sessions (Mooncake): a request whose block ids extend the whole of an earlier
  /// request's continues that request's session; else each request is its own session.
  bool prefix_sessions = false;
};

} // namespace xattn::workloads
