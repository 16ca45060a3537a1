#include "workloads/batch.hpp"

#include "sim/core/yaml.hpp"
#include "workloads/generator.hpp"
#include "workloads/request_id.hpp"

#include <string>

namespace xattn::workloads
{
namespace
{
using core::Check;
using core::FieldKind;

const core::Schema kBatch{
    {.key = "requests_per_instance",
     .kind = FieldKind::kInteger,
     .meaning = "requests on each requester instance, all there at t = 0",
     .check = Check::kPositive,
     .range = {1, 1048576, "a GPU decodes a few hundred requests at once"}},
    {.key = "context_tokens",
     .kind = FieldKind::kInteger,
     .meaning = "each request's prompt, tokens (whole blocks)",
     .check = Check::kPositive,
     .range = core::kTokensRange},
    {.key = "output_tokens",
     .kind = FieldKind::kInteger,
     .def = "1",
     .meaning = "tokens each request makes",
     .check = Check::kPositive,
     .range = core::kTokensRange},
    kBlockTokensField,
    {.key = "shared_tokens",
     .kind = FieldKind::kInteger,
     .def = "0",
     .meaning = "0: each request's context its own; else a shared corpus of this many tokens (whole contexts), "
                "each request's context one of them",
     .range = {0, 1099511627776.0, "2^40 tokens: ten thousand times the largest corpus studied (93.6M)"}},
    {.key = "zipf_s",
     .kind = FieldKind::kQuantity,
     .def = "1.0",
     .meaning = "shared_tokens: the Zipf exponent of the contexts' popularity (0: uniform)",
     .range = {0, 100, "measured read popularity has 0.5 to 1.5; past 100 every request reads the top context"}},
    {.key = "seed",
     .kind = FieldKind::kInteger,
     .def = "1",
     .meaning = "seed of the shared corpus's draws; absent: the scenario's seed",
     .range = core::kSeedRange},
};
} // namespace

std::uint64_t BatchConfig::requests() const
{
  return static_cast<std::uint64_t>(instances) * static_cast<std::uint64_t>(requests_per_instance);
}

std::uint64_t BatchConfig::contexts() const
{
  return shared_tokens > 0 ? static_cast<std::uint64_t>(shared_tokens / context_tokens) : requests();
}

std::int64_t BatchConfig::corpus_tokens() const
{
  return static_cast<std::int64_t>(contexts()) * context_tokens;
}

const core::Schema& batch_schema()
{
  return kBatch;
}

BatchConfig read_batch(core::Section& s)
{
  BatchConfig c;
  c.seed = static_cast<std::uint64_t>(s.integer("seed"));
  c.requests_per_instance = s.integer("requests_per_instance");
  c.context_tokens = s.integer("context_tokens");
  c.output_tokens = s.integer("output_tokens");
  c.block_tokens = s.integer("block_tokens");
  c.shared_tokens = s.integer("shared_tokens");
  c.zipf_s = s.number("zipf_s");
  if (c.block_tokens > 0 && c.context_tokens % c.block_tokens != 0)
    s.error("context_tokens", std::to_string(c.context_tokens) + " is not whole blocks of block_tokens " +
                                  std::to_string(c.block_tokens));
  if (c.shared_tokens > 0 && c.context_tokens > 0 && c.shared_tokens % c.context_tokens != 0)
    s.error("shared_tokens", std::to_string(c.shared_tokens) + " is not whole contexts of context_tokens " +
                                 std::to_string(c.context_tokens));
  return c;
}

BatchSource::BatchSource(const BatchConfig& config) : cfg_(config), rng_(config.seed)
{
  if (cfg_.shared_tokens > 0) popular_.emplace(cfg_.contexts(), cfg_.zipf_s);
}

bool BatchSource::next(Request& out)
{
  if (next_ >= cfg_.requests()) return false;
  const std::uint64_t i = next_++;
  const auto blocks = static_cast<std::uint64_t>(cfg_.context_tokens / cfg_.block_tokens);
  const std::uint64_t context = popular_ ? (*popular_)(rng_) : i;
  out.id = i;
  out.arrival = core::Seconds{0.0};
  out.session = i; // a session of copy 0 (request_id.hpp)
  out.agent = ids::agent_id(i, 0);
  out.parent_agent = kNoAgent;
  out.block_tokens = cfg_.block_tokens;
  out.blocks.resize(blocks);
  for (std::uint64_t b = 0; b < blocks; ++b)
    out.blocks[b] = context * blocks + b;
  out.input_tokens = cfg_.context_tokens;
  out.output_tokens = cfg_.output_tokens;
  out.think = core::Seconds{0.0};
  return true;
}

} // namespace xattn::workloads
