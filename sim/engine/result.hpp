// The typed results of a run: one PolicyResult per policy simulated, one RunResult per run. They
// are written to and read from summary.json here and nowhere else; every consumer (the terminal
// table, sweeps, plans, validation, benchmarks) reads these types. Reading tolerates keys that
// older runs did not write (they read as zero), so earlier output folders still load.
#pragma once

#include "sim/core/fabric.hpp"
#include "sim/engine/load.hpp"

#include <nlohmann/json_fwd.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace xattn::sim::engine
{

/// Latency statistics, seconds (nearest-rank quantiles).
struct LatencyStats {
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};

/// The statistics' names in summary.json, in order (tables list them so).
inline constexpr std::array<std::pair<const char*, double LatencyStats::*>, 5> kLatencyFields{
    {{"mean", &LatencyStats::mean},
     {"p50", &LatencyStats::p50},
     {"p90", &LatencyStats::p90},
     {"p99", &LatencyStats::p99},
     {"max", &LatencyStats::max}}};

/// Chunk decisions over all steps; `cached` chunks were attended from the requester's cache,
/// `same_gpu` ones sat on the requester itself.
struct Decisions {
  std::uint64_t route = 0, fetch = 0, local = 0, cached = 0, same_gpu = 0;
};
inline constexpr std::array<std::pair<const char*, std::uint64_t Decisions::*>, 5> kDecisionFields{
    {{"route", &Decisions::route},
     {"fetch", &Decisions::fetch},
     {"local", &Decisions::local},
     {"cached", &Decisions::cached},
     {"same_gpu", &Decisions::same_gpu}}};

/// How the engine moved bytes (sim/engine/network.hpp's counters, NetworkStats).
struct EngineCounters {
  std::uint64_t transfers = 0, fluid = 0, simgrid = 0, resolves = 0, resolved = 0, widest_resolve = 0,
                max_in_flight = 0, simgrid_comms = 0, max_comms_in_flight = 0, relayed = 0;
};
inline constexpr std::array<std::pair<const char*, std::uint64_t EngineCounters::*>, 10> kEngineFields{
    {{"transfers", &EngineCounters::transfers},
     {"fluid", &EngineCounters::fluid},
     {"simgrid_transfers", &EngineCounters::simgrid},
     {"resolves", &EngineCounters::resolves},
     {"resolved", &EngineCounters::resolved},
     {"widest_resolve", &EngineCounters::widest_resolve},
     {"max_in_flight", &EngineCounters::max_in_flight},
     {"simgrid_comms", &EngineCounters::simgrid_comms},
     {"max_comms_in_flight", &EngineCounters::max_comms_in_flight},
     {"relayed", &EngineCounters::relayed}}};

/// What bounded the requesters' HBM: steps whose batch stopped short of engine.max_batch because
/// the next request's KV would not fit beside the weights and the cache (Scenario::batch_hbm),
/// the requests left waiting in them, summed over those steps, and the requester caches' LRU
/// evictions.
struct MemoryCounters {
  std::uint64_t hbm_bound_steps = 0, hbm_waiting = 0, cache_evictions = 0;
  /// engine.replication dynamic: copies of chunks the holders received, and those their budgets
  /// evicted since.
  std::uint64_t replica_copies = 0, replica_evictions = 0;
};
inline constexpr std::array<std::pair<const char*, std::uint64_t MemoryCounters::*>, 5> kMemoryFields{
    {{"hbm_bound_steps", &MemoryCounters::hbm_bound_steps},
     {"hbm_waiting", &MemoryCounters::hbm_waiting},
     {"cache_evictions", &MemoryCounters::cache_evictions},
     {"replica_copies", &MemoryCounters::replica_copies},
     {"replica_evictions", &MemoryCounters::replica_evictions}}};

/// prefill.enabled: the prompts' block references, those that found the block prefilled already
/// (by an earlier request, in a pool), the tokens prefilled and the chunks they ran in.
struct PrefillCounters {
  std::uint64_t block_references = 0, block_hits = 0, prefilled_tokens = 0, chunks = 0;
  std::uint64_t pool_chunks = 0;   ///< chunks a requester instance's pool holds (0: unbounded)
  std::uint64_t host_chunks = 0;   ///< chunks a requester instance's host tier holds (0: none; the first instance's)
  std::uint64_t handoffs = 0;      ///< instances.prefill: prompts whose KV went to their requester instance
  std::uint64_t handoff_bytes = 0; ///< the KV they moved, every rank's share
  /// The share of block references that hit: the trace's reuse ratio when nothing is evicted.
  double hit_share() const
  {
    return block_references > 0 ? static_cast<double>(block_hits) / static_cast<double>(block_references) : 0.0;
  }
};
inline constexpr std::array<std::pair<const char*, std::uint64_t PrefillCounters::*>, 8> kPrefillFields{
    {{"block_references", &PrefillCounters::block_references},
     {"block_hits", &PrefillCounters::block_hits},
     {"prefilled_tokens", &PrefillCounters::prefilled_tokens},
     {"chunks", &PrefillCounters::chunks},
     {"pool_chunks", &PrefillCounters::pool_chunks},
     {"host_chunks", &PrefillCounters::host_chunks},
     {"handoffs", &PrefillCounters::handoffs},
     {"handoff_bytes", &PrefillCounters::handoff_bytes}}};

/// prefill.enabled, per requester instance: what its prompts found and what its pool of prefilled
/// chunks did (sim/engine/kv_pool.hpp).
struct PoolCounts {
  std::uint64_t local_hits = 0;     ///< block references found in this instance's pool
  std::uint64_t remote_hits = 0;    ///< found in another instance's pool: served by cross-instance calls
  std::uint64_t misses = 0;         ///< found nowhere: prefilled here
  std::uint64_t evictions = 0;      ///< chunks dropped from this pool to make room
  std::uint64_t peak = 0;           ///< the most chunks it held at once
  std::uint64_t overflows = 0;      ///< placements that left it over its bound (every other chunk in use)
  std::uint64_t host_hits = 0;      ///< block references found in this instance's host tier (read back)
  std::uint64_t host_reads = 0;     ///< chunks read back from its host tier into its pool
  std::uint64_t host_evictions = 0; ///< chunks dropped from its host tier to make room
  std::uint64_t host_peak = 0;      ///< the most chunks its host tier held at once
};
inline constexpr std::array<std::pair<const char*, std::uint64_t PoolCounts::*>, 10> kPoolFields{
    {{"local_hits", &PoolCounts::local_hits},
     {"remote_hits", &PoolCounts::remote_hits},
     {"misses", &PoolCounts::misses},
     {"evictions", &PoolCounts::evictions},
     {"peak_chunks", &PoolCounts::peak},
     {"overflows", &PoolCounts::overflows},
     {"host_hits", &PoolCounts::host_hits},
     {"host_reads", &PoolCounts::host_reads},
     {"host_evictions", &PoolCounts::host_evictions},
     {"host_peak_chunks", &PoolCounts::host_peak}}};

/// The invariants' names (docs/architecture.md, "Invariants"): the first word of each of their
/// problems, and of the line on stderr when one fails.
inline constexpr std::string_view kRequestsFinished = "all_requests_finished";
inline constexpr std::string_view kBytesAccounted = "bytes_accounted";
inline constexpr std::string_view kStepBounds = "step_bounds";
inline constexpr std::string_view kCachesWithinBudget = "caches_within_budget";
inline constexpr std::string_view kGpusWithinWall = "gpus_within_wall";

/// The invariants one simulation checked (docs/architecture.md, "Invariants").
struct Invariants {
  bool ok = true, all_requests_finished = true, bytes_accounted = true, caches_within_budget = true,
       gpus_within_wall = true;
  std::uint64_t unfinished = 0, step_bound_violations = 0;
  double simgrid_bytes_handed = 0, simgrid_bytes_completed = 0;
  std::vector<std::string> problems; ///< "NAME: what", the first few
};
/// "NAME: what": a problem as Invariants::problems holds it.
std::string invariant_problem(std::string_view name, const std::string& what);

/// A request's own latency figures, as vLLM's benchmark defines them, by their names in
/// summary.json: time to first token (arrival to the end of the step that made it), time per
/// output token ((last token - first token) / (tokens - 1), 0 with one token), end to end
/// (arrival to last token). A goodput bound names one of them.
enum class RequestFigure { kTtft, kTpot, kE2e };
inline constexpr std::array<std::pair<const char*, RequestFigure>, 3> kRequestFigures{
    {{"ttft_s", RequestFigure::kTtft}, {"tpot_s", RequestFigure::kTpot}, {"e2e_s", RequestFigure::kE2e}}};
constexpr const char* request_figure_name(RequestFigure f)
{
  return kRequestFigures[static_cast<std::size_t>(f)].first;
}
static_assert(kRequestFigures[1].second == RequestFigure::kTpot && kRequestFigures[2].second == RequestFigure::kE2e,
              "kRequestFigures is in RequestFigure's order");
/// The request figures' names joined by `sep`; the figure named `name`, or nullopt.
std::string request_figure_names(std::string_view sep);
std::optional<RequestFigure> request_figure(std::string_view name);

/// A bound on one of a request's figures (inclusive); the scenario's `goodput` lists them.
struct RequestBound {
  RequestFigure figure = RequestFigure::kTtft;
  double max_s = 0;
};

/// Goodput as vLLM's benchmark defines it: the finished requests that met every bound, as a share
/// of the finished requests that made a token and per simulated second.
struct Goodput {
  double share = 0, requests_per_s = 0;
  std::vector<RequestBound> bounds; ///< the scenario's, in its order
};

struct PolicyResult {
  std::uint64_t requests = 0, arrived = 0, steps = 0, iterations = 0;
  LatencyStats step_latency_s;
  /// Over the finished requests: time to first token, end to end (kRequestFigures); time per
  /// output token over those with two tokens or more.
  LatencyStats ttft_s, e2e_s, tpot_s;
  /// Inter-token latency: every gap between two consecutive tokens of a request, over all requests.
  LatencyStats itl_s;
  Goodput goodput;
  /// Decoded tokens over the simulated time and every GPU the run uses (requesters and holders:
  /// work moved to a holder is not free).
  double output_tokens_per_s_per_gpu = 0;
  /// Offered against delivered load over the arrival window, and whether the policy kept up
  /// (load.hpp). An overloaded policy's latencies are a growing queue's: never ranked.
  LoadFigures load;
  /// engine.step full with ep > 1, per GPU and MoE round: its dispatch (from the last GPU reaching
  /// the MoE layers to its last incoming token) and its combine (from its experts' end to its
  /// tokens' last result back). Written only for such a run.
  bool expert_parallel = false;
  LatencyStats ep_dispatch_s, ep_combine_s;
  /// engine.interference: the iterations of the requester instances whose GPUs serve calls too,
  /// summed, over the same less the time those calls' kernels held their own kernels back (its
  /// busiest rank's): how much longer their steps, and so their requests' TPOT, took for serving.
  /// 1: none of them served a call while computing. Written only for such a run.
  bool interference = false;
  double holder_tpot_inflation = 1;
  /// instances.prefill, per prompt: from the end of its prefill to the last byte of its KV landed
  /// on its requester instance (summary prefill.handoff_wait_s).
  LatencyStats handoff_wait_s;
  /// engine.step full: a step's mean time by part, over request steps: the model's GEMMs (with the
  /// element-wise kernels between them: sim/model/serving.hpp, elementwise_time), the MoE
  /// layers (from reaching them to their results back, the group's wait included), and attention
  /// with the rest (step mean - both). Written only for such a run.
  bool full_step = false;
  double split_gemm_s = 0, split_moe_s = 0, split_attention_s = 0;
  std::uint64_t wire_bytes = 0;
  std::array<std::uint64_t, core::kAllFabrics.size()> wire_bytes_by_fabric{}; ///< by core::FabricClass
  Decisions decisions;
  double simulated_time_s = 0;
  EngineCounters engine;
  MemoryCounters memory;
  /// prefill.enabled: what the prompts prefilled (summary `prefill`, written only for such a run).
  bool prefill = false;
  PrefillCounters prefill_counts;
  std::vector<PoolCounts> pools; ///< per requester instance (summary `prefill.instances`: one array a field)
  std::uint64_t skipped_trace_entries = 0;
  /// The busiest resource of the run and the share of the run it was busy (holder kernels' GPU
  /// time, a requester's own compute, or the bytes a link direction carried at its bandwidth):
  /// near 1, its queue grew. "" when nothing was busy.
  std::string busiest;
  double busiest_share = 0;
  Invariants invariants;
  /// Stopped part-way (a signal, the memory guard): the figures so far. In summary.interrupted.json
  /// only; `requests` counts the requests done (also written as "requests_done").
  bool partial = false;
};

/// A spread: the 5th, 50th and 95th percentiles over an ensemble's members.
struct Spread {
  double p5 = 0, p50 = 0, p95 = 0;
  std::vector<double> values; ///< each member's, in member order
};

/// `run --ensemble N`: the figures over N members, each with a profile drawn from the
/// profile's uncertainty and its own seed.
struct Ensemble {
  int members = 0;
  bool profile_drawn = false;        ///< false: the profile gives points only, members differ by seed alone
  bool ok = true;                    ///< every member's invariants held
  std::vector<std::string> problems; ///< the first failed invariants, "member K, POLICY: what"
  /// Per policy, per figure used for kSpread (figures.hpp), by its path, its spread.
  std::vector<std::pair<std::string, std::vector<std::pair<std::string, Spread>>>> policies;

  /// `policy`'s spread of `figure`, or null.
  const Spread* spread(std::string_view policy, std::string_view figure) const;
  /// Under 20 members, nearest-rank 5% and 95% are the smallest and the largest member: what is
  /// printed as a 5-95% range is then the whole range.
  bool range_is_ends() const { return members < 20; }
};

/// The latency statistics of a policy's summary, by name.
inline constexpr std::array<std::pair<const char*, LatencyStats PolicyResult::*>, 5> kLatencyFigures{
    {{"step_latency_s", &PolicyResult::step_latency_s},
     {"ttft_s", &PolicyResult::ttft_s},
     {"tpot_s", &PolicyResult::tpot_s},
     {"itl_s", &PolicyResult::itl_s},
     {"e2e_s", &PolicyResult::e2e_s}}};

struct RunResult {
  std::string scenario;
  std::string run_id; ///< every output file of the run carries it (empty: not known, an older summary)
  std::int64_t seed = 0;
  std::vector<std::pair<std::string, PolicyResult>> policies; ///< in the order they were given
  bool ok = false;                                            ///< every policy's invariants held
  bool interrupted = false; ///< stopped early: the policies that had finished, and the others' figures so far
  int signal = 0;           ///< the signal that stopped it; 0 when a guard did
  std::string limit;        ///< the guard's key when one stopped it ("engine.max_memory"), else empty
  std::string limit_message;
  std::optional<Ensemble> ensemble;

  /// The policy named `name`, or null.
  const PolicyResult* find(const std::string& name) const;
  /// Whether any policy ran with prefill, with a host tier, with prompts handed off from a prefill
  /// pool: the run's table shows those figures, and its legend says what they are, exactly then.
  bool any_prefill() const
  {
    return any([](const PolicyResult& p) { return p.prefill; });
  }
  bool any_host_tier() const
  {
    return any([](const PolicyResult& p) { return p.prefill_counts.host_chunks > 0; });
  }
  bool any_handoff() const
  {
    return any([](const PolicyResult& p) { return p.prefill_counts.handoffs > 0; });
  }

private:
  template <typename F>
  bool any(F&& f) const
  {
    return std::any_of(policies.begin(), policies.end(), [&](const auto& p) { return f(p.second); });
  }
};

/// One policy as a child process hands it to the driver (its invariants included).
nlohmann::json to_json(const PolicyResult& r);
PolicyResult policy_result(const nlohmann::json& j);

/// The version of summary.json's layout this xattn writes and reads; a reader refuses a newer one.
/// Raise it when a key is renamed or removed (adding keys does not need it).
/// 2: request_latency_s became e2e_s; 3: engine.real became engine.simgrid_transfers.
inline constexpr int kSummaryFormat = 3;

/// summary.json: {"format", "scenario", "run_id", "seed", "policies": {NAME: {...}}, "invariants": {"ok", NAME: {...}}}
/// (plus "interrupted", "signal", and "limit" and "limit_message" when a guard stopped it, for a run
/// stopped early; a policy stopped part-way carries "partial": true and "requests_done").
nlohmann::json to_json(const RunResult& r);
RunResult run_result(const nlohmann::json& j);
/// Throws core::InputError naming `file` when summary `j` has a newer format than kSummaryFormat
/// (one without "format" is of format 1).
void check_summary_format(const nlohmann::json& j, const std::string& file);
/// Reads a summary.json (or summary.interrupted.json). Throws core::InputError naming the file
/// when it cannot be read or parsed, or is of a newer format.
RunResult read_run_result(const std::filesystem::path& file);

} // namespace xattn::sim::engine
