// How much memory this process holds and may hold: the guard behind a scenario's
// `engine.max_memory` (docs/architecture.md, "The command line and exit codes"). A run that would
// outgrow the machine stops itself, cleanly and with its figures so far, before the kernel kills it
// or an allocation fails (LimitError, exit 1).
//
// The guard is process-wide (one simulation per process): the code that makes memory grow calls
// tick() often (a request read, a decode step), and every kTicksPerCheck ticks the guard reads
// /proc/self/statm, a few microseconds. Unarmed, tick() is one branch.
#pragma once

#include "sim/core/units.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace xattn::core
{

/// This process's resident set size, bytes (/proc/self/statm); 0 where it cannot be read.
Bytes resident_bytes();
/// This process's address space (virtual size), bytes; 0 where it cannot be read.
Bytes address_space_bytes();
/// The address-space limit (RLIMIT_AS, `ulimit -v`), bytes; 0 when there is none.
Bytes address_space_limit();

/// Memory free for a run now, bytes: /proc/meminfo's MemAvailable, or what the cgroup's limit
/// leaves (memory.max less memory.current, cgroup v2; v1 alike) when that is less. 0 if unknown.
Bytes available_memory();

/// The default of engine.max_memory: half of available_memory() (the rest stays for the machine
/// and the page cache), at most 3/4 of the address-space limit when there is one, and at least
/// 256 MiB (when nothing can be read: 4 GiB).
Bytes default_memory_limit();

/// "half of the 22.6GiB available" style text: where the default comes from, for messages.
std::string default_memory_limit_origin();

class MemoryGuard
{
public:
  static constexpr std::uint32_t kTicksPerCheck = 1024;

  /// From now on check() throws LimitError(key, ...) once the resident size passes `limit`, or the
  /// address space passes 90% of the address-space limit. `what` says whose limit it is in the
  /// message ("this policy's process, 1/2 of engine.max_memory = 8GiB").
  void arm(Bytes limit, std::string key, std::string what);
  void disarm() { limit_ = 0; }
  bool armed() const { return limit_ > 0; }

  /// Counts one unit of work; checks every kTicksPerCheck.
  void tick()
  {
    if (limit_ > 0 && ++ticks_ >= kTicksPerCheck) {
      ticks_ = 0;
      check();
    }
  }
  /// Reads the process's memory now and throws LimitError when it is over.
  void check() const;
  /// The highest resident size seen by check(), bytes.
  double peak_bytes() const { return peak_; }

private:
  double limit_ = 0;
  double as_limit_ = 0;
  std::uint32_t ticks_ = 0;
  mutable double peak_ = 0;
  std::string key_, what_;
};

/// The process's guard.
MemoryGuard& memory_guard();

} // namespace xattn::core
