// The trace formats xattn reads, by name, and opening any of them as a RequestSource.
#pragma once

#include "workloads/request.hpp"

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace xattn::workloads
{

enum class TraceFormat { kXattn, kMooncake, kClaudeCode, kAzure };

/// "xattn", "mooncake", "claude-code", "azure".
std::string_view format_name(TraceFormat f);
std::optional<TraceFormat> parse_format(std::string_view name);
/// The names, "mooncake|claude-code|azure|xattn", for help texts.
std::string_view format_names();

/// Guesses a file's format from its name, a compression suffix (.gz, .xz, .zst) aside: .csv is
/// azure, .json claude-code, and a .jsonl whose first line holds "xattn_trace" is xattn, another
/// .jsonl mooncake. Throws core::InputError when unsure.
TraceFormat guess_format(const std::string& path);

/// Opens `path` as a stream of requests. `options` applies to foreign formats (the own format is
/// always strict). Every format may come compressed with gzip, xz or zstd, recognised by the
/// file's first bytes. Throws core::InputError when the file cannot be opened or read, or is a
/// corrupt or truncated archive.
std::unique_ptr<RequestSource> open_trace(const std::string& path, TraceFormat format, ImportOptions options = {});

} // namespace xattn::workloads
