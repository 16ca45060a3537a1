// A scenario file: what to simulate (docs/file-formats.md; `xattn run --describe`). Schema-checked like every input:
// every key in the table of scenario.cpp, unknown and duplicate keys are errors, all errors collected, and `xattn run
// --describe` prints the table.
#pragma once

#include "calibrate/profile.hpp"
#include "sim/engine/expert_draws.hpp"
#include "sim/engine/result.hpp"
#include "sim/model/model.hpp"
#include "sim/policy/policy.hpp"
#include "topologies/topology.hpp"
#include "workloads/batch.hpp"
#include "workloads/corpus.hpp"
#include "workloads/generator.hpp"
#include "workloads/selection.hpp"
#include "workloads/trace_format.hpp"

#include <array>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace xattn::sim::engine
{

/// The simulated-time horizon, s: arrivals (copies and time_scale included) stay below it. At 1e6 s
/// a double resolves 1.2e-10 s, a millionth of a 100 us step, within the 1e-5 relative tolerance
/// the step checks allow (sim/engine/README.md, "Invariants"); at 1e7 s it would not.
inline constexpr double kMaxSimulatedTimeS = 1e6;

enum class Granularity { kStep, kLayer };

/// The paper's three reductions of host overhead, as switches (all on: a production path).
struct WhatIf {
  bool collapsed_response = true;   ///< the holder's kernel issues the response: no second probe
  bool compute_amortisation = true; ///< one holder kernel serves every request of an exchange
  bool batching = true;             ///< one exchange per holder per step for all active requests
};

struct WorkloadSpec {
  std::string trace;             ///< path; empty when the generator is used
  workloads::TraceFormat format; ///< default: the own format
  std::optional<workloads::GeneratorConfig> generator;
  std::optional<workloads::BatchConfig> batch; ///< a standing batch (workloads/batch.hpp)
  double time_scale = 1.0;                     ///< arrivals happen this many times faster
  int copies = 1;                              ///< overlaid copies of the trace (sessions kept apart)
  core::Seconds copy_offset{0};                ///< shift between copies
  std::uint64_t max_requests = 0;              ///< 0: all
  std::int64_t max_output_tokens = 0;          ///< cap on decode steps per request (0: none)
  bool skip_bad = false;
  bool prefix_sessions = false; ///< workload.sessions prefix (workloads::ImportOptions::prefix_sessions)
};

/// Prefill on the decoding instances (scenario `prefill`, whose schema has the defaults): chunked
/// into the decode iterations under a token budget, as vLLM's scheduler runs it
/// (sim/engine/README.md, "Prefill").
/// instances.prefill: when a prompt's KV leaves its prefill instance (prefill.handoff).
enum class Handoff {
  kLayer, ///< each layer's KV as the layer is computed
  kAfter, ///< all of it once the prompt's prefill ends
  kNone,  ///< never by itself: it stays there, and the policies serve it as any remote chunk
};

struct PrefillSpec {
  bool enabled = false;
  std::int64_t max_num_batched_tokens = 0; ///< an iteration's tokens: decodes first, then prefill chunks
  core::Bytes kv_capacity{0};              ///< per requester GPU, for the prefilled chunks; 0: unbounded
  core::Bytes host_capacity{0};            ///< per node, for chunks evicted from the GPUs; 0: no host tier
  /// instances.prefill: the disaggregated prefill pool's GPUs, instance-major (empty: co-located).
  std::vector<topo::GpuId> pool;
  int pool_tp = 1;
  int pool_dp = 1; ///< prefill instances per data-parallel group (instances.prefill.dp_attention)
  int pool_ep = 1; ///< the group's GPUs the routed experts split over (1 or pool_dp)
  Handoff handoff = Handoff::kLayer;
  int block_tokens = 16; ///< the KV cache's block: a hand-off moves whole blocks
  /// The tokens a hand-off moves for `prefilled` prompt tokens: whole blocks, the prompt's and the
  /// slot of its first decoded token (vLLM allocates it before the KV leaves).
  double handoff_tokens(double prefilled) const { return std::ceil((prefilled + 1) / block_tokens) * block_tokens; }
  bool disaggregated() const { return !pool.empty(); }
  int pool_instances() const { return static_cast<int>(pool.size()) / pool_tp; }
  int pool_groups() const { return pool_instances() / pool_dp; }
  /// prefill.handoff none: prompts' KV stays in the prefill instances' pools.
  bool kept_in_pool() const { return disaggregated() && handoff == Handoff::kNone; }
};

/// Which requester instance a request goes to (scenario `router`; sim/engine/router.cpp).
enum class Router {
  kSession,     ///< a session stays on one instance (round-robin over new sessions)
  kRoundRobin,  ///< every request the next instance in turn
  kLeastLoaded, ///< the instance with the fewest requests being served
  kPrefix,      ///< the instance holding the longest cached prefix, unless the load is out of balance
};
inline constexpr std::array<std::pair<const char*, Router>, 4> kRouters{{{"session", Router::kSession},
                                                                         {"round-robin", Router::kRoundRobin},
                                                                         {"least-loaded", Router::kLeastLoaded},
                                                                         {"prefix", Router::kPrefix}}};
/// The router's knobs (their defaults, SGLang's cache-aware router's, are the schema's).
struct RouterSpec {
  Router policy = Router::kSession;
  double cache_threshold = 0;       ///< the share of a prompt's blocks an instance holds that sends it there
  double balance_abs_threshold = 0; ///< out of balance: the busiest serves more than this over the idlest...
  double balance_rel_threshold = 0; ///< ...and more than this times as many
};

/// A policy of the registry under parameters of its own (the scenario's `policy_variants`), named
/// in `policies` by its label.
struct PolicyVariant {
  std::string policy;                ///< its name in the registry
  policy::Params params;             ///< the parameters the scenario set (make() fills in the others)
  std::optional<double> prior_steps; ///< the online reuse estimate's prior for its run (default: engine's)
};

struct Scenario {
  std::string name;
  std::string file; ///< where it was read from
  std::uint64_t seed = 1;
  ModelSpec model;
  calibrate::Profile profile;
  std::shared_ptr<const topo::Topology> topology;
  std::vector<topo::GpuId> requesters; ///< GPUs, instance-major (tp consecutive GPUs per instance)
  std::vector<topo::GpuId> holders;
  int tp = 1;
  /// engine.step: full: the whole model's step (sim/model/serving.hpp); instances of dp_attention
  /// GPUs step together, the routed experts split over ep of them (layout.hpp).
  bool full_step = false;
  int dp_attention = 1;
  int ep = 1;
  /// instances.micro_batches: 2 pipelines each layer's compute with its all-to-all (moe_pipeline.cpp).
  int micro_batches = 1;
  ExpertRoutingConfig expert_routing; ///< instances.expert_routing and its knobs (expert_draws.hpp)
  workloads::CorpusConfig corpus;
  workloads::SelectionConfig selection;
  WorkloadSpec workload;
  /// Each a name in the policy registry (sim/policy/policies.def) or a label of policy_variants:
  /// the name of its run and of its results.
  std::vector<std::string> policies;
  std::map<std::string, PolicyVariant> policy_variants; ///< by label
  Granularity granularity = Granularity::kStep;
  core::Transport transport = core::Transport::kGpu;
  int max_batch = 64;
  core::Bytes cache_budget{16e9}; ///< per requester GPU: fetched and re-prefilled chunks (LRU)
  /// Per requester GPU, the HBM its batch's own KV may take: the profile's gpu.hbm_capacity less
  /// the weights (engine.step full) and the cache budget; 0: no gpu section, unbounded.
  core::Bytes batch_hbm{0};
  /// engine.fetch: blocking (the default) makes a step wait for the chunks it fetches;
  /// background moves the slow ones behind the step, their calls routed until they land.
  bool fetch_blocking = true;
  bool fast_path = true;
  bool check_solver = false; ///< engine.check_solver: every re-solve checked against a whole solve
  /// engine.interference: a requester GPU that serves calls too shares its compute with them
  /// (own_compute.hpp).
  bool interference = false;
  /// engine.replica_choice: a chunk's copy by the call's expected end (load), or the nearest.
  bool replica_by_load = true;
  /// engine.replication dynamic (replicas.hpp): copies of hot chunks made as the run goes.
  struct Replication {
    bool on = false;
    int after = 64;     ///< engine.replicate_after
    int max_copies = 3; ///< engine.max_copies
    double budget_B = 8e9;
  } replication;
  /// Requesters spread inter-node exchanges over their node's NICs, rail-matched to the holder
  /// (Topology::rail_relay), instead of sending everything through their own NIC.
  bool requester_nics_node = false;
  /// engine.overload_tolerance: the share of the offered output tokens a policy may fall short by
  /// over the second half of the arrival window and still keep up (load.hpp).
  double overload_tolerance = 0.1;
  double predicate_prior_steps = 256; ///< predicate's expected output length before any request ended
  /// engine.max_memory, or its default (core::default_memory_limit): the run stops cleanly past it.
  core::Bytes max_memory{0};
  std::string max_memory_origin; ///< "engine.max_memory = 8GiB", or where the default came from
  WhatIf what_if;
  PrefillSpec prefill;
  RouterSpec router;
  std::vector<RequestBound> goodput; ///< what a good request meets (result.hpp, Goodput)
  std::string out_dir;               ///< empty: out/<name>

  /// The policy `label` (one of `policies`) runs: its registry entry, the parameters set for it,
  /// and the prior of the online reuse estimate in its run.
  const policy::PolicyInfo& policy_info(const std::string& label) const;
  const policy::Params& policy_params(const std::string& label) const;
  double prior_steps(const std::string& label) const;
  /// Expert-parallel groups step together: the MoE layers' all-to-all couples their GPUs.
  bool grouped() const { return full_step && ep > 1; }
  int requester_instances() const { return static_cast<int>(requesters.size()) / tp; }
  int holder_instances() const { return static_cast<int>(holders.size()) / tp; }
  /// Instances whose pools hold prefilled chunks: the requester instances, then with
  /// prefill.handoff none the prefill instances.
  int kv_pools() const { return requester_instances() + (prefill.kept_in_pool() ? prefill.pool_instances() : 0); }
};

const core::Schema& scenario_schema();

/// prefill.max_num_batched_tokens under one of the workload's `block_tokens`-token blocks: the
/// problem, else "" (a generator's block size is checked as the scenario is read, a trace's once
/// it is opened).
std::string budget_under_block(const Scenario& sc, std::int64_t block_tokens);

/// Why `m`'s heads (or a GQA model's KV heads) do not split over `tp` ranks; "" when they do.
std::string heads_split_problem(const ModelSpec& m, int tp);

/// prefill.enabled: one corpus chunk's KV over every layer, as one rank of an instance holds it
/// (`whole` false: MLA's whole latent, GQA's share of the KV heads), or all of it once (`whole`:
/// what a host tier keeps of it).
core::Bytes chunk_kv(const Scenario& sc, bool whole);
/// The requester instances on the node of requester instance `instance` (itself included).
int instances_on_node(const Scenario& sc, int instance);
/// The chunks requester instance `instance`'s share of its node's host tier holds:
/// prefill.host_capacity split evenly over the requester instances of that node.
std::uint64_t host_tier_chunks(const Scenario& sc, int instance);

/// Loads a scenario file, applying `--set path=value` overrides first. Throws core::InputError
/// (every problem, with file:line:col and key path).
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides = {});
/// Same, from text in memory (`name` stands for the file in messages).
Scenario parse_scenario(const std::string& text, const std::string& name,
                        const std::vector<std::string>& overrides = {});

/// Parses a GPU selector list ("all", "node3", "node0-7", "node2.gpu0-3", "leaf1") against a
/// topology; errors go to `section` at `key`.
std::vector<topo::GpuId> parse_gpus(const std::vector<std::string>& selectors, const topo::Topology& t,
                                    core::Section& section, std::string_view key);

} // namespace xattn::sim::engine
