// Writing an output file so that readers only ever see the old file or the complete new one:
// the text goes to a temporary name in the same folder, is flushed to the disk (fsync), then
// rename() puts it in place and the folder is flushed too. A process killed at any moment (kill -9)
// leaves the old file or the new one, never a part, plus at most a temporary file that no reader
// takes for a result (".NAME.tmpPID"); after a crash of the machine the same holds for what the
// disk kept.
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

/// The temporary name of `path` for this process: ".NAME.tmpPID" in the same folder.
std::filesystem::path temporary_name(const std::filesystem::path& path);

/// Puts a finished temporary file in place as write_file_atomically does: flushes `tmp` to the disk,
/// renames it to `path`, flushes the folder. On failure `tmp` is removed and InputError names `path`.
void commit_file(const std::filesystem::path& tmp, const std::filesystem::path& path, std::string_view key = "");

/// The folder in which `xattn run` gathers its policies' parts before it writes its outputs:
/// ".partial-PID" inside the output folder.
std::filesystem::path partial_folder(const std::filesystem::path& out_dir);

/// Removes the temporaries in `dir` (not below it): files named ".NAME.tmpPID" and folders named
/// ".partial-PID". With `dead_only`, only those whose process no longer runs on this machine.
/// Returns how many it removed. REQUIRES: without `dead_only`, no other process writes into `dir`.
int remove_temporaries(const std::filesystem::path& dir, bool dead_only);

} // namespace xattn::core
