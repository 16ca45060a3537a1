#include "sim/core/yaml.hpp"
#include "sim/core/plausible.hpp"
#include "sim/core/suggest.hpp"

#include "sim/core/check.hpp"
#include "sim/core/schema_text.hpp"
#include <algorithm>
#include <array>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

namespace xattn::core
{
namespace
{

std::string node_type_name(const YAML::Node& n)
{
  switch (n.Type()) {
  case YAML::NodeType::Null:
    return "nothing";
  case YAML::NodeType::Scalar:
    return "'" + n.Scalar() + "'";
  case YAML::NodeType::Sequence:
    return "a list";
  case YAML::NodeType::Map:
    return "a mapping";
  default:
    return "an undefined node";
  }
}

std::vector<std::string_view> split_choices(std::string_view c)
{
  std::vector<std::string_view> out;
  while (true) {
    auto bar = c.find('|');
    out.push_back(c.substr(0, bar));
    if (bar == std::string_view::npos) return out;
    c.remove_prefix(bar + 1);
  }
}

YAML::Node strip_marks(const YAML::Node& n)
{
  switch (n.Type()) {
  case YAML::NodeType::Scalar:
    return YAML::Node(n.Scalar());
  case YAML::NodeType::Sequence: {
    YAML::Node out(YAML::NodeType::Sequence);
    for (const YAML::Node& c : n)
      out.push_back(strip_marks(c));
    return out;
  }
  case YAML::NodeType::Map: {
    YAML::Node out(YAML::NodeType::Map);
    for (auto it = n.begin(); it != n.end(); ++it)
      out[it->first.Scalar()] = strip_marks(it->second);
    return out;
  }
  default:
    return YAML::Node();
  }
}

} // namespace

Document parse_yaml(const std::string& text, std::string name)
{
  try {
    return Document{name, YAML::Load(text)};
  } catch (const YAML::Exception& e) {
    fail(name, e.mark.is_null() ? 0 : e.mark.line + 1, e.mark.is_null() ? 0 : e.mark.column + 1, "",
         "invalid YAML: " + e.msg);
  }
}

Document load_yaml(const std::filesystem::path& path)
{
  std::ifstream in(path, std::ios::binary);
  if (!in || std::filesystem::is_directory(path)) fail(path.string(), 0, 0, "", "cannot open file");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  if (text.find('\0') != std::string::npos)
    fail(path.string(), 0, 0, "", "binary data where a YAML text file was expected");
  return parse_yaml(text, path.string());
}

void apply_override(Document& doc, std::string_view assignment)
{
  auto eq = assignment.find('=');
  std::string key(assignment.substr(0, eq));
  if (eq == std::string_view::npos || key.empty())
    fail("command line", 0, 0, "--set", "expected PATH=VALUE, got '" + std::string(assignment) + "'");
  std::vector<std::string> parts;
  std::stringstream ks(key);
  for (std::string p; std::getline(ks, p, '.');) {
    if (p.empty()) fail("command line", 0, 0, "--set", "empty component in key path '" + key + "'");
    parts.push_back(p);
  }
  YAML::Node value;
  try {
    // Rebuilt without marks: positions in the --set text are not positions in the file, and a
    // value without a mark is reported by its key alone.
    value = strip_marks(YAML::Load(std::string(assignment.substr(eq + 1))));
  } catch (const YAML::Exception& e) {
    fail("command line", 0, 0, "--set " + key, "value is not valid YAML: " + e.msg);
  }
  if (!doc.root.IsMap() && !doc.root.IsNull())
    fail("command line", 0, 0, "--set " + key, "the document is not a mapping");
  // yaml-cpp nodes are handles: walking with operator[] on copies edits the tree in place.
  std::vector<YAML::Node> chain{doc.root};
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    YAML::Node next = chain.back()[parts[i]];
    if (next.IsDefined() && !next.IsNull() && !next.IsMap())
      fail("command line", 0, 0, "--set " + key, "'" + parts[i] + "' is not a section");
    chain.push_back(next);
  }
  chain.back()[parts.back()] = value;
}

Section::Section(const std::string& file, YAML::Node node, std::string path, const Schema& schema, Diagnostics& diags)
    : file_(file), path_(std::move(path)), schema_(&schema), diags_(&diags)
{
  if (node.IsDefined() && !node.Mark().is_null()) {
    line_ = node.Mark().line + 1;
    column_ = node.Mark().column + 1;
  }
  if (!node.IsDefined() || node.IsNull()) return;
  if (!node.IsMap()) {
    diags_->add({file_, line_, column_, path_, "expected a mapping, got " + node_type_name(node)});
    return;
  }
  for (auto it = node.begin(); it != node.end(); ++it) {
    Entry e;
    e.key = it->first.IsScalar() ? it->first.Scalar() : std::string("<complex key>");
    e.value = it->second;
    if (!it->first.Mark().is_null()) {
      e.line = it->first.Mark().line + 1;
      e.column = it->first.Mark().column + 1;
    }
    auto known = std::find_if(schema.begin(), schema.end(), [&](const Field& f) { return f.key == e.key; });
    if (known == schema.end()) { // a key's former name reads as the key
      known = std::find_if(schema.begin(), schema.end(),
                           [&](const Field& f) { return !f.former.empty() && f.former == e.key; });
      if (known != schema.end()) {
        warn({file_, e.line, e.column, key_path(e.key),
              "the former name of '" + std::string(known->key) + "': read as it; write '" + std::string(known->key) +
                  "'"});
        e.key = known->key;
      }
    }
    if (known == schema.end()) {
      std::vector<std::string> keys;
      for (const Field& f : schema)
        keys.emplace_back(f.key);
      std::string msg = "unknown key '" + e.key + "'";
      if (const std::string best = closest(e.key, keys); !best.empty())
        msg += " (did you mean '" + best + "'?)";
      else {
        msg += " (expected one of:";
        for (const std::string& k : keys)
          msg += " " + k;
        msg += ")";
      }
      diags_->add({file_, e.line, e.column, key_path(e.key), msg});
      continue;
    }
    if (const Entry* first = find(e.key)) {
      diags_->add({file_, e.line, e.column, key_path(e.key),
                   "duplicate key (first given at line " + std::to_string(first->line) + ")"});
      continue;
    }
    entries_.push_back(std::move(e));
  }
}

std::string Section::key_path(std::string_view key) const
{
  if (path_.empty()) return std::string(key);
  return path_ + "." + std::string(key);
}

const Section::Entry* Section::find(std::string_view key) const
{
  for (const Entry& e : entries_)
    if (e.key == key) return &e;
  return nullptr;
}

const Field& Section::field(std::string_view key, FieldKind kind) const
{
  auto it = std::find_if(schema_->begin(), schema_->end(), [&](const Field& f) { return f.key == key; });
  XATTN_CHECK(it != schema_->end(), "reading a key that the schema does not list: " + key_path(key));
  XATTN_CHECK(
      it->kind == kind || (kind == FieldKind::kQuantity && it->kind == FieldKind::kInteger) ||
          (it->kind == FieldKind::kNameOrSection && (kind == FieldKind::kString || kind == FieldKind::kSection)),
      "reading a key with another kind than its schema says: " + key_path(key));
  return *it;
}

bool Section::has(std::string_view key) const
{
  return find(key) != nullptr && !find(key)->value.IsNull();
}

void Section::position(const Entry* e, int& line, int& column) const
{
  line = line_;
  column = column_;
  if (e == nullptr) return;
  line = e->line;
  column = e->column;
  if (e->value.IsDefined() && !e->value.Mark().is_null() && !e->value.IsNull()) {
    line = e->value.Mark().line + 1;
    column = e->value.Mark().column + 1;
  }
}

void Section::error(std::string_view key, std::string message)
{
  int line = 0, column = 0;
  position(find(key), line, column);
  diags_->add({file_, line, column, key.empty() ? path_ : key_path(key), std::move(message)});
  failed_.emplace_back(key);
}

void Section::plausible(std::string_view key, const Hardware& hw, double value)
{
  // A default is the schema's own; a value that did not read has its error already.
  if (!has(key) || std::find(failed_.begin(), failed_.end(), key) != failed_.end() || !plausibility_checked()) return;
  const std::string why = implausible(hw, value);
  if (why.empty()) return;
  if (strict()) {
    error(key, why + " (an error under --strict)");
    return;
  }
  int line = 0, column = 0;
  position(find(key), line, column);
  warn({file_, line, column, key_path(key), why + " (--strict makes it an error)"});
}

std::optional<std::string> Section::scalar(std::string_view key, const Field& f)
{
  const Entry* e = find(key);
  if (e == nullptr || e->value.IsNull()) {
    if (f.def == kRequired) {
      std::string where = path_.empty() ? std::string("the file") : "'" + path_ + "'";
      diags_->add({file_, e ? e->line : line_, e ? e->column : column_, key_path(key),
                   "missing required key (" + kind_name(f) + ": " + std::string(f.meaning) + ")"});
      return std::nullopt;
    }
    if (f.def == kNoDefault) return std::nullopt;
    return std::string(f.def);
  }
  if (!e->value.IsScalar()) {
    error(key, "expected " + kind_with_article(f) + ", got " + node_type_name(e->value));
    return std::nullopt;
  }
  return e->value.Scalar();
}

std::optional<double> Section::quantity(std::string_view key, Dimension dim)
{
  const Field& f = field(key, FieldKind::kQuantity);
  auto text = scalar(key, f);
  if (!text) return std::nullopt;
  try {
    const double v = parse_quantity(*text, dim);
    if (f.check == Check::kPositive && v <= 0.0) {
      error(key, "must be greater than zero, got '" + *text + "'");
      return std::nullopt;
    }
    if (f.kind == FieldKind::kInteger && v != std::floor(v)) {
      error(key, "expected a whole number, got '" + *text + "'");
      return std::nullopt;
    }
    if (auto why = out_of_range(f, dim, v, *text)) {
      error(key, *why);
      return std::nullopt;
    }
    return v;
  } catch (const UnitError& u) {
    error(key, u.what());
    return std::nullopt;
  }
}

double Section::number(std::string_view key)
{
  return quantity(key, Dimension::kCount).value_or(0.0);
}

std::int64_t Section::integer(std::string_view key)
{
  const auto v = quantity(key, Dimension::kCount);
  if (!v) return 0;
  if (*v > 9.0e15) {
    error(key, "value is too large");
    return 0;
  }
  return static_cast<std::int64_t>(*v);
}

int Section::count(std::string_view key)
{
  const std::int64_t v = integer(key);
  if (v > std::numeric_limits<int>::max()) {
    error(key, "value " + std::to_string(v) + " is too large (at most " +
                   std::to_string(std::numeric_limits<int>::max()) + ")");
    return 0;
  }
  return static_cast<int>(v);
}

Seconds Section::seconds(std::string_view key)
{
  return Seconds(quantity(key, Dimension::kSeconds).value_or(0.0));
}
Bytes Section::bytes(std::string_view key)
{
  return Bytes(quantity(key, Dimension::kBytes).value_or(0.0));
}
BytesPerSec Section::rate(std::string_view key)
{
  return BytesPerSec(quantity(key, Dimension::kBytesPerSec).value_or(0.0));
}
FlopsPerSec Section::flops(std::string_view key)
{
  return FlopsPerSec(quantity(key, Dimension::kFlopsPerSec).value_or(0.0));
}

std::string Section::string(std::string_view key)
{
  auto text = scalar(key, field(key, FieldKind::kString));
  return text ? *text : std::string();
}

std::string folder_name_problem(std::string_view name)
{
  const bool ok = !name.empty() && name.size() <= 64 && name != "." && name != ".." &&
                  name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") ==
                      std::string_view::npos;
  return ok ? std::string()
            : "'" + std::string(name) +
                  "' cannot name a folder: 1 to 64 letters, digits, '.', '_' or '-' (not '.' or '..', no '/')";
}

std::string Section::folder_name(std::string_view key)
{
  std::string name = string(key);
  if (has(key))
    if (std::string problem = folder_name_problem(name); !problem.empty()) error(key, problem);
  return name;
}

bool Section::boolean(std::string_view key)
{
  auto text = scalar(key, field(key, FieldKind::kBool));
  if (!text) return false;
  if (*text == "true") return true;
  if (*text == "false") return false;
  error(key, "expected true or false, got '" + *text + "'");
  return false;
}

std::string Section::choice(std::string_view key)
{
  const Field& f = field(key, FieldKind::kChoice);
  auto text = scalar(key, f);
  if (!text) return std::string();
  for (std::string_view c : split_choices(f.choices))
    if (c == *text) return *text;
  std::string msg = "unknown value '" + *text + "' (expected one of: ";
  for (std::string_view c : split_choices(f.choices))
    msg += std::string(c) + (c == split_choices(f.choices).back() ? ")" : ", ");
  error(key, msg);
  return std::string(split_choices(f.choices).front());
}

bool Section::is_inline(std::string_view key) const
{
  const Entry* e = find(key);
  return e != nullptr && e->value.IsMap();
}

Section Section::section(std::string_view key)
{
  const Field& f = field(key, FieldKind::kSection);
  XATTN_CHECK(f.sub != nullptr, "a section without a schema: " + key_path(key));
  const Entry* e = find(key);
  Section s(file_, e ? e->value : YAML::Node(), key_path(key), *f.sub, *diags_);
  if (e && s.line_ == 0) {
    s.line_ = e->line;
    s.column_ = e->column;
  }
  return s;
}

std::vector<Section> Section::sections(std::string_view key)
{
  const Field& f = field(key, FieldKind::kList);
  XATTN_CHECK(f.sub != nullptr, "a section without a schema: " + key_path(key));
  std::vector<Section> out;
  const Entry* e = find(key);
  YAML::Node list = e == nullptr ? YAML::Node() : e->value;
  if (list.IsNull()) {
    if (f.def == kRequired) error(key, "missing required key (list)");
    if (f.def == kRequired || f.def == kNoDefault) return out;
    list = YAML::Load(std::string(f.def)); // the default, as it would be written in the file
  }
  if (!list.IsSequence()) {
    error(key, "expected a list, got " + node_type_name(list));
    return out;
  }
  for (std::size_t i = 0; i < list.size(); ++i)
    out.emplace_back(file_, list[i], key_path(key) + "[" + std::to_string(i) + "]", *f.sub, *diags_);
  return out;
}

std::vector<std::pair<std::string, Section>> Section::named_sections(std::string_view key)
{
  const Field& f = field(key, FieldKind::kMap);
  XATTN_CHECK(f.sub != nullptr, "a section without a schema: " + key_path(key));
  std::vector<std::pair<std::string, Section>> out;
  const Entry* e = find(key);
  if (e == nullptr || e->value.IsNull()) {
    if (f.def == kRequired) error(key, "missing required key (map)");
    return out;
  }
  if (!e->value.IsMap()) {
    error(key, "expected a mapping, got " + node_type_name(e->value));
    return out;
  }
  std::vector<std::string> seen;
  for (auto it = e->value.begin(); it != e->value.end(); ++it) {
    std::string name = it->first.Scalar();
    int line = it->first.Mark().is_null() ? 0 : it->first.Mark().line + 1;
    int col = it->first.Mark().is_null() ? 0 : it->first.Mark().column + 1;
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
      diags_->add({file_, line, col, key_path(key) + "." + name, "duplicate key"});
      continue;
    }
    seen.push_back(name);
    Section s(file_, it->second, key_path(key) + "." + name, *f.sub, *diags_);
    if (s.line_ == 0) {
      s.line_ = line;
      s.column_ = col;
    }
    out.emplace_back(name, std::move(s));
  }
  return out;
}

std::vector<double> Section::numbers(std::string_view key, Dimension dim)
{
  const Field& f = field(key, FieldKind::kList);
  std::vector<double> out;
  const Entry* e = find(key);
  if (e == nullptr || e->value.IsNull()) {
    if (f.def == kRequired) error(key, "missing required key (list)");
    return out;
  }
  if (!e->value.IsSequence()) {
    error(key, "expected a list, got " + node_type_name(e->value));
    return out;
  }
  for (std::size_t i = 0; i < e->value.size(); ++i) {
    const YAML::Node& n = e->value[i];
    int line = n.Mark().is_null() ? e->line : n.Mark().line + 1;
    int col = n.Mark().is_null() ? e->column : n.Mark().column + 1;
    std::string where = key_path(key) + "[" + std::to_string(i) + "]";
    if (!n.IsScalar()) {
      diags_->add(
          {file_, line, col, where, "expected " + std::string(dimension_hint(dim)) + ", got " + node_type_name(n)});
      continue;
    }
    try {
      double v = parse_quantity(n.Scalar(), dim);
      if (f.check == Check::kPositive && v <= 0.0)
        diags_->add({file_, line, col, where, "must be greater than zero, got '" + n.Scalar() + "'"});
      else if (auto why = out_of_range(f, dim, v, n.Scalar()))
        diags_->add({file_, line, col, where, *why});
      out.push_back(v);
    } catch (const UnitError& u) {
      diags_->add({file_, line, col, where, u.what()});
    }
  }
  return out;
}

std::vector<std::string> Section::strings(std::string_view key)
{
  const Field& f = field(key, FieldKind::kList);
  std::vector<std::string> out;
  const Entry* e = find(key);
  if (e == nullptr || e->value.IsNull()) {
    if (f.def == kRequired) error(key, "missing required key (list)");
    return out;
  }
  if (e->value.IsScalar()) // a single name stands for a list of one
    return {e->value.Scalar()};
  if (!e->value.IsSequence()) {
    error(key, "expected a list, got " + node_type_name(e->value));
    return out;
  }
  for (std::size_t i = 0; i < e->value.size(); ++i) {
    if (!e->value[i].IsScalar()) {
      error(key, "element " + std::to_string(i) + " is " + node_type_name(e->value[i]) + ", expected a string");
      continue;
    }
    out.push_back(e->value[i].Scalar());
  }
  return out;
}

} // namespace xattn::core
