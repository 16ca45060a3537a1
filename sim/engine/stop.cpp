#include "sim/engine/stop.hpp"

namespace xattn::sim::engine
{
namespace
{
volatile std::sig_atomic_t g_stop = 0;

void on_signal(int sig)
{
  g_stop = sig;
}

void install(struct sigaction* old_int, struct sigaction* old_term)
{
  struct sigaction sa {
  };
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, old_int);
  sigaction(SIGTERM, &sa, old_term);
}
} // namespace

int stop_signal()
{
  return g_stop;
}

void clear_stop()
{
  g_stop = 0;
}

StopSignals::StopSignals()
{
  clear_stop();
  install(&old_int_, &old_term_);
}

StopSignals::~StopSignals()
{
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
}

void StopSignals::reinstall()
{
  install(nullptr, nullptr);
}

} // namespace xattn::sim::engine
