// The synthetic agentic workload: A top-level agents, each working through sessions of turns and
// spawning sub-agents, all reading one shared corpus whose block popularity is Zipf(s). Streaming
// (memory bounded by the live agents and the corpus, not the trace length) and deterministic by
// seed, on every platform (own RNG and sampling, workloads/rng.hpp).
#pragma once

#include "sim/core/schema.hpp"
#include "workloads/request.hpp"
#include "workloads/rng.hpp"

#include <cstdint>
#include <vector>

namespace xattn::workloads
{

enum class ArrivalProcess { kPoisson, kMmpp, kClosed };
enum class LengthDistribution { kFixed, kExponential, kLognormal };

struct LengthConfig {
  LengthDistribution distribution = LengthDistribution::kLognormal;
  double mean = 300; ///< tokens
  double cv = 1.0;   ///< std / mean (lognormal only)
};

struct GeneratorConfig {
  std::uint64_t seed = 1;
  std::uint64_t requests = 10000;
  std::int64_t block_tokens = 64;
  // corpus
  std::int64_t corpus_tokens = 4'000'000;
  double zipf_s = 1.0;
  bool shuffled = true;            ///< hot ranks scattered over the corpus (false: at its start)
  std::int64_t reads_per_turn = 8; ///< corpus reads per turn
  std::int64_t read_blocks = 4;    ///< consecutive blocks per read (a file)
  // agents and sessions
  std::int64_t agents = 16;                                             ///< A: top-level agents at any time
  std::int64_t system_tokens = 4096;                                    ///< shared system prompt opening every context
  std::int64_t turns = 20;                                              ///< turns per top-level session
  LengthConfig turn_tokens{LengthDistribution::kExponential, 512, 1.0}; ///< fresh private tokens per turn
  std::int64_t max_context_tokens = 200'000; ///< a session ends before its context passes this
  double spawn_probability = 0.1;            ///< per top-level turn (when it has no live sub-agents)
  std::int64_t max_subagents = 4;            ///< siblings per spawn: uniform 1..max
  std::int64_t subagent_turns = 8;
  double sibling_overlap = 0.8; ///< share of a sub-agent's first reads common to its siblings
  // arrivals
  ArrivalProcess process = ArrivalProcess::kPoisson;
  core::Seconds interarrival{0.1};                   ///< poisson: mean gap; mmpp: mean gap in the calm state
  core::Seconds burst_interarrival{0.01};            ///< mmpp: mean gap in the burst state
  core::Seconds calm_dwell{60.0}, burst_dwell{10.0}; ///< mmpp: mean time in each state
  core::Seconds think{5.0};                          ///< closed: mean think time (exponential)
  core::Seconds time_per_output_token{0.02};         ///< closed: nominal decode time, s per output token
  LengthConfig output{LengthDistribution::kLognormal, 300, 1.0};

  /// Long-run request rate, 1/s, of an open arrival process (poisson or mmpp); 0 for closed.
  double mean_rate_per_s() const;
};

/// A generated stream's block size, tokens per block id: the same key in the generator's schema and
/// the standing batch's (workloads/batch.hpp).
inline constexpr core::Field kBlockTokensField{.key = "block_tokens",
                                               .kind = core::FieldKind::kInteger,
                                               .def = "64",
                                               .meaning = "tokens per block id",
                                               .check = core::Check::kPositive,
                                               .range = {1, 65536, "prefix caches use 16 to 512"}};

/// The schema of a `generator:` section (also the text of `xattn trace generate --describe`).
const core::Schema& generator_schema();
/// Reads a generator section; problems go to the section's diagnostics (throw them after).
GeneratorConfig read_generator(core::Section& s);
/// Loads a YAML file holding a generator section at its root. Throws core::InputError.
GeneratorConfig load_generator(const std::string& path);

class AgenticGenerator : public RequestSource
{
public:
  explicit AgenticGenerator(const GeneratorConfig& config);
  bool next(Request& out) override;

  std::uint64_t corpus_blocks() const { return corpus_blocks_; }
  /// Live agents now (bounded: A plus their sub-agents).
  std::size_t live_agents() const { return agents_.size(); }

private:
  struct Agent {
    std::uint64_t id = 0, session = 0, parent = kNoAgent;
    std::uint64_t order = 0;            ///< creation order: breaks ties between agents ready at once
    std::uint64_t subagents = 0;        ///< sub-agents this session's main agent spawned so far
    std::vector<std::uint64_t> context; ///< block ids, prompt order
    std::int64_t turns_left = 0;
    std::int64_t live_children = 0;
    double ready_s = 0, last_done_s = 0;
    bool started = false;
  };
  std::int64_t draw_length(const LengthConfig& c);
  void read_into(std::vector<std::uint64_t>& out, std::int64_t reads);
  void start_top_level(double at_s);
  void spawn(Agent& parent, double at_s, std::int64_t parent_out);
  double next_open_arrival();
  std::size_t earliest() const;
  void append_private(Agent& a, std::int64_t tokens);

  GeneratorConfig cfg_;
  Rng rng_;
  std::uint64_t corpus_blocks_ = 0, files_ = 0, system_blocks_ = 0;
  ZipfSampler zipf_;
  std::vector<std::uint32_t> file_of_rank_; ///< layout: popularity rank -> file index
  std::vector<Agent> agents_;
  std::uint64_t emitted_ = 0, next_order_ = 0, next_session_ = 0, next_private_ = 0;
  double clock_s_ = 0;
  bool burst_ = false;
  double state_end_s_ = 0;
};

} // namespace xattn::workloads
