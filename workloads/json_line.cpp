#include "workloads/json_line.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>

namespace xattn::workloads
{

std::string json_error_text(const std::string& what)
{
  std::string_view w = what;
  if (w.rfind("[json.exception.", 0) == 0)
    if (auto close = w.find("] "); close != std::string_view::npos) w.remove_prefix(close + 2);
  if (w.rfind("parse error", 0) == 0)
    if (auto at = w.find(": "); at != std::string_view::npos) w.remove_prefix(at + 2);
  std::string out;
  out.reserve(w.size());
  for (unsigned char c : w) {
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      static const char* const kHex = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// SAX handler: depth 1 is the line's object; a value at depth 1 is stored, an array under the
// array key collects integers; anything nested deeper is skipped (its kind recorded).
struct FlatSax {
  using json = nlohmann::json;
  FlatJsonParser& p;
  std::vector<std::uint64_t>& array;
  int depth = 0;       // containers open
  int current = -1;    // index of the key being read, -1: unknown or none
  bool in_ids = false; // inside the array of the array key (depth 2)
  bool top_is_object = false;

  JsonValue* slot() { return depth == 1 && current >= 0 ? &p.values_[current] : nullptr; }
  bool scalar(JsonValue::Kind k, std::int64_t i, double d)
  {
    if (in_ids && depth == 2) {
      JsonValue& v = p.values_[current];
      if (k == JsonValue::Kind::kInteger && i >= 0)
        array.push_back(static_cast<std::uint64_t>(i));
      else if (k == JsonValue::Kind::kInteger)
        v.negative_in_array = true;
      else
        v.non_integer_in_array = true;
      return true;
    }
    if (depth == 0) return true; // a bare scalar line: reported as "not an object" by the caller
    if (JsonValue* v = slot()) {
      v->kind = k;
      v->integer = i;
      v->number = d;
    }
    return true;
  }
  bool null() { return scalar(JsonValue::Kind::kNull, 0, 0); }
  bool boolean(bool b) { return scalar(JsonValue::Kind::kBool, b, b); }
  bool number_integer(json::number_integer_t v) { return scalar(JsonValue::Kind::kInteger, v, double(v)); }
  bool number_unsigned(json::number_unsigned_t v)
  {
    if (v > static_cast<json::number_unsigned_t>(INT64_MAX))
      return scalar(JsonValue::Kind::kFloat, INT64_MAX, double(v));
    return scalar(JsonValue::Kind::kInteger, static_cast<std::int64_t>(v), double(v));
  }
  bool number_float(json::number_float_t v, const std::string&)
  {
    // Truncate only what fits: converting 1e40 to an integer is undefined behaviour (found by
    // workloads/mooncake_fuzz; kept as fuzz_corpus/mooncake_fuzz/float-beyond-int64.jsonl).
    const bool fits = std::isfinite(v) && v > -9.2e18 && v < 9.2e18;
    return scalar(JsonValue::Kind::kFloat, fits ? static_cast<std::int64_t>(v) : 0, v);
  }
  bool string(std::string&) { return scalar(JsonValue::Kind::kString, 0, 0); }
  bool binary(json::binary_t&) { return scalar(JsonValue::Kind::kString, 0, 0); }
  bool start_object(std::size_t)
  {
    if (depth == 0)
      top_is_object = true;
    else if (JsonValue* v = slot())
      v->kind = JsonValue::Kind::kObject;
    else if (in_ids && depth == 2)
      p.values_[current].non_integer_in_array = true;
    ++depth;
    return true;
  }
  bool end_object()
  {
    --depth;
    return true;
  }
  bool start_array(std::size_t)
  {
    if (in_ids && depth == 2) p.values_[current].non_integer_in_array = true;
    if (JsonValue* v = slot()) {
      v->kind = JsonValue::Kind::kArray;
      if (p.keys_[current] == p.array_key_) {
        in_ids = true;
        array.clear();
      }
    }
    ++depth;
    return true;
  }
  bool end_array()
  {
    --depth;
    if (depth == 1) in_ids = false;
    return true;
  }
  bool key(std::string& k)
  {
    if (depth != 1) return true;
    current = -1;
    for (std::size_t i = 0; i < p.keys_.size(); ++i)
      if (p.keys_[i] == k) {
        current = static_cast<int>(i);
        return true;
      }
    if (p.unknown_key_.empty()) p.unknown_key_ = k;
    return true;
  }
  bool parse_error(std::size_t pos, const std::string&, const nlohmann::detail::exception& ex)
  {
    p.error_ = json_error_text(ex.what());
    p.error_column_ = static_cast<int>(pos == 0 ? 1 : pos);
    return false;
  }
};

FlatJsonParser::FlatJsonParser(std::vector<std::string> keys, std::string array_key)
    : keys_(std::move(keys)), array_key_(std::move(array_key)), values_(keys_.size())
{
}

bool FlatJsonParser::parse(std::string_view line, std::vector<std::uint64_t>& array)
{
  for (JsonValue& v : values_)
    v = JsonValue{};
  array.clear();
  error_.clear();
  unknown_key_.clear();
  error_column_ = 0;
  FlatSax sax{*this, array};
  bool ok = nlohmann::json::sax_parse(line.begin(), line.end(), &sax);
  if (ok && !sax.top_is_object) {
    error_ = "expected a JSON object";
    error_column_ = 1;
    return false;
  }
  return ok;
}

std::string FlatJsonParser::describe(const JsonValue& v)
{
  if (v.kind == JsonValue::Kind::kInteger) return std::to_string(v.integer);
  if (v.kind == JsonValue::Kind::kFloat) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v.number);
    return buf;
  }
  return kind_name(v.kind);
}

const char* FlatJsonParser::kind_name(JsonValue::Kind k)
{
  switch (k) {
  case JsonValue::Kind::kMissing:
    return "nothing";
  case JsonValue::Kind::kNull:
    return "null";
  case JsonValue::Kind::kInteger:
    return "an integer";
  case JsonValue::Kind::kFloat:
    return "a number";
  case JsonValue::Kind::kString:
    return "a string";
  case JsonValue::Kind::kBool:
    return "a boolean";
  case JsonValue::Kind::kArray:
    return "an array";
  case JsonValue::Kind::kObject:
    return "an object";
  }
  return "?";
}

} // namespace xattn::workloads
