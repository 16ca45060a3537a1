// Stopping a run early: SIGINT or SIGTERM (exit 130), or the memory guard (engine.max_memory,
// exit 1). A signal only sets a flag. The code that loops checks it where it is cheap and safe to
// leave (the driver's wait, each simulated event, each request read) and throws Interrupted; each
// level then writes what it has: a policy's process its figures so far, the driver
// summary.interrupted.json (docs/file-formats.md, "Outputs").
#pragma once

#include <csignal>
#include <stdexcept>
#include <string>

namespace xattn::sim::engine
{

/// The signal that asked the run to stop (SIGINT, SIGTERM), 0 if none.
int stop_signal();
/// Forgets a signal received earlier (a new run starts).
void clear_stop();

/// Catches SIGINT and SIGTERM for its lifetime and puts the previous handlers back when it ends.
/// The handler only records the signal, without SA_RESTART: a blocking waitpid() returns.
class StopSignals
{
public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  /// Installs the handler again (SimGrid's engine installs its own SIGINT handler when created).
  static void reinstall();

private:
  struct sigaction old_int_ {
  }, old_term_{};
};

/// Thrown where work stops for a signal. Not a failure: callers catch it before std::exception.
class Interrupted : public std::runtime_error
{
public:
  explicit Interrupted(int signal)
      : std::runtime_error("interrupted by signal " + std::to_string(signal)), signal_(signal)
  {
  }
  int signal() const { return signal_; }

private:
  int signal_;
};

/// Throws Interrupted when a stop was asked for (one load of a flag).
inline void throw_if_stopped()
{
  if (const int s = stop_signal(); s != 0) throw Interrupted(s);
}

} // namespace xattn::sim::engine
