// Schema-first YAML reading: every section of every input file is read through a Section, which
// knows the section's table of fields {key, kind, unit, default, meaning}. That table is at once
// the allow-list (unknown and duplicate keys are errors), the source of defaults, and the text of
// `xattn <cmd> --describe`. Problems are collected into Diagnostics with file, line, column and
// key path; the loader throws them all together at the end.
#pragma once

#include "sim/core/error.hpp"
#include "sim/core/schema.hpp"
#include "sim/core/units.hpp"

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace xattn::core
{
struct Hardware;

/// A parsed YAML file. `file` is the name used in diagnostics.
struct Document {
  std::string file;
  YAML::Node root;
};

/// Reads and parses a YAML file. Throws InputError (with line and column) when the file cannot be
/// opened or is not valid YAML.
Document load_yaml(const std::filesystem::path& path);
/// Same, from text already in memory; `name` stands for the file in diagnostics.
Document parse_yaml(const std::string& text, std::string name);

/// Applies a `--set a.b.c=value` override to a document (value parsed as YAML). Throws InputError
/// for a malformed assignment.
void apply_override(Document& doc, std::string_view assignment);

/// What is wrong with `name` as the name of one folder (a run id, a study's name under out/), or
/// "" when nothing is: 1 to 64 letters, digits, '.', '_' or '-', and not '.' or '..' (so that a
/// name never climbs out of its parent or into another folder).
std::string folder_name_problem(std::string_view name);

/// One mapping node read against its schema.
class Section
{
public:
  /// Checks at once that `node` is a mapping (or absent: then every key takes its default), that
  /// no key is unknown or repeated. Problems go to `diags`.
  Section(const std::string& file, YAML::Node node, std::string path, const Schema& schema, Diagnostics& diags);

  bool has(std::string_view key) const;

  double number(std::string_view key); ///< kQuantity with kCount, or kInteger
  std::int64_t integer(std::string_view key);
  /// An integer that must fit an `int` (a count of GPUs, layers, streams): larger is an error,
  /// never a silent wrap-around.
  int count(std::string_view key);
  Seconds seconds(std::string_view key);
  Bytes bytes(std::string_view key);
  BytesPerSec rate(std::string_view key);
  FlopsPerSec flops(std::string_view key);
  std::string string(std::string_view key);
  /// A string that names a folder (a study's name: out/<name>/): folder_name_problem() holds.
  std::string folder_name(std::string_view key);
  bool boolean(std::string_view key);
  std::string choice(std::string_view key);

  Section section(std::string_view key);
  /// For kNameOrSection: true when the value is an inline mapping (read it with section()),
  /// false when it is a name (read it with string()).
  bool is_inline(std::string_view key) const;
  /// Elements of a kList of mappings.
  std::vector<Section> sections(std::string_view key);
  /// Entries of a kMap, in file order.
  std::vector<std::pair<std::string, Section>> named_sections(std::string_view key);
  /// Elements of a kList of scalars, each parsed as `dim` (with the field's check).
  std::vector<double> numbers(std::string_view key, Dimension dim);
  std::vector<std::string> strings(std::string_view key);

  /// Checks `value` (read from `key`) against what hardware of class `hw` has (plausible.hpp): a
  /// warning at the key when outside, or an error under --strict.
  void plausible(std::string_view key, const Hardware& hw, double value);
  /// Records an error at the value of `key` (or at this section, when `key` is absent).
  void error(std::string_view key, std::string message);
  const std::string& path() const { return path_; }
  std::string key_path(std::string_view key) const;
  const std::string& file() const { return file_; }
  Diagnostics& diagnostics() { return *diags_; }
  /// 1-based line of the section itself (0 if unknown).
  int line() const { return line_; }

private:
  struct Entry {
    std::string key;
    YAML::Node value;
    int line = 0, column = 0;
  };
  const Field& field(std::string_view key, FieldKind kind) const;
  const Entry* find(std::string_view key) const;
  /// The scalar text of a key's value, or its default; nullopt when absent with no default or on
  /// a type error (already reported).
  std::optional<std::string> scalar(std::string_view key, const Field& f);
  /// The value, or nullopt when it is absent without a default or wrong (already reported: a bad
  /// unit, a negative, out of its Range).
  std::optional<double> quantity(std::string_view key, Dimension dim);
  void position(const Entry* e, int& line, int& column) const;

  std::string file_;
  std::string path_;
  const Schema* schema_;
  Diagnostics* diags_;
  std::vector<Entry> entries_;
  std::vector<std::string> failed_; ///< keys an error was recorded at (plausible() skips them)
  int line_ = 0, column_ = 0;
};

} // namespace xattn::core
