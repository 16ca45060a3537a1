// Importer of Mooncake JSONL traces (kvcache-ai/Mooncake FAST'25 release): one request per line,
// {"timestamp": ms, "input_length": tokens, "output_length": tokens, "hash_ids": [512-token blocks]}.
#pragma once

#include "workloads/json_line.hpp"
#include "workloads/line_reader.hpp"
#include "workloads/request.hpp"

#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace xattn::workloads
{

/// Streams a Mooncake trace. Each request is its own session and agent (the format has neither),
/// or with ImportOptions::prefix_sessions a request continues the session of the longest earlier
/// request whose full blocks it begins with (a turn after the conversation so far: Mooncake hashes
/// each 512-token block with its prefix, so a block id stands for the prefix it ends, and the
/// earlier prompt's partial last block is filled in by the next turn), provided the last of them
/// was first seen in that request: every request of the conversation trace begins with one shared
/// block, which would otherwise make the trace one session. It then holds every block id seen and
/// an entry per request, the one memory here that grows with the trace. Hash ids are global and
/// kept as they are. Blank lines are ignored. Errors (bad JSON, a missing or mistyped field, a
/// negative id, a timestamp going backwards) name the file and line.
class MooncakeReader : public LineRequestSource
{
public:
  static constexpr std::int64_t kBlockTokens = 512;

  explicit MooncakeReader(const std::string& path, ImportOptions options = {});

private:
  bool read_line(std::string_view line, Request& out) override;
  FlatJsonParser parser_;
  double last_ms_ = 0.0;
  bool prefix_sessions_;
  /// prefix_sessions: a request's last full block id -> its session and its number of full blocks;
  /// every block id seen.
  std::unordered_map<std::uint64_t, std::pair<std::uint64_t, std::size_t>> ends_;
  std::unordered_set<std::uint64_t> seen_;
};

} // namespace xattn::workloads
