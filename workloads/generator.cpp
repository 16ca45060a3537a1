#include "workloads/generator.hpp"

#include "workloads/request_id.hpp"

#include <algorithm>
#include <cmath>

namespace xattn::workloads
{

AgenticGenerator::AgenticGenerator(const GeneratorConfig& config)
    : cfg_(config), rng_(config.seed),
      corpus_blocks_(static_cast<std::uint64_t>(std::max<std::int64_t>(1, config.corpus_tokens / config.block_tokens))),
      files_((corpus_blocks_ + config.read_blocks - 1) / config.read_blocks),
      system_blocks_(static_cast<std::uint64_t>(config.system_tokens / config.block_tokens)),
      zipf_(files_, config.zipf_s)
{
  file_of_rank_.resize(files_);
  for (std::uint64_t f = 0; f < files_; ++f)
    file_of_rank_[f] = static_cast<std::uint32_t>(f);
  if (cfg_.shuffled) { // Fisher-Yates on its own stream, so the layout does not depend on later draws
    Rng layout = Rng::derive(cfg_.seed, 1);
    for (std::uint64_t i = files_ - 1; i > 0; --i)
      std::swap(file_of_rank_[i], file_of_rank_[layout.below(i + 1)]);
  }
  if (cfg_.process == ArrivalProcess::kMmpp) state_end_s_ = rng_.exponential(cfg_.calm_dwell.value());
  for (std::int64_t i = 0; i < cfg_.agents; ++i)
    start_top_level(0.0);
}

std::int64_t AgenticGenerator::draw_length(const LengthConfig& c)
{
  double v = c.mean;
  if (c.distribution == LengthDistribution::kExponential)
    v = rng_.exponential(c.mean);
  else if (c.distribution == LengthDistribution::kLognormal)
    v = rng_.lognormal(c.mean, c.cv);
  return std::max<std::int64_t>(1, std::llround(v));
}

// Appends `reads` files drawn by popularity, each a run of read_blocks blocks.
void AgenticGenerator::read_into(std::vector<std::uint64_t>& out, std::int64_t reads)
{
  for (std::int64_t i = 0; i < reads; ++i) {
    const std::uint64_t file = file_of_rank_[zipf_(rng_)];
    const std::uint64_t first = file * cfg_.read_blocks;
    for (std::uint64_t b = first; b < std::min(first + cfg_.read_blocks, corpus_blocks_); ++b)
      out.push_back(b);
  }
}

void AgenticGenerator::append_private(Agent& a, std::int64_t tokens)
{
  const std::int64_t blocks = (tokens + cfg_.block_tokens - 1) / cfg_.block_tokens;
  for (std::int64_t i = 0; i < blocks; ++i)
    a.context.push_back(ids::private_block(next_private_++));
}

void AgenticGenerator::start_top_level(double at_s)
{
  Agent a;
  a.order = next_order_++;
  a.session = next_session_++;
  a.id = ids::agent_id(a.session, 0);
  a.turns_left = cfg_.turns;
  a.last_done_s = at_s;
  a.ready_s = at_s + (cfg_.process == ArrivalProcess::kClosed ? rng_.exponential(cfg_.think.value()) : 0.0);
  for (std::uint64_t b = 0; b < system_blocks_; ++b)
    a.context.push_back(ids::system_block(b));
  agents_.push_back(std::move(a));
}

void AgenticGenerator::spawn(Agent& parent, double at_s, std::int64_t parent_out)
{
  const auto n = static_cast<std::int64_t>(1 + rng_.below(static_cast<std::uint64_t>(cfg_.max_subagents)));
  std::vector<std::uint64_t> shared; // the code every sibling is sent to explore
  read_into(shared, cfg_.reads_per_turn);
  parent.live_children = n;
  const std::uint64_t parent_id = parent.id, session = parent.session, first_sub = parent.subagents;
  parent.subagents += static_cast<std::uint64_t>(n); // `parent` may move once agents_ grows below
  const double start_s = at_s + static_cast<double>(parent_out) * cfg_.time_per_output_token.value();
  for (std::int64_t k = 0; k < n; ++k) {
    Agent c;
    c.order = next_order_++;
    c.id = ids::agent_id(session, first_sub + static_cast<std::uint64_t>(k) + 1); // bounded by read_generator
    c.session = session;
    c.parent = parent_id;
    c.turns_left = cfg_.subagent_turns;
    c.ready_s = start_s;
    c.last_done_s = start_s;
    for (std::uint64_t b = 0; b < system_blocks_; ++b)
      c.context.push_back(ids::system_block(b));
    // Each shared file is kept with probability sibling_overlap, else replaced by an own read.
    for (std::size_t i = 0; i < shared.size(); i += cfg_.read_blocks) {
      if (rng_.uniform() < cfg_.sibling_overlap)
        c.context.insert(c.context.end(), shared.begin() + i,
                         shared.begin() + std::min(shared.size(), i + static_cast<std::size_t>(cfg_.read_blocks)));
      else
        read_into(c.context, 1);
    }
    c.started = false;
    c.live_children = -1; // marks "first reads already in context"
    agents_.push_back(std::move(c));
  }
}

double AgenticGenerator::next_open_arrival()
{
  double t = clock_s_;
  if (cfg_.process == ArrivalProcess::kPoisson) return t + rng_.exponential(cfg_.interarrival.value());
  for (;;) { // MMPP: memoryless gaps, redrawn when the state changes first
    const double gap = rng_.exponential(burst_ ? cfg_.burst_interarrival.value() : cfg_.interarrival.value());
    if (t + gap <= state_end_s_) return t + gap;
    t = state_end_s_;
    burst_ = !burst_;
    state_end_s_ = t + rng_.exponential(burst_ ? cfg_.burst_dwell.value() : cfg_.calm_dwell.value());
  }
}

std::size_t AgenticGenerator::earliest() const
{
  std::size_t best = 0;
  for (std::size_t i = 1; i < agents_.size(); ++i)
    if (agents_[i].ready_s < agents_[best].ready_s ||
        (agents_[i].ready_s == agents_[best].ready_s && agents_[i].order < agents_[best].order))
      best = i;
  return best;
}

bool AgenticGenerator::next(Request& out)
{
  if (emitted_ == cfg_.requests) return false;
  const std::size_t i = earliest();
  Agent& a = agents_[i];
  const double t = cfg_.process == ArrivalProcess::kClosed ? std::max(a.ready_s, clock_s_) : next_open_arrival();
  clock_s_ = t;
  const double think_s = a.started ? std::max(0.0, t - a.last_done_s) : 0.0;
  if (a.live_children == -1) // a sub-agent's first turn: its reads were placed at spawn
    a.live_children = 0;
  else
    read_into(a.context, cfg_.reads_per_turn);
  append_private(a, draw_length(cfg_.turn_tokens));
  const std::int64_t out_tokens = draw_length(cfg_.output);

  out.id = emitted_++;
  out.arrival = core::Seconds(t);
  out.session = a.session;
  out.agent = a.id;
  out.parent_agent = a.parent;
  out.block_tokens = cfg_.block_tokens;
  out.blocks.assign(a.context.begin(), a.context.end());
  out.input_tokens = static_cast<std::int64_t>(a.context.size()) * cfg_.block_tokens;
  out.output_tokens = out_tokens;
  out.think = core::Seconds(think_s);

  // The reply joins the context: the next turn's prompt extends this one (prefix growth).
  a.started = true;
  a.turns_left -= 1;
  a.last_done_s = t + static_cast<double>(out_tokens) * cfg_.time_per_output_token.value();
  a.ready_s = a.last_done_s + (cfg_.process == ArrivalProcess::kClosed ? rng_.exponential(cfg_.think.value()) : 0.0);
  append_private(a, out_tokens);
  const double next_tokens = static_cast<double>(a.context.size() * cfg_.block_tokens) +
                             static_cast<double>(cfg_.reads_per_turn * cfg_.read_blocks * cfg_.block_tokens) +
                             cfg_.turn_tokens.mean;
  const bool ends = a.turns_left <= 0 || next_tokens > static_cast<double>(cfg_.max_context_tokens);
  if (!ends && a.parent == kNoAgent && a.live_children == 0 && cfg_.spawn_probability > 0 &&
      rng_.uniform() < cfg_.spawn_probability)
    spawn(a, t, out_tokens); // may grow agents_: `a` is not used after this
  if (ends) {
    Agent done = std::move(agents_[i]);
    agents_.erase(agents_.begin() + static_cast<std::ptrdiff_t>(i));
    if (done.parent == kNoAgent)
      start_top_level(done.ready_s); // A stays constant: a fresh session replaces the finished one
    else
      for (Agent& p : agents_)
        if (p.id == done.parent && p.live_children > 0) --p.live_children;
  }
  return true;
}

} // namespace xattn::workloads
