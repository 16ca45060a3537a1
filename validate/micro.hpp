// Micro-scenarios: one measured configuration (or one published figure's configuration) rebuilt as
// a tiny scenario and run through the SimGrid engine (sim::engine::run_scenario), not only the
// closed form. A micro-scenario is a scenario YAML text with an inline model (layers and heads
// chosen to give the wanted M_q), a topology whose requester/holder GPU pairs have the wanted
// fabric class, a JSONL trace written to a temporary folder, and a profile that extends the one
// under test by a few overrides where the configuration needs them.
//
// Conventions (they match `xattn predict`):
//   - `rows` is M_q of one request step (the inline model's heads; one layer unless `layers` set).
//   - a request names corpus chunks by index; chunks are numbered in order of first appearance in
//     the trace, one block per chunk, and placed round-robin on the holders, so a request naming
//     chunks 0..H-1 touches every one of H holders once.
//   - requests are assigned to requesters by the order their sessions first appear: request k of
//     requester r uses session r, and requester r's first request must come before r+1's.
//
// Without a user topology each fabric class gets a nominal topology built from the profile: the
// class's links at the profile's nominal bandwidth, every wire and switch latency zero (the
// profile's probe latency is measured end to end), every other link fast enough never to bind.
#pragma once

#include "calibrate/profile.hpp"
#include "sim/core/fabric.hpp"
#include "sim/engine/scenario.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace xattn::validate
{

struct MicroRequest {
  double arrival_s = 0;
  int requester = 0;          ///< index into the requester instances
  std::vector<int> chunks{0}; ///< corpus chunks attended, by index
  std::int64_t steps = 1;     ///< output tokens = decode steps
};

struct Micro {
  core::FabricClass fabric = core::FabricClass::kIbSpine;
  int requesters = 1;
  int holders = 1;
  std::string requester_gpus; ///< GPU selector on a user topology (empty: picked by fabric class)
  std::string holder_gpus;
  int rows = 256; ///< M_q per request step
  int layers = 1;
  int kv_lora_rank = 512;
  int rope_dim = 64;
  std::int64_t chunk_tokens = 2048;
  std::vector<MicroRequest> requests{MicroRequest{}};
  std::vector<std::string> policies{"route"}; ///< names in the policy registry
  core::Transport transport = core::Transport::kGpu;
  bool batching = true; ///< false: one exchange (one kernel, one flow) per request
  /// engine.requester_nics: node. On the nominal InfiniBand topology the requester and the holder
  /// nodes then have max(requesters, holders, 2) GPUs, each with its own NIC, joined by NVLink at
  /// the profile's nominal bandwidth; the holders are GPUs 0.. of their node, one per rail.
  bool requester_nics_node = false;
  int max_batch = 64;
  /// Profile overrides, dotted key -> value text with unit: {"holder.copy_streams", "8"}.
  std::map<std::string, std::string> profile_set;
};

/// A transfer of `bytes` from one holder to `concurrency` requesters at once, as the engine runs
/// it: a fetch of a one-chunk corpus whose latent is `bytes` long (one token up to 512 MiB, more
/// tokens of equal rows above: any size to the 1PB the harness gives a holder and a cache), with splice, attention
/// kernel and per-step compute set to zero, so that a step is probe + wire latency + host overhead + bytes over the
/// dispatch rate (`blocks` thread blocks; 0: the profile's fetch_blocks), shared where flows meet. Bytes are rounded to
/// an even count (bf16 values).
Micro transfer_micro(core::FabricClass fabric, double bytes, int blocks, int concurrency, core::Transport transport);

struct PolicyOutcome {
  double step_mean_s = 0, step_p50_s = 0, step_max_s = 0;
  double request_mean_s = 0;
  double wire_bytes = 0;
  std::int64_t steps = 0, requests = 0;
};

struct MicroOutcome {
  std::map<std::string, PolicyOutcome> policy; ///< by policy name
  bool invariants_ok = true;
  const PolicyOutcome& at(const std::string& policy) const;
};

class MicroRunner
{
public:
  /// `profile`: a preset name or a path; `topology`: empty for the nominal topologies, else a
  /// preset name or a path. Throws core::InputError when either cannot be read.
  explicit MicroRunner(std::string profile, std::string topology = "");
  ~MicroRunner();
  MicroRunner(const MicroRunner&) = delete;
  MicroRunner& operator=(const MicroRunner&) = delete;

  /// Runs one micro-scenario through the engine. Throws core::InputError when it cannot be built
  /// (e.g. a user topology without such a GPU pair).
  MicroOutcome run(const Micro& m);

  /// The scenario YAML text `run` would simulate (for tests and --verbose).
  std::string scenario_text(const Micro& m, const std::filesystem::path& trace, const std::string& profile) const;

  const calibrate::Profile& profile() const { return profile_; }
  const std::string& profile_path() const { return profile_path_; }
  bool nominal() const { return topology_.empty(); }
  int runs() const { return runs_; }

private:
  std::string profile_file(const Micro& m);
  std::string topology_yaml(const Micro& m, std::vector<std::string>& req, std::vector<std::string>& hold) const;

  std::string profile_path_; ///< absolute
  calibrate::Profile profile_;
  std::string topology_; ///< absolute path, or empty
  std::shared_ptr<const topo::Topology> user_topology_;
  std::filesystem::path dir_;
  std::map<std::string, std::string> override_files_;
  int runs_ = 0;
};

} // namespace xattn::validate
