// Shared pieces of the probe harness: error checks, timing with CUDA events (warm-up, many
// iterations per repetition, >= 5 repetitions, median and p10/p90 over repetitions) and a small
// JSON writer. The harness links nothing of ours (docs/architecture.md), so it carries its own.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace probe
{

#define PROBE_CUDA(call)                                                                                               \
  do {                                                                                                                 \
    cudaError_t err_ = (call);                                                                                         \
    if (err_ != cudaSuccess) {                                                                                         \
      std::fprintf(stderr, "xattn_probe: %s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_));       \
      std::exit(3);                                                                                                    \
    }                                                                                                                  \
  } while (0)

struct Config {
  int warmup = 10; ///< untimed iterations before each measurement
  int iters = 50;  ///< timed iterations per repetition
  int reps = 7;    ///< repetitions (>= 5); the median over them is the reported value
  bool quick = false;
};

/// One measured point: the features x and the per-iteration time of each repetition.
struct Sample {
  std::vector<double> x;
  int iters = 0;
  std::vector<double> per_rep_s;
};

/// One probe's output. status "ok" or "skipped" (then `reason` says why).
struct Probe {
  std::string name, quantity, fabric, transport, dispatch, status = "ok", reason;
  std::vector<std::string> params;
  std::vector<Sample> points;
};

inline Probe skipped(std::string name, std::string quantity, std::string reason)
{
  Probe p;
  p.name = std::move(name);
  p.quantity = std::move(quantity);
  p.status = "skipped";
  p.reason = std::move(reason);
  std::fprintf(stderr, "xattn_probe: skip %s: %s\n", p.name.c_str(), p.reason.c_str());
  return p;
}

/// Quantile q of v (linear interpolation between order statistics).
inline double quantile(std::vector<double> v, double q)
{
  std::sort(v.begin(), v.end());
  double pos = q * (v.size() - 1);
  std::size_t i = static_cast<std::size_t>(pos);
  double f = pos - i;
  return i + 1 < v.size() ? v[i] * (1 - f) + v[i + 1] * f : v[i];
}

/// Times `body` (which enqueues one iteration on `stream`): warm-up, then `reps` repetitions of
/// `iters` iterations between two events. Returns seconds per iteration, one value per repetition.
inline std::vector<double> time_on_stream(cudaStream_t stream, const Config& c, const std::function<void()>& body,
                                          int iters = 0)
{
  if (iters <= 0) iters = c.iters;
  for (int i = 0; i < c.warmup; ++i)
    body();
  PROBE_CUDA(cudaStreamSynchronize(stream));
  cudaEvent_t a, b;
  PROBE_CUDA(cudaEventCreate(&a));
  PROBE_CUDA(cudaEventCreate(&b));
  std::vector<double> out;
  for (int r = 0; r < c.reps; ++r) {
    PROBE_CUDA(cudaEventRecord(a, stream));
    for (int i = 0; i < iters; ++i)
      body();
    PROBE_CUDA(cudaEventRecord(b, stream));
    PROBE_CUDA(cudaEventSynchronize(b));
    float ms = 0;
    PROBE_CUDA(cudaEventElapsedTime(&ms, a, b));
    out.push_back(ms * 1e-3 / iters);
  }
  PROBE_CUDA(cudaEventDestroy(a));
  PROBE_CUDA(cudaEventDestroy(b));
  return out;
}

inline Sample sample(std::vector<double> x, int iters, std::vector<double> per_rep)
{
  return Sample{std::move(x), iters, std::move(per_rep)};
}

/// JSON string escaping (control characters, quotes, backslashes).
inline std::string quote(const std::string& s)
{
  std::string o = "\"";
  for (unsigned char ch : s) {
    if (ch == '"' || ch == '\\') {
      o += '\\';
      o += static_cast<char>(ch);
    } else if (ch < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", ch);
      o += buf;
    } else {
      o += static_cast<char>(ch);
    }
  }
  return o + "\"";
}

inline std::string num(double v)
{
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

/// The probes section of the output JSON (calibrate/README.md documents the schema).
inline std::string probe_json(const Probe& p)
{
  std::string o = "{\"name\": " + quote(p.name) + ", \"quantity\": " + quote(p.quantity);
  if (!p.fabric.empty()) o += ", \"fabric\": " + quote(p.fabric);
  if (!p.transport.empty()) o += ", \"transport\": " + quote(p.transport);
  if (!p.dispatch.empty()) o += ", \"dispatch\": " + quote(p.dispatch);
  o += ", \"status\": " + quote(p.status);
  if (!p.reason.empty()) o += ", \"reason\": " + quote(p.reason);
  o += ", \"params\": [";
  for (std::size_t i = 0; i < p.params.size(); ++i)
    o += (i ? ", " : "") + quote(p.params[i]);
  o += "], \"points\": [";
  for (std::size_t i = 0; i < p.points.size(); ++i) {
    const Sample& s = p.points[i];
    o += i ? ",\n    " : "\n    ";
    o += "{\"x\": [";
    for (std::size_t k = 0; k < s.x.size(); ++k)
      o += (k ? ", " : "") + num(s.x[k]);
    o += "], \"iters\": " + std::to_string(s.iters) + ", \"samples_s\": [";
    for (std::size_t k = 0; k < s.per_rep_s.size(); ++k)
      o += (k ? ", " : "") + num(s.per_rep_s[k]);
    o += "], \"median_s\": " + num(quantile(s.per_rep_s, 0.5)) + ", \"p10_s\": " + num(quantile(s.per_rep_s, 0.1)) +
         ", \"p90_s\": " + num(quantile(s.per_rep_s, 0.9)) + "}";
  }
  return o + "]}";
}

// Probe families, each in its own file; each appends what it measured (or why it skipped).
void launch_probes(const Config& c, std::vector<Probe>& out);
void transfer_probes(const Config& c, std::vector<Probe>& out);
void mla_probes(const Config& c, std::vector<Probe>& out);
/// Runs the GPU kernels on random inputs against the CPU reference; returns the number of failures.
int mla_check();

} // namespace probe
