// How a schema field reads to a user: its kind, its range, the bound a value broke. Shared by the
// YAML reader (its error messages, yaml.cpp) and the schema listing (`describe`, schema_text.cpp).
#pragma once

#include "sim/core/schema.hpp"

#include <optional>
#include <string>

namespace xattn::core
{

/// "time", "integer", "step|layer": the kind of value a field takes.
std::string kind_name(const Field& f);
/// "a time", "an integer", "one of step|layer": the kind as it reads after "expected".
std::string kind_with_article(const Field& f);
/// Why `v` lies outside the field's range ("must be at most 1024, got '5000' (REASON)"), if it does.
std::optional<std::string> out_of_range(const Field& f, Dimension dim, double v, const std::string& text);
/// The dimension a field's values carry (an integer is a count).
Dimension dimension_of(const Field& f);

} // namespace xattn::core
