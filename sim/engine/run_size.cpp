#include "sim/engine/run_size.hpp"
#include "sim/core/yaml.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace xattn::sim::engine
{
namespace
{
constexpr double kBytesPerSample = 4; // a float per sample (results.cpp)
// Samples kept: per step its latency and the gap since its request's last token; per request its
// TTFT, TPOT and end-to-end latency (simulation.hpp).
constexpr double kSamplesPerStep = 2, kSamplesPerRequest = 3;
constexpr double kBytesPerBlock = 2 * 64;           // a block's corpus-index entry, in the plan and in the simulation
constexpr double kBytesPerFile = 4 + 8;             // the generator's layout and Zipf tables, per file
constexpr double kBytesPerContextBlock = 8;         // a block id in a live agent's context
constexpr double kBytesPerSharedContext = 8;        // a standing batch's shared corpus: its Zipf table, per context
constexpr double kMaxGeneratedFiles = 4294967296.0; // the layout table holds 32-bit file numbers

double blocks_of(double tokens, double block_tokens)
{
  return std::ceil(tokens / block_tokens);
}

// The requests of all copies, cut at workload.max_requests, of `per_copy` a copy and `output` tokens
// each (capped at workload.max_output_tokens), and the latency samples they keep.
void count_requests(const WorkloadSpec& w, double per_copy, double output, RunSizeEstimate& e)
{
  e.requests = per_copy * w.copies;
  if (w.max_requests > 0) e.requests = std::min(e.requests, static_cast<double>(w.max_requests));
  if (w.max_output_tokens > 0) output = std::min(output, static_cast<double>(w.max_output_tokens));
  e.steps = e.requests * std::max(1.0, output);
  e.latency_bytes = kBytesPerSample * (kSamplesPerRequest * e.requests + kSamplesPerStep * e.steps);
}
} // namespace

RunSizeEstimate estimate_run_size(const Scenario& sc)
{
  RunSizeEstimate e;
  if (const auto& b = sc.workload.batch) {
    count_requests(sc.workload, static_cast<double>(b->requests()), static_cast<double>(b->output_tokens), e);
    // Copies repeat one copy's contexts.
    e.block_bytes = kBytesPerBlock * static_cast<double>(b->contexts()) *
                    blocks_of(static_cast<double>(b->context_tokens), static_cast<double>(b->block_tokens));
    e.generator_bytes = b->shared_tokens > 0 ? kBytesPerSharedContext * static_cast<double>(b->contexts()) : 0.0;
    return e;
  }
  if (!sc.workload.generator) return e;
  const workloads::GeneratorConfig& g = *sc.workload.generator;
  const double per_copy = static_cast<double>(g.requests);
  count_requests(sc.workload, per_copy, g.output.mean, e);
  // Copies repeat one copy's block ids: the distinct blocks are those of one copy.
  const double bt = static_cast<double>(g.block_tokens);
  const double private_blocks = blocks_of(g.turn_tokens.mean, bt) + blocks_of(std::max(1.0, g.output.mean), bt);
  e.block_bytes = kBytesPerBlock * std::min(per_copy, e.requests) * private_blocks;
  const double files =
      blocks_of(blocks_of(static_cast<double>(g.corpus_tokens), bt), static_cast<double>(g.read_blocks));
  const double live = static_cast<double>(g.agents) * (1.0 + static_cast<double>(g.max_subagents));
  e.generator_bytes =
      kBytesPerFile * files + kBytesPerContextBlock * live * blocks_of(static_cast<double>(g.max_context_tokens), bt);
  return e;
}

namespace
{
// The generator's own limits: its corpus's file numbers, and open arrivals past the horizon.
void check_generator(const WorkloadSpec& w, core::Section& gen, double last_copy_s)
{
  const workloads::GeneratorConfig& g = *w.generator;
  // The generated corpus's files are numbered in 32 bits (workloads/generator.hpp).
  const double bt = static_cast<double>(g.block_tokens);
  const double files =
      blocks_of(blocks_of(static_cast<double>(g.corpus_tokens), bt), static_cast<double>(g.read_blocks));
  if (files > kMaxGeneratedFiles)
    gen.error("corpus.tokens", fmt::format("corpus.tokens / block_tokens / corpus.read_blocks = {} / {} / {} = {:.4g} "
                                           "files, more than the {:.0f} the generator numbers (32-bit file ids)",
                                           g.corpus_tokens, g.block_tokens, g.read_blocks, files, kMaxGeneratedFiles));
  // Open arrivals past the horizon (a closed loop's pace depends on the simulation).
  if (const double rate = g.mean_rate_per_s(); rate > 0) {
    const double span_s = static_cast<double>(g.requests) / rate / w.time_scale + last_copy_s;
    if (span_s > kMaxSimulatedTimeS && last_copy_s <= kMaxSimulatedTimeS)
      gen.error("requests", fmt::format("requests / arrival rate / workload.time_scale = {} / {:.4g} per s / {:g}{} = "
                                        "{:.4g} s of arrivals, past the simulated-time horizon of {:g} s (where a "
                                        "double still resolves a step's microseconds)",
                                        g.requests, rate, w.time_scale,
                                        w.copies > 1 ? " (plus the copies' offsets)" : "", span_s, kMaxSimulatedTimeS));
  }
}
} // namespace

void check_run_size(const Scenario& sc, RunSizeKeys k)
{
  const WorkloadSpec& w = sc.workload;
  // Copies shifted past the horizon.
  const double last_copy_s = (w.copies - 1) * w.copy_offset.value() / w.time_scale;
  if (last_copy_s > kMaxSimulatedTimeS)
    k.workload.error("copy_offset",
                     fmt::format("(workload.copies - 1) x workload.copy_offset / workload.time_scale = {} x {} / {:g} "
                                 "= {:.4g} s: the last copy would start past the simulated-time horizon of {:g} s "
                                 "(where a double still resolves a step's microseconds)",
                                 w.copies - 1, core::format_seconds(w.copy_offset), w.time_scale, last_copy_s,
                                 kMaxSimulatedTimeS));

  // A chunk must fit one holder GPU: chunk_tokens x layers x the KV bytes per token it holds.
  const core::Bytes per_token = sc.model.kv_per_token_on_rank(sc.tp);
  const core::Bytes chunk =
      per_token * static_cast<double>(sc.model.layers) * static_cast<double>(sc.corpus.chunk_tokens);
  if (sc.model.layers > 0 && chunk > sc.corpus.holder_hbm)
    k.corpus.error("chunk_tokens", fmt::format("corpus.chunk_tokens x model.layers x {} per token and layer = {} x {} "
                                               "x {} = {} per chunk, more than corpus.holder_hbm ({})",
                                               core::format_bytes(per_token), sc.corpus.chunk_tokens, sc.model.layers,
                                               core::format_bytes(per_token), core::format_bytes(chunk),
                                               core::format_bytes(sc.corpus.holder_hbm)));
  // A copy must fit the budget it goes to, or it would move and never be kept.
  if (sc.replication.on && sc.model.layers > 0 && chunk.value() > sc.replication.budget_B)
    k.engine.error("replica_budget",
                   fmt::format("{} holds no copy of a chunk ({} per GPU)",
                               core::format_bytes(core::Bytes(sc.replication.budget_B)), core::format_bytes(chunk)));

  if (k.source == nullptr) return;
  if (w.generator) check_generator(w, *k.source, last_copy_s);
  // What the run must hold, against engine.max_memory.
  const RunSizeEstimate e = estimate_run_size(sc);
  if (e.total() <= sc.max_memory.value()) return;
  const std::string holds = fmt::format(
      "the run holds at least {} ({} for exact latency percentiles, 8 B per step and 12 B per request; {} of corpus "
      "index; {} of {}), more than {}",
      core::format_bytes(core::Bytes(e.total())), core::format_bytes(core::Bytes(e.latency_bytes)),
      core::format_bytes(core::Bytes(e.block_bytes)), core::format_bytes(core::Bytes(e.generator_bytes)),
      w.generator ? "generator state" : "the shared corpus's popularity table", sc.max_memory_origin);
  const std::string capped = w.max_output_tokens > 0 ? ", capped at workload.max_output_tokens" : "";
  const double steps_each = e.requests > 0 ? e.steps / e.requests : 0.0;
  if (w.generator)
    k.source->error("requests", fmt::format("requests x workload.copies = {} x {} = {:.4g} requests of about {:.4g} "
                                            "decode steps each (output.mean{}): {}; lower workload.generator.requests "
                                            "or workload.copies, or raise engine.max_memory",
                                            w.generator->requests, w.copies, e.requests, steps_each, capped, holds));
  else
    k.source->error("requests_per_instance",
                    fmt::format("requests_per_instance x instances x workload.copies = {} x {} x {} = {:.4g} requests "
                                "of {:.4g} decode steps each (output_tokens{}): {}; lower "
                                "workload.batch.requests_per_instance or workload.copies, or raise engine.max_memory",
                                w.batch->requests_per_instance, w.batch->instances, w.copies, e.requests, steps_each,
                                capped, holds));
}

} // namespace xattn::sim::engine
