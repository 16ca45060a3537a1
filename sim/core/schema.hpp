// The schema of an input file's section: its table of fields {key, kind, unit, default, meaning,
// range}, which sim/core/yaml.hpp's Section reads a YAML mapping against and --describe renders.
// Its own header, without yaml-cpp, so that the headers declaring a section's schema and reader
// (model.hpp, profile.hpp, spec.hpp, ...) do not bring yaml-cpp into every file that includes them.
#pragma once

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"

#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace xattn::core
{

enum class FieldKind {
  kQuantity, ///< a number with the unit of `dim` (kCount: unitless)
  kInteger,  ///< a whole unitless number
  kString,
  kBool,
  kChoice,        ///< one of `choices` ("a|b|c")
  kSection,       ///< a nested mapping read with `sub`
  kList,          ///< a sequence (of `sub` mappings when sub is set)
  kMap,           ///< a mapping of user-chosen names to `sub` mappings
  kNameOrSection, ///< a preset name or path (a string), or an inline `sub` mapping
};

enum class Check { kNone, kPositive };

/// The values a number may take, and why. Every numeric key of the scenario schema has one (a test
/// walks the schema): --describe shows it, and a value outside it is bad input whose message gives
/// the reason. Both ends are inclusive; Check::kPositive also excludes zero (a minimum of 0,
/// exclusive). Without a reason the range is the default [0, inf): negatives are refused by the
/// unit parser, and kInteger and count() keep their own ceilings (9e15, INT_MAX).
struct Range {
  double min = 0;
  double max = std::numeric_limits<double>::infinity();
  std::string_view why = {}; ///< the reason for the range, in a few words
  bool bounded() const { return !why.empty(); }
};

/// Ranges that several schemas share.
inline constexpr Range kShareRange{0, 1, "a share of a whole"};
/// A server's CPU memory (a topology's host_memory, the share of it a scenario gives KV).
inline constexpr Range kHostMemoryRange{0, 1e15, "servers hold 16 GB to 64 TB; a PB is a typo"};
inline constexpr Range kSeedRange{0, 9007199254740992.0,
                                  "a whole number a double holds exactly (2^53): YAML numbers are read as doubles"};
inline constexpr Range kTokensRange{1, 16777216, "2^24 tokens is past every model's context window"};

struct Field;
using Schema = std::vector<Field>;

/// Default-text sentinels: kRequired (the key must be present) and kNoDefault (optional, absent
/// means "not set").
inline constexpr std::string_view kRequired = "";
inline constexpr std::string_view kNoDefault = "~";

/// A kChoice field's `choices` ("a|b|c") from a table of (name, value) pairs, in its order: the
/// table stays the one list of the names.
template <typename Table>
std::string choices_of(const Table& table)
{
  std::string out;
  for (const auto& entry : table)
    out += (out.empty() ? "" : "|") + std::string(entry.first);
  return out;
}

struct Field {
  std::string_view key;
  FieldKind kind = FieldKind::kQuantity;
  Dimension dim = Dimension::kCount;
  std::string_view def = kRequired; ///< default as it would be written in the file
  std::string_view meaning;
  Check check = Check::kNone;
  std::string_view choices = {};
  const Schema* sub = nullptr;
  Range range = {}; ///< numbers only (kQuantity, kInteger, lists of numbers)
  /// A name the key had before (empty: none): a file that still uses it is read as if it used
  /// `key`, with a warning naming the new one.
  std::string_view former = {};
};

/// A parsed YAML file and one mapping of it read against its schema (sim/core/yaml.hpp).
struct Document;
class Section;

/// Renders a schema as an aligned table (nested sections indented), for --describe; a number's type
/// carries its range ("integer [1, 1024]") and its meaning the reason for it.
std::string describe(const Schema& schema, const std::string& title);

/// The range of a field as --describe shows it ("[1, 1024]", "(0s, 1h]"); empty when unbounded.
std::string range_text(const Field& f);

/// Calls `visit(path, field)` for every field of `schema` and its sub-schemas, depth first
/// ("workload.generator.requests").
template <class F>
void walk(const Schema& schema, F&& visit, const std::string& prefix = "")
{
  for (const Field& f : schema) {
    const std::string path = prefix.empty() ? std::string(f.key) : prefix + "." + std::string(f.key);
    visit(path, f);
    if (f.sub != nullptr) walk(*f.sub, visit, path);
  }
}

} // namespace xattn::core
