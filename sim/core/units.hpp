// Strong types for the physical quantities xattn computes with, and the one strict parser for
// quantities written in files ("25GBps", "16us", "1.5MiB").
//
// Inside the code everything is SI: seconds, bytes, bytes per second, flop per second. A value
// leaves its type only at the SimGrid call (`.value()`), so a GB/s-vs-GiB/s or µs-vs-s slip
// cannot compile silently.
#pragma once

#include <compare>
#include <stdexcept>
#include <string>
#include <string_view>

namespace xattn::core
{

/// A double tagged with its dimension. Same-dimension arithmetic is allowed; mixing needs one of
/// the named cross-dimension operators below.
template <class Tag>
class Quantity
{
public:
  constexpr Quantity() = default;
  constexpr explicit Quantity(double v) : v_(v) {}
  constexpr double value() const { return v_; }

  constexpr Quantity operator+(Quantity o) const { return Quantity(v_ + o.v_); }
  constexpr Quantity operator-(Quantity o) const { return Quantity(v_ - o.v_); }
  constexpr Quantity operator*(double k) const { return Quantity(v_ * k); }
  constexpr Quantity operator/(double k) const { return Quantity(v_ / k); }
  constexpr double operator/(Quantity o) const { return v_ / o.v_; } // a ratio is unitless
  constexpr Quantity& operator+=(Quantity o)
  {
    v_ += o.v_;
    return *this;
  }
  constexpr Quantity& operator-=(Quantity o)
  {
    v_ -= o.v_;
    return *this;
  }
  constexpr auto operator<=>(const Quantity&) const = default;

private:
  double v_ = 0.0;
};

template <class Tag>
constexpr Quantity<Tag> operator*(double k, Quantity<Tag> q)
{
  return q * k;
}

struct SecondsTag;
struct BytesTag;
struct BytesPerSecTag;
struct FlopsTag;
struct FlopsPerSecTag;

using Seconds = Quantity<SecondsTag>;         ///< time, s
using Bytes = Quantity<BytesTag>;             ///< data size, B
using BytesPerSec = Quantity<BytesPerSecTag>; ///< bandwidth, B/s
using Flops = Quantity<FlopsTag>;             ///< work, floating-point operations
using FlopsPerSec = Quantity<FlopsPerSecTag>; ///< compute rate, flop/s

constexpr Seconds operator/(Bytes b, BytesPerSec r)
{
  return Seconds(b.value() / r.value());
}
constexpr Bytes operator*(BytesPerSec r, Seconds t)
{
  return Bytes(r.value() * t.value());
}
constexpr Bytes operator*(Seconds t, BytesPerSec r)
{
  return r * t;
}
constexpr BytesPerSec operator/(Bytes b, Seconds t)
{
  return BytesPerSec(b.value() / t.value());
}
constexpr Seconds operator/(Flops f, FlopsPerSec r)
{
  return Seconds(f.value() / r.value());
}

/// A quantity string that cannot be read. Carries no location: the YAML layer adds file, line,
/// column and key when it catches this.
class UnitError : public std::invalid_argument
{
public:
  using std::invalid_argument::invalid_argument;
};

/// The kinds of quantity a file may carry. `kCount` is a plain unitless number.
enum class Dimension { kCount, kSeconds, kBytes, kBytesPerSec, kFlopsPerSec };

/// Human name of a dimension, with example spellings, for error messages and --describe.
std::string_view dimension_hint(Dimension d);

/// Parses "<number><unit>" for the given dimension, strictly:
///   time      s ms us µs ns ps min h
///   size      B or b (bit), with k M G T P (10^3n) or Ki Mi Gi Ti Pi (2^10n): 1.5MiB, 800Gb
///   bandwidth <size>ps or <size>/s: 25GBps, 200Gbps, 25GB/s
///   compute   <prefix>flops: 989Tflops
/// Returns the value in SI base units (s, B, B/s, flop/s). Throws UnitError on a missing or
/// unknown unit, a negative, non-finite or malformed number, or a count given a unit.
double parse_quantity(std::string_view text, Dimension d);

Seconds parse_seconds(std::string_view text);
Bytes parse_bytes(std::string_view text);
BytesPerSec parse_rate(std::string_view text);
FlopsPerSec parse_flops(std::string_view text);

/// Short human rendering with a sensible prefix: "38.3us", "2.36MB", "25GBps".
std::string format_seconds(Seconds t);
std::string format_bytes(Bytes b);
std::string format_rate(BytesPerSec r);

} // namespace xattn::core
