// Writing an output file so that readers only ever see the old file or the complete new one:
// the text goes to a temporary name in the same folder, then rename() puts it in place.
#pragma once

#include <filesystem>
#include <functional>
#include <ostream>
#include <string_view>

namespace xattn::core
{

/// Writes `text` to `path` atomically. On any failure the temporary file is removed, `path` is
/// left as it was, and InputError names `path` and `key` (the flag that chose it, e.g. "--dot").
void write_file_atomically(const std::filesystem::path& path, std::string_view text, std::string_view key = "");
/// The same for a file too large to hold in memory: `fill` streams it. An exception from `fill`
/// removes the temporary file and propagates.
void write_file_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& fill,
                           std::string_view key = "");

} // namespace xattn::core
