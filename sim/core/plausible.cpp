#include "sim/core/plausible.hpp"

#include <cstdio>
#include <iostream>
#include <mutex>
#include <set>

namespace xattn::core
{

// Each range spans the generations in use and announced, so that only a slip falls outside.
const Hardware kNvlinkRate{"an NVLink port (per GPU or switch tray, each way)", Dimension::kBytesPerSec, 20e9, 1.8e12,
                           "one NVLink 1.0 link (P100) 20 GB/s to NVLink 6 (Rubin) 1.8 TB/s per GPU, each way"};
const Hardware kPcieRate{"a PCIe link (each way)", Dimension::kBytesPerSec, 0.25e9, 256e9,
                         "PCIe 1.0 x1 0.25 GB/s to PCIe 7.0 x16 about 242 GB/s, each way (PCI-SIG)"};
const Hardware kNicRate{"a NIC port or fabric link (each way)", Dimension::kBytesPerSec, 1.25e9, 200e9,
                        "10 Gb/s Ethernet to 1.6 Tb/s XDR InfiniBand and IEEE 802.3dj ports"};
const Hardware kHbmCapacity{"a GPU's HBM", Dimension::kBytes, 4e9, 1e12,
                            "4 GB (HBM1, 2015) to 1 TB (Rubin Ultra's HBM4E) per GPU"};
const Hardware kHostMemory{"a server's host memory", Dimension::kBytes, 16e9, 64e12,
                           "16 GB (a small PCIe server) to 64 TB (the largest multi-socket servers' DDR5)"};
const Hardware kHbmRate{"a GPU's HBM bandwidth", Dimension::kBytesPerSec, 0.5e12, 32e12,
                        "HBM1 0.5 TB/s to Rubin Ultra's HBM4E about 32 TB/s per GPU"};
const Hardware kGpuFlops{"a GPU's dense tensor FLOP/s", Dimension::kFlopsPerSec, 1e12, 1e17,
                         "1 TFLOP/s to Rubin's 50 PFLOP/s (FP4), any precision, with headroom"};
const Hardware kWireLatency{"one link or switch crossing", Dimension::kSeconds, 0, 10e-6,
                            "cables at 5 ns a metre, switch crossings 0.1-1 us (NVSwitch, Quantum-2)"};
const Hardware kProbeLatency{"a small message end to end", Dimension::kSeconds, 0, 1e-3,
                             "1-30 us measured on NVLink and InfiniBand (NCCL, NVSHMEM), proxies included"};

namespace
{
std::string g4(double v)
{
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

std::string format(Dimension dim, double v)
{
  switch (dim) {
  case Dimension::kSeconds:
    return format_seconds(Seconds(v));
  case Dimension::kBytes:
    return format_bytes(Bytes(v));
  case Dimension::kBytesPerSec:
    return format_rate(BytesPerSec(v)) + " (" + g4(v * 8 / 1e9) + " Gb/s)";
  default:
    return g4(v) + " FLOP/s";
  }
}

bool inside(const Hardware& hw, double v)
{
  return v >= hw.min && v <= hw.max;
}

// The slip that would put `v` in range, in words ("" when none does).
std::string slip(const Hardware& hw, double v)
{
  if (hw.dim == Dimension::kBytesPerSec) {
    if (inside(hw, v / 8)) return "a bit rate typed as bytes (B for b)? " + format(hw.dim, v / 8) + " in bits";
    if (inside(hw, v * 8)) return "a byte rate typed as bits (b for B)? " + format(hw.dim, v * 8) + " in bytes";
  }
  for (double f : {1e3, 1e6, 1e9}) {
    const char* unit = hw.dim == Dimension::kSeconds ? (f == 1e3 ? "ms for us, or us for ns" : "s for us")
                                                     : "a prefix too large (G for M, T for G)";
    const char* small = hw.dim == Dimension::kSeconds ? "us for ms, or ns for us" : "a prefix too small (M for G)";
    if (inside(hw, v / f)) return g4(f) + "x too large: " + unit + "?";
    if (inside(hw, v * f)) return g4(f) + "x too small: " + small + "?";
  }
  return "";
}

std::mutex g_mutex;
bool g_strict = false;
int g_unchecked = 0; // NoPlausibilityChecks alive
std::function<void(const Diagnostic&)> g_sink;
std::set<std::string> g_said;
} // namespace

std::string implausible(const Hardware& hw, double value)
{
  if (inside(hw, value)) return "";
  const std::string why = slip(hw, value);
  return format(hw.dim, value) + " is outside what " + std::string(hw.what) + " has, " + format(hw.dim, hw.min) +
         " to " + format(hw.dim, hw.max) + " (" + std::string(hw.source) + ")" + (why.empty() ? "" : ": " + why);
}

void set_strict(bool strict)
{
  const std::lock_guard lock(g_mutex);
  g_strict = strict;
}

bool strict()
{
  const std::lock_guard lock(g_mutex);
  return g_strict;
}

NoPlausibilityChecks::NoPlausibilityChecks()
{
  const std::lock_guard lock(g_mutex);
  ++g_unchecked;
}

NoPlausibilityChecks::~NoPlausibilityChecks()
{
  const std::lock_guard lock(g_mutex);
  --g_unchecked;
}

bool plausibility_checked()
{
  const std::lock_guard lock(g_mutex);
  return g_unchecked == 0;
}

void set_warning_sink(std::function<void(const Diagnostic&)> sink)
{
  const std::lock_guard lock(g_mutex);
  g_sink = std::move(sink);
}

void warn(const Diagnostic& d)
{
  const std::lock_guard lock(g_mutex);
  if (!g_said.insert(d.str()).second) return;
  if (g_sink) {
    g_sink(d);
    return;
  }
  std::string line = d.str();
  if (const auto at = line.find(": error: "); at != std::string::npos) line.replace(at, 9, ": warning: ");
  std::cerr << line << "\n";
}

} // namespace xattn::core
