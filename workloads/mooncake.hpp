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
class MooncakeReader : public RequestSource
{
public:
  static constexpr std::int64_t kBlockTokens = 512;

  explicit MooncakeReader(const std::string& path, ImportOptions options = {});
  bool next(Request& out) override;
  std::uint64_t skipped() const override { return skips_.count(); }
  std::vector<std::string> skip_messages() const override { return skips_.messages(); }

private:
  bool read_line(std::string_view line, Request& out);
  LineReader lines_;
  SkipLog skips_;
  FlatJsonParser parser_;
  std::uint64_t next_id_ = 0;
  double last_ms_ = 0.0;
};

} // namespace xattn::workloads
