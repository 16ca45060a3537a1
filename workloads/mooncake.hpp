// Importer of Mooncake JSONL traces (kvcache-ai/Mooncake FAST'25 release): one request per line,
// {"timestamp": ms, "input_length": tokens, "output_length": tokens, "hash_ids": [512-token blocks]}.
#pragma once

#include "workloads/json_line.hpp"
#include "workloads/line_reader.hpp"
#include "workloads/request.hpp"

namespace xattn::workloads
{

/// Streams a Mooncake trace. Each request is its own session and agent (the format has neither);
/// hash ids are global and kept as they are. Blank lines are ignored. Errors (bad JSON, a missing
/// or mistyped field, a negative id, a timestamp going backwards) name the file and line.
class MooncakeReader : public LineRequestSource
{
public:
  static constexpr std::int64_t kBlockTokens = 512;

  explicit MooncakeReader(const std::string& path, ImportOptions options = {});

private:
  bool read_line(std::string_view line, Request& out) override;
  FlatJsonParser parser_;
  double last_ms_ = 0.0;
};

} // namespace xattn::workloads
