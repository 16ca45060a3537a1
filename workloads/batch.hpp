// A standing batch: the same number of requests on every requester instance, all there at t = 0,
// each with a context of the same length, either its own or drawn from a shared corpus. The load
// of a profile point (a serving system measured at a fixed batch: DeepSeek's published throughput
// per GPU) and of a study of what a shared corpus costs at that batch: every request is there from
// the start, so throughput is the batch's, never an arrival rate's.
#pragma once

#include "sim/core/schema.hpp"
#include "workloads/request.hpp"
#include "workloads/rng.hpp"

#include <cstdint>
#include <optional>

namespace xattn::workloads
{

struct BatchConfig {
  std::uint64_t seed = 1;     ///< the shared corpus's draws
  std::int64_t instances = 1; ///< requester instances (the scenario's, set by its reader)
  std::int64_t requests_per_instance = 1;
  std::int64_t context_tokens = 4096; ///< each request's prompt: whole blocks
  std::int64_t block_tokens = 64;
  std::int64_t output_tokens = 1; ///< tokens each request makes
  std::int64_t shared_tokens = 0; ///< 0: each context its own; else the shared corpus, whole contexts
  double zipf_s = 1.0;            ///< popularity of the shared corpus's contexts by rank

  std::uint64_t requests() const;
  /// The contexts a request may read: the shared corpus's, or one a request.
  std::uint64_t contexts() const;
  /// Tokens of every context a request may read (what the holders must hold).
  std::int64_t corpus_tokens() const;
};

/// The schema of a scenario's `workload.batch` section (`xattn describe scenario` shows it).
const core::Schema& batch_schema();
/// Reads a batch section (`instances` left to the caller); problems go to the section's diagnostics.
BatchConfig read_batch(core::Section& s);

/// The requests, round by round: request i is the (i / instances)-th of instance i mod instances,
/// the instance a session router or a round-robin router gives it (each request is its own session,
/// and new sessions go to the instances in turn). Its context is context i (block ids i x blocks
/// to i x blocks + blocks - 1: with chunks of context_tokens placed round-robin from holder 0, on
/// the holder of the same index), or with shared_tokens a context of the shared corpus drawn with
/// popularity 1 / (rank + 1)^zipf_s, rank r being context r.
class BatchSource : public RequestSource
{
public:
  explicit BatchSource(const BatchConfig& config);
  bool next(Request& out) override;

private:
  BatchConfig cfg_;
  Rng rng_;
  std::optional<ZipfSampler> popular_;
  std::uint64_t next_ = 0;
};

} // namespace xattn::workloads
