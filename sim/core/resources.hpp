// Finding the files that ship with xattn (model presets, profiles, topology presets, scenarios,
// the bundled trace data sets) from an installed binary as well as from a build tree, and the
// one lookup of a data file that an input names. Every such lookup goes through this file.
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

namespace xattn::core
{

/// Folders searched for shipped data, in order: $XATTN_DATA_DIR, <exe>/../share/xattn (installed),
/// the source tree the binary was built from.
std::vector<std::filesystem::path> data_dirs();

/// The first existing `<dir>/<relative>` over data_dirs(), if any.
std::optional<std::filesystem::path> find_data(std::string_view relative);

/// Resolves a user's NAME-or-PATH argument: an existing path is taken as is; otherwise
/// `<folder>/<name><extension>` is looked up with find_data (so `--model deepseek-v3` finds
/// sim/models/deepseek-v3.yaml). Returns nullopt when neither exists.
std::optional<std::filesystem::path> resolve_preset(std::string_view name_or_path, std::string_view folder,
                                                    std::string_view extension = ".yaml");

/// Names of the presets in a data folder (file stems), sorted, for error messages.
std::vector<std::string> list_presets(std::string_view folder, std::string_view extension = ".yaml");

/// "no KIND file or preset named 'NAME' (did you mean 'x'?; presets: a, b)": what resolve_preset's
/// callers say when it finds nothing.
std::string no_preset_message(std::string_view kind, std::string_view name, std::string_view folder);

/// The folder of bundled trace data sets, relative to a data_dirs() folder.
inline constexpr std::string_view kTraceDataFolder = "workloads/data";

/// Folders holding trace data sets (one sub-folder per set), in lookup order: $XATTN_DATA (the
/// user's own, laid out like workloads/data), then kTraceDataFolder under each data_dirs() folder
/// (so the installed <exe>/../share/xattn/workloads/data, then the source tree's).
std::vector<std::filesystem::path> trace_data_dirs();

/// Finds a data file that an input names (a trace on the command line; meant for a scenario's
/// `workload.trace` too, with `beside` the scenario's folder). An absolute path is only itself.
/// A relative one is tried relative to `beside` (the folder of the file that names it; empty:
/// the working directory), then under each trace_data_dirs() folder, so that
/// `mooncake/conversation_trace.jsonl.zst` finds the bundled trace. Returns nullopt when no
/// candidate is a regular file. Never throws.
std::optional<std::filesystem::path> find_input(std::string_view path, const std::filesystem::path& beside = {});

} // namespace xattn::core
