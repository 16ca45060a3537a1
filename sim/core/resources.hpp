// Finding the files that ship with xattn (model presets, profiles, topology presets, scenarios)
// from an installed binary as well as from a build tree.
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

namespace xattn::core {

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

} // namespace xattn::core
