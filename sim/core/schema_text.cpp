#include "sim/core/schema_text.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

namespace xattn::core
{
namespace
{

// A bound as a user would write it: "1us", "24h", "64MiB", "1PBps", "1024" (%g of the value in
// the largest unit that gives a short number).
std::string bound_text(double v, Dimension dim)
{
  if (std::isinf(v)) return "inf";
  struct Unit {
    double factor;
    const char* name;
  };
  auto pick = [v](std::initializer_list<Unit> units, const char* fallback) {
    char buf[64];
    for (const Unit& u : units)
      if (v >= u.factor && v != 0) {
        const double x = v / u.factor;
        if (x == std::round(x * 1000) / 1000) { // short in this unit
          std::snprintf(buf, sizeof buf, "%g%s", x, u.name);
          return std::string(buf);
        }
      }
    std::snprintf(buf, sizeof buf, "%g%s", v, fallback);
    return std::string(buf);
  };
  switch (dim) {
  case Dimension::kCount:
    if (v == std::floor(v) && v < 1e16) return std::to_string(static_cast<std::int64_t>(v));
    return pick({}, "");
  case Dimension::kSeconds:
    return pick({{3600, "h"}, {60, "min"}, {1, "s"}, {1e-3, "ms"}, {1e-6, "us"}, {1e-9, "ns"}}, "s");
  case Dimension::kBytes:
    return pick({{1125899906842624.0, "PiB"},
                 {1e15, "PB"},
                 {1099511627776.0, "TiB"},
                 {1e12, "TB"},
                 {1073741824.0, "GiB"},
                 {1e9, "GB"},
                 {1048576.0, "MiB"},
                 {1e6, "MB"},
                 {1024.0, "KiB"},
                 {1e3, "kB"}},
                "B");
  case Dimension::kBytesPerSec:
    return pick({{1e15, "PBps"}, {1e12, "TBps"}, {1e9, "GBps"}, {1e6, "MBps"}, {1e3, "kBps"}}, "Bps");
  case Dimension::kFlopsPerSec:
    return pick({{1e15, "Pflops"}, {1e12, "Tflops"}, {1e9, "Gflops"}}, "flops");
  }
  return pick({}, "");
}

} // namespace

std::string kind_name(const Field& f)
{
  switch (f.kind) {
  case FieldKind::kQuantity:
    switch (f.dim) {
    case Dimension::kCount:
      return "number";
    case Dimension::kSeconds:
      return "time";
    case Dimension::kBytes:
      return "size";
    case Dimension::kBytesPerSec:
      return "bandwidth";
    case Dimension::kFlopsPerSec:
      return "flop/s";
    }
    return "number";
  case FieldKind::kInteger:
    return "integer";
  case FieldKind::kString:
    return "string";
  case FieldKind::kBool:
    return "bool";
  case FieldKind::kChoice:
    return std::string(f.choices);
  case FieldKind::kSection:
    return "section";
  case FieldKind::kList:
    return "list";
  case FieldKind::kMap:
    return "map";
  case FieldKind::kNameOrSection:
    return "name|{...}";
  }
  return "?";
}

std::string kind_with_article(const Field& f)
{
  if (f.kind == FieldKind::kChoice) return "one of " + std::string(f.choices);
  const std::string k = kind_name(f);
  return (k.find_first_of("aeiou") == 0 ? "an " : "a ") + k;
}

std::optional<std::string> out_of_range(const Field& f, Dimension dim, double v, const std::string& text)
{
  if (!f.range.bounded()) return std::nullopt;
  if (v < f.range.min)
    return "must be at least " + bound_text(f.range.min, dim) + ", got '" + text + "' (" + std::string(f.range.why) +
           ")";
  if (v > f.range.max)
    return "must be at most " + bound_text(f.range.max, dim) + ", got '" + text + "' (" + std::string(f.range.why) +
           ")";
  return std::nullopt;
}

Dimension dimension_of(const Field& f)
{
  return f.kind == FieldKind::kInteger ? Dimension::kCount : f.dim;
}

std::string range_text(const Field& f)
{
  if (!f.range.bounded()) return {};
  const Dimension dim = dimension_of(f);
  const bool open_low = f.check == Check::kPositive && f.range.min <= 0;
  return std::string(open_low ? "(" : "[") + bound_text(f.range.min, dim) + ", " + bound_text(f.range.max, dim) +
         (std::isinf(f.range.max) ? ")" : "]");
}

namespace
{
void describe_into(const Schema& schema, int depth, std::vector<std::array<std::string, 4>>& rows)
{
  for (const Field& f : schema) {
    std::string def = f.def == kRequired ? "(required)" : f.def == kNoDefault ? "(unset)" : std::string(f.def);
    if (f.kind == FieldKind::kNameOrSection)
      def = f.def == kRequired ? "(required)" : std::string(f.def);
    else if (f.kind == FieldKind::kSection || f.kind == FieldKind::kMap ||
             (f.kind == FieldKind::kList && f.sub && (f.def == kRequired || f.def == kNoDefault)))
      def = f.kind == FieldKind::kMap ? "NAME: {...}" : f.kind == FieldKind::kList ? "[{...}]" : "{...}";
    std::string kind = kind_name(f);
    std::string meaning(f.meaning);
    if (!f.former.empty()) meaning += " [formerly " + std::string(f.former) + "]";
    if (f.range.bounded()) {
      kind += " " + range_text(f);
      meaning += " [range: " + std::string(f.range.why) + "]";
    } else if (f.check == Check::kPositive) {
      kind += " > 0";
    }
    rows.push_back({std::string(2 * depth, ' ') + std::string(f.key), kind, def, meaning});
    if (f.sub) describe_into(*f.sub, depth + 1, rows);
  }
}
} // namespace

std::string describe(const Schema& schema, const std::string& title)
{
  std::vector<std::array<std::string, 4>> rows{{"key", "type", "default", "meaning"}};
  describe_into(schema, 0, rows);
  std::array<std::size_t, 3> w{};
  for (const auto& r : rows)
    for (std::size_t i = 0; i < 3; ++i)
      w[i] = std::max(w[i], r[i].size());
  std::string out = title + "\n";
  for (const auto& r : rows) {
    for (std::size_t i = 0; i < 3; ++i)
      out += r[i] + std::string(w[i] - r[i].size() + 2, ' ');
    out += r[3] + "\n";
  }
  out += "\nQuantities carry units as strings (16us, 1.5MiB, 25GBps, 400Gbps, 989Tflops); k M G are 10^3n,\n"
         "Ki Mi Gi are 2^10n, b is a bit and B a byte. Unknown and duplicate keys are errors.\n";
  return out;
}

} // namespace xattn::core
