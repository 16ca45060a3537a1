// Benchmarks of the request stream (not a test): import rate of a trace in block references per
// second, and the memory of a long generated stream (peak RSS sampled as it grows).
//   xattn_trace_bench import FILE [--format NAME] [--repeat N]
//   xattn_trace_bench generate N [CONFIG.yaml]
#include "workloads/generator.hpp"
#include "workloads/trace_format.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/resource.h>

using namespace xattn::workloads;

namespace
{
long peak_rss_kib()
{
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

int import_bench(const std::string& path, TraceFormat format, int repeat)
{
  std::uint64_t requests = 0, refs = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < repeat; ++i) {
    auto src = open_trace(path, format);
    Request r;
    while (src->next(r)) {
      ++requests;
      refs += r.blocks.size();
    }
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "import %s: %llu requests, %llu block refs in %.3f s: %.3g requests/s, %.3g block refs/s, peak RSS %ld KiB\n",
      path.c_str(), static_cast<unsigned long long>(requests), static_cast<unsigned long long>(refs), s, requests / s,
      refs / s, peak_rss_kib());
  return 0;
}

int generate_bench(std::uint64_t n, const char* config)
{
  GeneratorConfig c = config ? load_generator(config) : GeneratorConfig{};
  c.requests = n;
  AgenticGenerator g(c);
  Request r;
  std::uint64_t i = 0, refs = 0, next_report = 1000;
  const auto start = std::chrono::steady_clock::now();
  while (g.next(r)) {
    refs += r.blocks.size();
    if (++i == next_report || i == n) {
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::printf("%12llu requests  %14llu block refs  %8.2f s  peak RSS %8ld KiB  live agents %zu\n",
                  static_cast<unsigned long long>(i), static_cast<unsigned long long>(refs), s, peak_rss_kib(),
                  g.live_agents());
      next_report *= 10;
    }
  }
  return 0;
}
} // namespace

int main(int argc, char** argv)
{
  try {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "import" && argc >= 3) {
      TraceFormat f = guess_format(argv[2]);
      int repeat = 1;
      for (int i = 3; i + 1 < argc; i += 2) {
        if (std::string(argv[i]) == "--format")
          f = parse_format(argv[i + 1]).value_or(f);
        else if (std::string(argv[i]) == "--repeat")
          repeat = std::atoi(argv[i + 1]);
      }
      return import_bench(argv[2], f, repeat);
    }
    if (mode == "generate" && argc >= 3)
      return generate_bench(std::strtoull(argv[2], nullptr, 10), argc > 3 ? argv[3] : nullptr);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  std::fprintf(stderr, "usage: xattn_trace_bench import FILE [--format NAME] [--repeat N]\n"
                       "       xattn_trace_bench generate N [CONFIG.yaml]\n");
  return 2;
}
