// The trace formats xattn reads, by name, and opening any of them as a RequestSource.
//
// One registry (formats.def), the way sim/policy picks a policy: a format is its reader's file,
// which defines `TraceFormatInfo format_<id>()`, and one line in formats.def. The scenario schema,
// `xattn trace`, the data sets' manifests and the guess from a file's name all read the registry.
#pragma once

#include "workloads/request.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace xattn::workloads
{

/// How a trace is opened: `import` applies to foreign formats (the own format is always strict);
/// `session` namespaces the ids of a format that holds one session per file (TraceFormatInfo::sessions).
struct OpenOptions {
  ImportOptions import;
  std::uint64_t session = 0;
};

/// One format.
struct TraceFormatInfo {
  std::string_view name; ///< as scenarios and the command line spell it
  /// The file name's extension (a compression suffix aside) that guess_format() takes for this format.
  std::string_view extension;
  /// Where several formats share an extension: a text the first line holds in this format; empty
  /// for the extension's fallback (at most one per extension).
  std::string_view first_line_mark;
  bool sessions = false; ///< one session per file: OpenOptions::session applies
  std::unique_ptr<RequestSource> (*open)(const std::string& path, const OpenOptions& options) = nullptr;
};

/// Every format, in the registry's order.
std::span<const TraceFormatInfo> trace_formats();

/// A format: a handle on its registry entry, compared by identity. Default: the own format.
class TraceFormat
{
public:
  TraceFormat();
  explicit TraceFormat(const TraceFormatInfo& info) : info_(&info) {}
  const TraceFormatInfo& info() const { return *info_; }
  std::string_view name() const { return info_->name; }
  friend bool operator==(TraceFormat a, TraceFormat b) { return a.info_ == b.info_; }

private:
  const TraceFormatInfo* info_;
};

/// The format named `name`, if the registry has it.
std::optional<TraceFormat> parse_format(std::string_view name);
/// The names, "mooncake|claude-code|azure|xattn", in the registry's order, for help texts and
/// schema choices.
std::string_view format_names();

/// Guesses a file's format from its name, a compression suffix (.gz, .xz, .zst) aside, by each
/// format's extension; where formats share one, by their first-line marks (.jsonl: a first line
/// holding "xattn_trace" is xattn, another mooncake). Throws core::InputError when unsure.
TraceFormat guess_format(const std::string& path);

/// Opens `path` as a stream of requests. Every format may come compressed with gzip, xz or zstd,
/// recognised by the file's first bytes. Throws core::InputError when the file cannot be opened or
/// read, or is a corrupt or truncated archive.
std::unique_ptr<RequestSource> open_trace(const std::string& path, TraceFormat format, OpenOptions options = {});

} // namespace xattn::workloads
