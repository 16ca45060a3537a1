#include "workloads/trace_format.hpp"

#include "workloads/azure.hpp"
#include "workloads/claude_code.hpp"
#include "workloads/mooncake.hpp"
#include "workloads/xattn_trace.hpp"

#include <filesystem>

namespace xattn::workloads
{

std::string_view format_name(TraceFormat f)
{
  switch (f) {
  case TraceFormat::kXattn:
    return "xattn";
  case TraceFormat::kMooncake:
    return "mooncake";
  case TraceFormat::kClaudeCode:
    return "claude-code";
  case TraceFormat::kAzure:
    return "azure";
  }
  return "?";
}

std::string_view format_names()
{
  return "mooncake|claude-code|azure|xattn";
}

std::optional<TraceFormat> parse_format(std::string_view name)
{
  for (TraceFormat f : {TraceFormat::kXattn, TraceFormat::kMooncake, TraceFormat::kClaudeCode, TraceFormat::kAzure})
    if (format_name(f) == name) return f;
  return std::nullopt;
}

TraceFormat guess_format(const std::string& path)
{
  // The compression comes from the content; a compression suffix only hides the format's own.
  std::filesystem::path name(path);
  for (const char* z : {".gz", ".xz", ".zst"})
    if (name.extension() == z) name = name.stem();
  const std::string ext = name.extension().string();
  if (ext == ".csv") return TraceFormat::kAzure;
  if (ext == ".json") return TraceFormat::kClaudeCode;
  if (ext == ".jsonl") {
    try {
      LineReader lines(path);
      std::string_view first;
      if (lines.next(first) && first.find("\"xattn_trace\"") != std::string_view::npos) return TraceFormat::kXattn;
    } catch (const core::InputError&) {
      // Unreadable (missing, a truncated archive): the reader, which starts at the same place,
      // says why; the name alone says JSONL.
    }
    return TraceFormat::kMooncake;
  }
  core::fail(path, 0, 0, "",
             "cannot tell the trace format from the name: give --format " + std::string(format_names()));
}

std::unique_ptr<RequestSource> open_trace(const std::string& path, TraceFormat format, ImportOptions options)
{
  switch (format) {
  case TraceFormat::kXattn:
    return std::make_unique<XattnTraceReader>(path);
  case TraceFormat::kMooncake:
    return std::make_unique<MooncakeReader>(path, options);
  case TraceFormat::kClaudeCode:
    return std::make_unique<ClaudeCodeReader>(path, options);
  case TraceFormat::kAzure:
    return std::make_unique<AzureReader>(path, options);
  }
  core::fail(path, 0, 0, "", "unknown trace format");
}

} // namespace xattn::workloads
