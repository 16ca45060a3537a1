#include "workloads/trace_format.hpp"

#include "sim/core/error.hpp"
#include "sim/core/registry.hpp"
#include "workloads/line_reader.hpp"

#include <filesystem>
#include <vector>

namespace xattn::workloads
{

#define XATTN_TRACE_FORMAT(id) TraceFormatInfo format_##id();
#include "workloads/formats.def"
#undef XATTN_TRACE_FORMAT

std::span<const TraceFormatInfo> trace_formats()
{
  static const std::vector<TraceFormatInfo> all{
#define XATTN_TRACE_FORMAT(id) format_##id(),
#include "workloads/formats.def"
#undef XATTN_TRACE_FORMAT
  };
  return all;
}

TraceFormat::TraceFormat() : TraceFormat(*parse_format("xattn")) {}

std::optional<TraceFormat> parse_format(std::string_view name)
{
  if (const TraceFormatInfo* f = core::find_named(trace_formats(), name)) return TraceFormat(*f);
  return std::nullopt;
}

std::string_view format_names()
{
  static const std::string names = core::joined_names(trace_formats(), "|");
  return names;
}

namespace
{
// The first line of `path`, or "" where it cannot be read: the reader, which starts at the same
// place, then says why.
std::string first_line(const std::string& path)
{
  try {
    LineReader lines(path);
    std::string_view first;
    if (lines.next(first)) return std::string(first);
  } catch (const core::InputError&) {
  }
  return "";
}
} // namespace

TraceFormat guess_format(const std::string& path)
{
  // The compression comes from the content; a compression suffix only hides the format's own.
  std::filesystem::path name(path);
  for (const char* z : {".gz", ".xz", ".zst"})
    if (name.extension() == z) name = name.stem();
  const std::string ext = name.extension().string();
  const TraceFormatInfo* fallback = nullptr;
  std::optional<std::string> first;
  for (const TraceFormatInfo& f : trace_formats()) {
    if (f.extension != ext) continue;
    if (f.first_line_mark.empty()) {
      fallback = &f;
      continue;
    }
    if (!first) first = first_line(path);
    if (first->find(f.first_line_mark) != std::string::npos) return TraceFormat(f);
  }
  if (fallback != nullptr) return TraceFormat(*fallback);
  core::fail(path, 0, 0, "",
             "cannot tell the trace format from the name: give --format " + std::string(format_names()));
}

std::unique_ptr<RequestSource> open_trace(const std::string& path, TraceFormat format, OpenOptions options)
{
  return format.info().open(path, options);
}

} // namespace xattn::workloads
