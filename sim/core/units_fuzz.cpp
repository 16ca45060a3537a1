// libFuzzer target: the one quantity parser (core::parse_quantity) on arbitrary text, for every
// dimension. A finding is a crash, a sanitizer report, or an accepted value that is negative or
// not finite (the parser promises neither ever comes out), or an exception other than UnitError.
#include "sim/core/units.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>

using namespace xattn::core;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (Dimension d :
       {Dimension::kCount, Dimension::kSeconds, Dimension::kBytes, Dimension::kBytesPerSec, Dimension::kFlopsPerSec}) {
    try {
      const double v = parse_quantity(text, d);
      if (!std::isfinite(v) || v < 0) std::abort();
      // The renderers must take anything the parser gives.
      (void)format_seconds(Seconds(v));
      (void)format_bytes(Bytes(v));
      (void)format_rate(BytesPerSec(v));
    } catch (const UnitError&) {
    }
  }
  return 0;
}
