// What hardware of each class can do: the ranges a topology's or profile's rates, sizes and
// latencies are checked against, each with its source. A value outside its class's range is
// accepted with a warning that names the value, the range and the likely slip (a bit rate typed
// as bytes, milliseconds for microseconds), unless --strict makes it an error: a 400GBps NIC port
// (3.2 Tb/s, where 400Gbps is 50 GB/s) would otherwise run and print a verdict 8x off.
#pragma once

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"

#include <functional>
#include <string>
#include <string_view>

namespace xattn::core
{

/// One class of hardware: the range its values take today, inclusive, in SI base units.
struct Hardware {
  std::string_view what; ///< "an NVLink port (per GPU, each way)"
  Dimension dim;
  double min, max;
  std::string_view source; ///< where the ends come from
};

extern const Hardware kNvlinkRate;   ///< per GPU (or per switch tray), each way
extern const Hardware kPcieRate;     ///< one PCIe link, each way
extern const Hardware kNicRate;      ///< one NIC port or fabric link, each way
extern const Hardware kHbmCapacity;  ///< per GPU
extern const Hardware kHbmRate;      ///< per GPU
extern const Hardware kHostMemory;   ///< per server (node)
extern const Hardware kGpuFlops;     ///< dense tensor FLOP/s per GPU, any precision
extern const Hardware kWireLatency;  ///< one link's or one switch crossing's latency
extern const Hardware kProbeLatency; ///< one small message end to end, over any fabric

/// Why `value` is not what hardware of class `hw` has, with the likely slip; "" when it is.
std::string implausible(const Hardware& hw, double value);

/// --strict: an implausible value is bad input (exit 2) instead of a warning.
void set_strict(bool strict);
bool strict();

/// While one lives, nothing is checked for plausibility: for inputs the program writes itself
/// (validate's micro-scenarios, whose links are made too fast to bind on purpose), which are not
/// the user's to fix.
class NoPlausibilityChecks
{
public:
  NoPlausibilityChecks();
  ~NoPlausibilityChecks();
  NoPlausibilityChecks(const NoPlausibilityChecks&) = delete;
  NoPlausibilityChecks& operator=(const NoPlausibilityChecks&) = delete;
};
/// False while a NoPlausibilityChecks lives.
bool plausibility_checked();

/// Where warnings go: by default one line each on stderr ("FILE:LINE:COL: warning: KEY: ..."),
/// each distinct one once per process (a file read twice warns once).
void set_warning_sink(std::function<void(const Diagnostic&)> sink);
void warn(const Diagnostic& d);

} // namespace xattn::core
