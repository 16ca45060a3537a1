// Parsing one JSONL line of a flat object ({"key": scalar, "ids": [int, ...]}) straight into
// fields, without building a JSON tree: the fast path of the Mooncake and xattn readers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace xattn::workloads
{

/// nlohmann's exception text as a user reads it: without the "[json.exception.parse_error.101] parse
/// error at line 1, column 7: " prefix, and with bytes that are not printable ASCII (binary
/// garbage in a trace) written as \xNN so that the message stays one clean terminal line.
std::string json_error_text(const std::string& what);

/// One top-level value of a flat JSON line.
struct JsonValue {
  enum class Kind { kMissing, kNull, kInteger, kFloat, kString, kBool, kArray, kObject };
  Kind kind = Kind::kMissing;
  std::int64_t integer = 0;          ///< kInteger (also set, truncated, for kFloat)
  double number = 0.0;               ///< kInteger and kFloat
  bool negative_in_array = false;    ///< kArray: an element was negative
  bool non_integer_in_array = false; ///< kArray: an element was not a whole number
  bool is_number() const { return kind == Kind::kInteger || kind == Kind::kFloat; }
};

/// Reads flat JSON objects whose keys are known in advance. One key may hold an array of
/// non-negative integers, appended to a caller-owned vector (reused between lines).
class FlatJsonParser
{
public:
  /// `keys`: the keys of interest; `array_key`: the one whose integer array is collected.
  FlatJsonParser(std::vector<std::string> keys, std::string array_key);

  /// Parses `line`. On success returns true; values() holds one JsonValue per key (kMissing when
  /// absent) and `array` the collected integers. On a syntax error returns false with error()
  /// and error_column() (1-based) set. Unknown keys are counted in unknown_keys().
  bool parse(std::string_view line, std::vector<std::uint64_t>& array);

  const std::vector<JsonValue>& values() const { return values_; }
  const std::string& error() const { return error_; }
  int error_column() const { return error_column_; }
  /// The first unknown key of the last line, empty when none.
  const std::string& unknown_key() const { return unknown_key_; }
  /// Words for a value kind ("a string", "an array"), for messages.
  static const char* kind_name(JsonValue::Kind k);
  /// What a value was, for "expected ..., got X" messages: the number itself ("-600", "2.5"),
  /// else its kind ("a string").
  static std::string describe(const JsonValue& v);

private:
  friend struct FlatSax;
  std::vector<std::string> keys_;
  std::string array_key_;
  std::vector<JsonValue> values_;
  std::string error_;
  int error_column_ = 0;
  std::string unknown_key_;
};

} // namespace xattn::workloads
