// Importer of coding-agent session traces (callanjfox/kv-cache-tester `traces/`): one JSON object
// per file, `requests[]` holding calls ("type": "n") and sub-agents ("type": "subagent") whose own
// `requests[]` count time from the sub-agent's start, nested to any depth.
#pragma once

#include "workloads/request.hpp"

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

namespace xattn::workloads
{

/// Reads one session file and serves its calls in absolute-time order (the file interleaves a
/// sub-agent's calls with its parent's, so one session is sorted in memory; a session is small).
///
/// Ids (made by workloads/request_id.hpp): the session is `session`; the main agent is
/// ids::agent_id(session, 0), the k-th sub-agent met in the file (depth first, in entry order, k
/// from 1) is ids::agent_id(session, k), its parent the agent whose `requests` list holds it; a
/// session holds at most ids::kSubagents sub-agents. With "hash_id_scope": "local" block ids
/// become ids::session_block(session, id), so that sessions never share a block by accident (ids
/// must be < 2^40). REQUIRES: session < ids::kLocalBlockSessions.
/// A sub-agent's call at nested time t arrives at (parent's placement of the sub-agent) + t.
/// Errors name the file and the entry path, e.g. "requests[12].requests[3].hash_ids".
class ClaudeCodeReader : public RequestSource
{
public:
  ClaudeCodeReader(const std::string& path, ImportOptions options = {}, std::uint64_t session = 0);
  bool next(Request& out) override;
  std::uint64_t skipped() const override { return skipped_; }
  std::vector<std::string> skip_messages() const override { return messages_; }

  /// Sub-agents found (all depths), and calls kept.
  std::uint64_t subagents() const { return subagents_; }
  std::uint64_t requests() const { return requests_.size(); }

private:
  /// A bad entry at `key` of file `path`: an error, or with skip_bad counted and noted.
  void bad(const std::string& path, bool skip, const std::string& key, const std::string& message);
  /// One call ("type": "n") at `at`, made at `t` by `agent` (child of `parent`) in `session`; false
  /// where it is bad (reported through bad()).
  bool read_call(const nlohmann::json& e, const std::string& path, bool skip, const std::string& at, double t,
                 std::uint64_t session, std::uint64_t agent, std::uint64_t parent, std::int64_t block_tokens,
                 bool local_ids);
  std::vector<Request> requests_;
  std::size_t pos_ = 0;
  std::uint64_t subagents_ = 0;
  std::uint64_t skipped_ = 0;
  std::vector<std::string> messages_;
};

} // namespace xattn::workloads
