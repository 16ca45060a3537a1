// The generator's YAML schema and reader (generator.hpp).
#include "sim/core/yaml.hpp"
#include "workloads/generator.hpp"
#include "workloads/request_id.hpp"

namespace xattn::workloads
{
namespace
{
using core::Check;
using core::Dimension;
using core::FieldKind;

const core::Schema kLength{
    {.key = "distribution",
     .kind = FieldKind::kChoice,
     .def = "lognormal",
     .meaning = "shape of the distribution",
     .choices = "lognormal|exponential|fixed"},
    {.key = "mean",
     .kind = FieldKind::kQuantity,
     .def = "300",
     .meaning = "mean, tokens",
     .check = Check::kPositive,
     .range = core::kTokensRange},
    {.key = "cv",
     .kind = FieldKind::kQuantity,
     .def = "1",
     .meaning = "coefficient of variation (lognormal)",
     .range = {0, 100, "measured lengths vary by 0.5 to 3 times their mean"}},
};
const core::Schema kCorpus{
    {.key = "tokens",
     .kind = FieldKind::kInteger,
     .def = "4000000",
     .meaning = "N: size of the shared corpus, tokens",
     .check = Check::kPositive,
     .range = {1, 1099511627776.0, "2^40 tokens: ten thousand times the largest corpus studied (93.6M)"}},
    {.key = "zipf_s",
     .kind = FieldKind::kQuantity,
     .def = "1.0",
     .meaning = "Zipf exponent of read popularity (0: uniform)",
     .range = {0, 100, "measured read popularity has 0.5 to 1.5; past 100 every read hits the top file"}},
    {.key = "layout",
     .kind = FieldKind::kChoice,
     .def = "shuffled",
     .meaning = "where popular files sit: scattered, or contiguous at the corpus start",
     .choices = "shuffled|contiguous"},
    {.key = "reads_per_turn",
     .kind = FieldKind::kInteger,
     .def = "8",
     .meaning = "corpus reads (files) per turn",
     .range = {0, 65536, "agents read a few dozen files a turn"}},
    {.key = "read_blocks",
     .kind = FieldKind::kInteger,
     .def = "4",
     .meaning = "blocks per read (file size)",
     .check = Check::kPositive,
     .range = {1, 1048576, "blocks per file: 2^20 blocks is a file past every context window"}},
};
const core::Schema kSubagents{
    {.key = "spawn_probability",
     .kind = FieldKind::kQuantity,
     .def = "0.1",
     .meaning = "chance a top-level turn spawns sub-agents (if none live)",
     .range = core::kShareRange},
    {.key = "max",
     .kind = FieldKind::kInteger,
     .def = "4",
     .meaning = "siblings per spawn, uniform 1..max",
     .check = Check::kPositive,
     .range = {1, 65534, "sub-agent ids take 16 bits of an agent id (workloads/request_id.hpp)"}},
    {.key = "turns",
     .kind = FieldKind::kInteger,
     .def = "8",
     .meaning = "turns per sub-agent",
     .check = Check::kPositive,
     .range = {1, 1048576, "a session of a million turns is a typo"}},
    {.key = "sibling_overlap",
     .kind = FieldKind::kQuantity,
     .def = "0.8",
     .meaning = "share of a sub-agent's first reads common to its siblings",
     .range = core::kShareRange},
};
const core::Schema kAgents{
    {.key = "count",
     .kind = FieldKind::kInteger,
     .def = "16",
     .meaning = "A: top-level agents at any time",
     .check = Check::kPositive,
     .range = {1, 65536, "each live agent keeps its context in memory (up to max_context_tokens)"}},
    {.key = "system_tokens",
     .kind = FieldKind::kInteger,
     .def = "4096",
     .meaning = "shared system prompt, tokens",
     .range = {0, 16777216, "2^24 tokens is past every model's context window"}},
    {.key = "turns",
     .kind = FieldKind::kInteger,
     .def = "20",
     .meaning = "turns per top-level session",
     .check = Check::kPositive,
     .range = {1, 1048576, "a session of a million turns is a typo"}},
    {.key = "turn_tokens",
     .kind = FieldKind::kSection,
     .def = "",
     .meaning = "fresh private tokens per turn",
     .sub = &kLength},
    {.key = "max_context_tokens",
     .kind = FieldKind::kInteger,
     .def = "200000",
     .meaning = "a session ends before its context passes this",
     .check = Check::kPositive,
     .range = core::kTokensRange},
    {.key = "subagents", .kind = FieldKind::kSection, .def = "", .meaning = "sub-agent spawning", .sub = &kSubagents},
};
const core::Schema kArrival{
    {.key = "process",
     .kind = FieldKind::kChoice,
     .def = "poisson",
     .meaning = "arrival process",
     .choices = "poisson|mmpp|closed"},
    {.key = "interarrival",
     .dim = Dimension::kSeconds,
     .def = "100ms",
     .meaning = "poisson: mean gap; mmpp: mean gap when calm",
     .check = Check::kPositive,
     .range = {1e-6, 86400, "from a million requests a second to one a day"}},
    {.key = "burst_interarrival",
     .dim = Dimension::kSeconds,
     .def = "10ms",
     .meaning = "mmpp: mean gap in a burst",
     .check = Check::kPositive,
     .range = {1e-6, 86400, "from a million requests a second to one a day"}},
    {.key = "calm_dwell",
     .dim = Dimension::kSeconds,
     .def = "60s",
     .meaning = "mmpp: mean time calm",
     .check = Check::kPositive,
     .range = {1e-6, 86400, "dwell times from a microsecond to a day"}},
    {.key = "burst_dwell",
     .dim = Dimension::kSeconds,
     .def = "10s",
     .meaning = "mmpp: mean time bursting",
     .check = Check::kPositive,
     .range = {1e-6, 86400, "dwell times from a microsecond to a day"}},
    {.key = "think",
     .dim = Dimension::kSeconds,
     .def = "5s",
     .meaning = "closed: mean think time (exponential)",
     .range = {0, 86400, "think times up to a day"}},
    {.key = "time_per_output_token",
     .dim = Dimension::kSeconds,
     .def = "20ms",
     .meaning = "closed: nominal decode time per output token",
     .range = {0, 1, "decoding takes ms per token; a second is a typo"}},
};
const core::Schema kGenerator{
    {.key = "seed",
     .kind = FieldKind::kInteger,
     .def = "1",
     .meaning = "random seed: same seed, same trace",
     .range = core::kSeedRange},
    {.key = "requests",
     .kind = FieldKind::kInteger,
     .def = "10000",
     .meaning = "requests to generate",
     .check = Check::kPositive,
     .range = {1, 4294967296.0,
               "each request may open a session, and session ids take 32 bits (workloads/request_id.hpp)"}},
    kBlockTokensField,
    {.key = "corpus", .kind = FieldKind::kSection, .def = "", .meaning = "the shared corpus", .sub = &kCorpus},
    {.key = "agents", .kind = FieldKind::kSection, .def = "", .meaning = "agents and sessions", .sub = &kAgents},
    {.key = "arrival", .kind = FieldKind::kSection, .def = "", .meaning = "arrival process", .sub = &kArrival},
    {.key = "output", .kind = FieldKind::kSection, .def = "", .meaning = "output length, tokens", .sub = &kLength},
};

LengthConfig read_length(core::Section s)
{
  LengthConfig c;
  const std::string d = s.choice("distribution");
  c.distribution = d == "fixed"         ? LengthDistribution::kFixed
                   : d == "exponential" ? LengthDistribution::kExponential
                                        : LengthDistribution::kLognormal;
  c.mean = s.number("mean");
  c.cv = s.number("cv");
  return c;
}

// The ids the generator will make must fit the request-id layout (workloads/request_id.hpp):
// sessions (agents.count at the start, one more each time a session ends, at most once per
// request) and the sub-agents of one session (at most one spawn per top-level turn).
void check_ids(const GeneratorConfig& c, core::Section& s, core::Section& sub)
{
  const double sessions = static_cast<double>(c.agents) + static_cast<double>(c.requests);
  if (sessions > static_cast<double>(ids::kSessions))
    s.error("requests", "agents.count + requests = " + std::to_string(c.agents) + " + " + std::to_string(c.requests) +
                            " sessions may open, more than the " + std::to_string(ids::kSessions) +
                            " of the request-id layout (workloads/request_id.hpp)");
  const double per_session = static_cast<double>(c.turns) * static_cast<double>(c.max_subagents);
  if (c.spawn_probability > 0 && per_session > static_cast<double>(ids::kSubagents))
    sub.error("max", "agents.turns x agents.subagents.max = " + std::to_string(c.turns) + " x " +
                         std::to_string(c.max_subagents) + " sub-agents may spawn in one session, more than the " +
                         std::to_string(ids::kSubagents) + " of the request-id layout (workloads/request_id.hpp)");
}
} // namespace

double GeneratorConfig::mean_rate_per_s() const
{
  if (process == ArrivalProcess::kPoisson) return 1.0 / interarrival.value();
  if (process == ArrivalProcess::kMmpp)
    return (calm_dwell.value() / interarrival.value() + burst_dwell.value() / burst_interarrival.value()) /
           (calm_dwell.value() + burst_dwell.value());
  return 0.0;
}

const core::Schema& generator_schema()
{
  return kGenerator;
}

GeneratorConfig read_generator(core::Section& s)
{
  GeneratorConfig c;
  c.seed = static_cast<std::uint64_t>(s.integer("seed"));
  c.requests = static_cast<std::uint64_t>(s.integer("requests"));
  c.block_tokens = s.integer("block_tokens");
  core::Section corpus = s.section("corpus");
  c.corpus_tokens = corpus.integer("tokens");
  c.zipf_s = corpus.number("zipf_s");
  c.shuffled = corpus.choice("layout") == "shuffled";
  c.reads_per_turn = corpus.integer("reads_per_turn");
  c.read_blocks = corpus.integer("read_blocks");
  if (c.block_tokens > 0 && c.corpus_tokens < c.block_tokens)
    corpus.error("tokens", "the corpus must hold at least one block of " + std::to_string(c.block_tokens) + " tokens");
  core::Section agents = s.section("agents");
  c.agents = agents.integer("count");
  c.system_tokens = agents.integer("system_tokens");
  c.turns = agents.integer("turns");
  c.turn_tokens = read_length(agents.section("turn_tokens"));
  c.max_context_tokens = agents.integer("max_context_tokens");
  core::Section sub = agents.section("subagents");
  c.spawn_probability = sub.number("spawn_probability");
  c.max_subagents = sub.integer("max");
  c.subagent_turns = sub.integer("turns");
  c.sibling_overlap = sub.number("sibling_overlap");
  core::Section arrival = s.section("arrival");
  const std::string p = arrival.choice("process");
  c.process = p == "mmpp" ? ArrivalProcess::kMmpp : p == "closed" ? ArrivalProcess::kClosed : ArrivalProcess::kPoisson;
  c.interarrival = arrival.seconds("interarrival");
  c.burst_interarrival = arrival.seconds("burst_interarrival");
  c.calm_dwell = arrival.seconds("calm_dwell");
  c.burst_dwell = arrival.seconds("burst_dwell");
  c.think = arrival.seconds("think");
  c.time_per_output_token = arrival.seconds("time_per_output_token");
  c.output = read_length(s.section("output"));
  check_ids(c, s, sub);
  return c;
}

GeneratorConfig load_generator(const std::string& path)
{
  core::Document doc = core::load_yaml(path);
  core::Diagnostics diags;
  core::Section s(doc.file, doc.root, "", generator_schema(), diags);
  GeneratorConfig c = read_generator(s);
  diags.throw_if_any();
  return c;
}

} // namespace xattn::workloads
