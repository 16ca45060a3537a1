#include "sim/core/units.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>

namespace xattn::core
{
namespace
{

struct Prefix {
  std::string_view text;
  double factor;
};

// Longest spellings first so that "Ki" wins over "k"-less matches. Upper-case 'K' alone is
// refused on purpose: it is ambiguous between 10^3 and 2^10.
constexpr std::array<Prefix, 11> kPrefixes{{{"Ki", 1024.0},
                                            {"Mi", 1048576.0},
                                            {"Gi", 1073741824.0},
                                            {"Ti", 1099511627776.0},
                                            {"Pi", 1125899906842624.0},
                                            {"k", 1e3},
                                            {"M", 1e6},
                                            {"G", 1e9},
                                            {"T", 1e12},
                                            {"P", 1e15},
                                            {"", 1.0}}};

std::string quoted(std::string_view s)
{
  return "'" + std::string(s) + "'";
}

// Splits "25GBps" into 25 and "GBps". The number grammar is strict decimal: optional sign,
// digits, optional fraction, optional exponent. One optional space may separate the unit.
std::pair<double, std::string_view> split_number(std::string_view text)
{
  std::string_view s = text;
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  if (s.empty()) throw UnitError("empty value");
  std::size_t i = 0;
  if (s[i] == '+' || s[i] == '-') ++i;
  std::size_t digits = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
    ++i;
    ++digits;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      ++i;
      ++digits;
    }
  }
  if (digits == 0) throw UnitError("expected a number, got " + quoted(s));
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    std::size_t j = i + 1;
    if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
    std::size_t exp_digits = 0;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) {
      ++j;
      ++exp_digits;
    }
    if (exp_digits > 0) // otherwise 'E' starts a unit (there is none such, and it will be refused)
      i = j;
  }
  double value = 0;
  std::string number(s.substr(0, i));
  if (number.front() == '+') number.erase(0, 1);
  auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (ec == std::errc::result_out_of_range && ptr == number.data() + number.size())
    throw UnitError("number " + quoted(s) + " is out of range");
  if (ec != std::errc() || ptr != number.data() + number.size()) throw UnitError("expected a number, got " + quoted(s));
  if (!std::isfinite(value)) throw UnitError("value " + quoted(s) + " is not finite");
  if (value < 0) throw UnitError("negative value " + quoted(s) + " (quantities are never negative)");
  std::string_view unit = s.substr(i);
  if (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  return {value, unit};
}

// Matches "<prefix><base>" where base is one of `bases`; returns the prefix factor × base factor.
std::optional<double> match_prefixed(std::string_view unit, std::string_view base, double base_factor)
{
  if (unit.size() < base.size() || unit.substr(unit.size() - base.size()) != base) return std::nullopt;
  std::string_view prefix = unit.substr(0, unit.size() - base.size());
  for (const Prefix& p : kPrefixes)
    if (p.text == prefix) return p.factor * base_factor;
  return std::nullopt;
}

std::optional<double> size_factor(std::string_view unit)
{
  if (auto f = match_prefixed(unit, "B", 1.0)) return f;
  if (auto f = match_prefixed(unit, "b", 0.125)) return f;
  return std::nullopt;
}

std::optional<double> time_factor(std::string_view unit)
{
  static constexpr std::array<Prefix, 8> kTimes{{{"s", 1.0},
                                                 {"ms", 1e-3},
                                                 {"us", 1e-6},
                                                 {"\xC2\xB5s", 1e-6},
                                                 {"ns", 1e-9},
                                                 {"ps", 1e-12},
                                                 {"min", 60.0},
                                                 {"h", 3600.0}}};
  for (const Prefix& p : kTimes)
    if (p.text == unit) return p.factor;
  return std::nullopt;
}

std::optional<double> rate_factor(std::string_view unit)
{
  for (std::string_view per : {"ps", "/s"}) {
    if (unit.size() > per.size() && unit.substr(unit.size() - per.size()) == per)
      if (auto f = size_factor(unit.substr(0, unit.size() - per.size()))) return f;
  }
  return std::nullopt;
}

std::optional<double> flops_factor(std::string_view unit)
{
  return match_prefixed(unit, "flops", 1.0);
}

std::string fmt_prefixed(double v, std::string_view unit, bool time)
{
  char buf[64];
  if (time) {
    static constexpr std::array<Prefix, 4> kT{{{"s", 1.0}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}}};
    for (const Prefix& p : kT)
      if (v >= p.factor || p.factor == 1e-9) {
        std::snprintf(buf, sizeof buf, "%.4g%s", v / p.factor, std::string(p.text).c_str());
        return buf;
      }
  }
  static constexpr std::array<Prefix, 5> kD{{{"P", 1e15}, {"T", 1e12}, {"G", 1e9}, {"M", 1e6}, {"k", 1e3}}};
  for (const Prefix& p : kD)
    if (v >= p.factor) {
      std::snprintf(buf, sizeof buf, "%.4g%s%s", v / p.factor, std::string(p.text).c_str(), std::string(unit).c_str());
      return buf;
    }
  std::snprintf(buf, sizeof buf, "%.4g%s", v, std::string(unit).c_str());
  return buf;
}

} // namespace

std::string_view dimension_hint(Dimension d)
{
  switch (d) {
  case Dimension::kCount:
    return "a plain number";
  case Dimension::kSeconds:
    return "a time such as 16us, 3ms, 2s";
  case Dimension::kBytes:
    return "a size such as 1152B, 1.5MiB, 80GB";
  case Dimension::kBytesPerSec:
    return "a bandwidth such as 25GBps, 400Gbps";
  case Dimension::kFlopsPerSec:
    return "a compute rate such as 989Tflops";
  }
  return "?";
}

double parse_quantity(std::string_view text, Dimension d)
{
  auto [value, unit] = split_number(text);
  if (d == Dimension::kCount) {
    if (!unit.empty()) throw UnitError("expected a plain number, got " + quoted(text) + " (this value takes no unit)");
    return value;
  }
  if (unit.empty()) throw UnitError("missing unit in " + quoted(text) + ": expected " + std::string(dimension_hint(d)));
  std::optional<double> factor;
  switch (d) {
  case Dimension::kSeconds:
    factor = time_factor(unit);
    break;
  case Dimension::kBytes:
    factor = size_factor(unit);
    break;
  case Dimension::kBytesPerSec:
    factor = rate_factor(unit);
    break;
  case Dimension::kFlopsPerSec:
    factor = flops_factor(unit);
    break;
  case Dimension::kCount:
    break;
  }
  if (!factor)
    throw UnitError("unknown unit " + quoted(unit) + " in " + quoted(text) + ": expected " +
                    std::string(dimension_hint(d)));
  double si = value * *factor;
  if (!std::isfinite(si)) throw UnitError("value " + quoted(text) + " is out of range");
  return si;
}

Seconds parse_seconds(std::string_view text)
{
  return Seconds(parse_quantity(text, Dimension::kSeconds));
}
Bytes parse_bytes(std::string_view text)
{
  return Bytes(parse_quantity(text, Dimension::kBytes));
}
BytesPerSec parse_rate(std::string_view text)
{
  return BytesPerSec(parse_quantity(text, Dimension::kBytesPerSec));
}
FlopsPerSec parse_flops(std::string_view text)
{
  return FlopsPerSec(parse_quantity(text, Dimension::kFlopsPerSec));
}

std::string format_seconds(Seconds t)
{
  return fmt_prefixed(t.value(), "s", true);
}
std::string format_bytes(Bytes b)
{
  return fmt_prefixed(b.value(), "B", false);
}
std::string format_rate(BytesPerSec r)
{
  return fmt_prefixed(r.value(), "Bps", false);
}

} // namespace xattn::core
