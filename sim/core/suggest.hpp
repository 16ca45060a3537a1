// "Did you mean" for names a user typed: scenario keys, policies, presets, subcommand values.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace xattn::core
{

/// Levenshtein distance between two names.
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate nearest `typed` when it is within 2 edits, else empty.
std::string closest(std::string_view typed, const std::vector<std::string>& candidates);

/// "(did you mean 'x'?; LABEL: a, b, c)", the hint only where one is close.
std::string hint_and_list(std::string_view typed, const std::vector<std::string>& candidates, std::string_view label);

/// "unknown KIND 'typed' (did you mean 'x'?; expected one of: a, b, c)", the hint only where
/// one is close.
std::string unknown_name(std::string_view kind, std::string_view typed, const std::vector<std::string>& candidates);

} // namespace xattn::core
