#include "workloads/stats.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>

namespace xattn::workloads
{
namespace
{
int bucket_of(std::int64_t v)
{
  if (v < 128) return static_cast<int>(std::max<std::int64_t>(v, 0));
  const int e = std::bit_width(static_cast<std::uint64_t>(v)) - 1; // >= 7
  return 128 + (e - 7) * 64 + static_cast<int>((v >> (e - 6)) & 63);
}

std::int64_t lower_edge(int b)
{
  if (b < 128) return b;
  const int e = (b - 128) / 64 + 7;
  return (std::int64_t{1} << e) + (static_cast<std::int64_t>((b - 128) % 64) << (e - 6));
}

LengthSummary summarize(const LengthHistogram& h)
{
  return {h.mean(), h.quantile(0.5), h.quantile(0.9), h.quantile(0.99), h.max()};
}

double jaccard(const std::vector<std::uint64_t>& a, const std::vector<std::uint64_t>& b)
{
  std::size_t i = 0, j = 0, both = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] < b[j])
      ++i;
    else if (b[j] < a[i])
      ++j;
    else {
      ++both;
      ++i;
      ++j;
    }
  }
  const std::size_t either = a.size() + b.size() - both;
  return either ? static_cast<double>(both) / static_cast<double>(either) : 1.0;
}
} // namespace

void LengthHistogram::add(std::int64_t v)
{
  ++buckets_[bucket_of(v)];
  ++count_;
  sum_ += static_cast<double>(v);
  max_ = std::max(max_, v);
}

std::int64_t LengthHistogram::quantile(double q) const
{
  if (count_ == 0) return 0;
  const auto rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_)));
  std::uint64_t seen = 0;
  for (int b = 0; b < kBuckets; ++b) {
    seen += buckets_[b];
    if (seen >= std::max<std::uint64_t>(rank, 1)) return std::min(lower_edge(b), max_);
  }
  return max_;
}

void TraceStats::add(const Request& r)
{
  const double t = r.arrival.value();
  if (requests_ == 0) first_s_ = t;
  last_s_ = t;
  ++requests_;
  in_.add(r.input_tokens);
  out_.add(r.output_tokens);
  if (block_tokens_ == 0 && !r.blocks.empty()) block_tokens_ = r.block_tokens;
  refs_ += r.blocks.size();
  for (std::uint64_t b : r.blocks) {
    BlockCount& c = blocks_[b];
    ++c.refs;
    if (c.last != requests_) {
      c.last = requests_;
      ++c.requests;
    }
  }
  sessions_.try_emplace(r.session, 0);
  auto [agent, fresh] = agents_.try_emplace(r.agent, Agent{r.parent_agent});
  if (!r.is_subagent()) return;
  ++subagent_requests_;
  if (!fresh) return;
  // A sub-agent's first request: compare with its nearest earlier siblings' first requests.
  Parent& p = parents_[r.parent_agent];
  ++p.children;
  scratch_.assign(r.blocks.begin(), r.blocks.end());
  std::sort(scratch_.begin(), scratch_.end());
  scratch_.erase(std::unique(scratch_.begin(), scratch_.end()), scratch_.end());
  for (const auto& sibling : p.recent_first) {
    overlap_sum_ += jaccard(scratch_, sibling);
    ++overlap_pairs_;
  }
  if (p.recent_first.size() == 8) p.recent_first.erase(p.recent_first.begin());
  p.recent_first.push_back(scratch_);
}

StatsReport TraceStats::report() const
{
  StatsReport s;
  s.requests = requests_;
  s.duration_s = last_s_ - first_s_;
  s.rate_per_s = s.duration_s > 0 ? static_cast<double>(requests_) / s.duration_s : 0.0;
  s.input_tokens = summarize(in_);
  s.output_tokens = summarize(out_);
  s.block_tokens = block_tokens_;
  s.block_refs = refs_;
  s.distinct_blocks = blocks_.size();
  s.reuse_ratio = refs_ ? 1.0 - static_cast<double>(blocks_.size()) / static_cast<double>(refs_) : 0.0;

  // Rank-frequency: sorted counts (the order of equal counts does not matter to the fit).
  std::vector<std::uint64_t> counts;
  counts.reserve(blocks_.size());
  std::uint64_t top_requests = 0;
  for (const auto& [id, c] : blocks_) {
    counts.push_back(c.refs);
    top_requests = std::max(top_requests, c.requests);
  }
  std::sort(counts.begin(), counts.end(), std::greater<>());
  if (!counts.empty()) {
    const std::size_t top = std::max<std::size_t>(1, counts.size() / 100);
    std::uint64_t top_refs = 0;
    for (std::size_t i = 0; i < top; ++i)
      top_refs += counts[i];
    s.top1pct_share = static_cast<double>(top_refs) / static_cast<double>(refs_);
    s.top_block_share = static_cast<double>(top_requests) / static_cast<double>(requests_);
    // Least squares of log(count) on log(rank) over ranks whose count is large enough that its
    // sampling noise stays small (>= 20 references).
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    std::size_t n = 0;
    for (std::size_t i = 0; i < counts.size() && counts[i] >= 20; ++i, ++n) {
      const double x = std::log(static_cast<double>(i + 1)), y = std::log(static_cast<double>(counts[i]));
      sx += x;
      sy += y;
      sxx += x * x;
      sxy += x * y;
    }
    if (n >= 3) s.zipf_s = -(n * sxy - sx * sy) / (n * sxx - sx * sx);
  }
  s.sessions = sessions_.size();
  s.agents = agents_.size();
  for (const auto& [id, a] : agents_)
    s.subagents += a.parent != kNoAgent;
  s.subagent_requests = subagent_requests_;
  s.parents_with_subagents = parents_.size();
  for (const auto& [id, p] : parents_)
    s.max_siblings = std::max(s.max_siblings, p.children);
  s.sibling_pairs = overlap_pairs_;
  s.sibling_overlap = overlap_pairs_ ? overlap_sum_ / static_cast<double>(overlap_pairs_) : 0.0;
  return s;
}

std::string to_text(const StatsReport& s)
{
  char buf[2048];
  auto len = [](const LengthSummary& l) {
    char b[160];
    std::snprintf(b, sizeof b, "mean %.1f  p50 %lld  p90 %lld  p99 %lld  max %lld", l.mean,
                  static_cast<long long>(l.p50), static_cast<long long>(l.p90), static_cast<long long>(l.p99),
                  static_cast<long long>(l.max));
    return std::string(b);
  };
  std::snprintf(buf, sizeof buf,
                "requests          %llu\n"
                "duration          %.3f s\n"
                "rate              %.3f requests/s\n"
                "input tokens      %s\n"
                "output tokens     %s\n"
                "block size        %lld tokens\n"
                "block references  %llu\n"
                "distinct blocks   %llu\n"
                "reuse ratio       %.1f%% (references to a block already seen)\n"
                "popularity        zipf s %.3f, top 1%% of blocks take %.1f%% of references, "
                "top block in %.1f%% of requests\n"
                "sessions          %llu\n"
                "agents            %llu\n",
                static_cast<unsigned long long>(s.requests), s.duration_s, s.rate_per_s, len(s.input_tokens).c_str(),
                len(s.output_tokens).c_str(), static_cast<long long>(s.block_tokens),
                static_cast<unsigned long long>(s.block_refs), static_cast<unsigned long long>(s.distinct_blocks),
                100.0 * s.reuse_ratio, s.zipf_s, 100.0 * s.top1pct_share, 100.0 * s.top_block_share,
                static_cast<unsigned long long>(s.sessions), static_cast<unsigned long long>(s.agents));
  std::string out = buf;
  if (s.subagents == 0) return out; // the sub-agent lines say something only for a trace that has them
  std::snprintf(buf, sizeof buf,
                "sub-agents        %llu under %llu parents, at most %llu siblings\n"
                "sub-agent calls   %llu\n"
                "sibling overlap   %.3f (mean Jaccard of first requests, %llu pairs)\n",
                static_cast<unsigned long long>(s.subagents), static_cast<unsigned long long>(s.parents_with_subagents),
                static_cast<unsigned long long>(s.max_siblings), static_cast<unsigned long long>(s.subagent_requests),
                s.sibling_overlap, static_cast<unsigned long long>(s.sibling_pairs));
  return out + buf;
}

std::string to_json(const StatsReport& s)
{
  auto len = [](const LengthSummary& l) {
    return nlohmann::json{{"mean", l.mean}, {"p50", l.p50}, {"p90", l.p90}, {"p99", l.p99}, {"max", l.max}};
  };
  nlohmann::json j{{"requests", s.requests},
                   {"duration_s", s.duration_s},
                   {"rate_per_s", s.rate_per_s},
                   {"input_tokens", len(s.input_tokens)},
                   {"output_tokens", len(s.output_tokens)},
                   {"block_tokens", s.block_tokens},
                   {"block_refs", s.block_refs},
                   {"distinct_blocks", s.distinct_blocks},
                   {"reuse_ratio", s.reuse_ratio},
                   {"zipf_s", s.zipf_s},
                   {"top1pct_share", s.top1pct_share},
                   {"top_block_share", s.top_block_share},
                   {"sessions", s.sessions},
                   {"agents", s.agents},
                   {"subagents", s.subagents},
                   {"subagent_requests", s.subagent_requests},
                   {"parents_with_subagents", s.parents_with_subagents},
                   {"max_siblings", s.max_siblings},
                   {"sibling_overlap", s.sibling_overlap},
                   {"sibling_pairs", s.sibling_pairs}};
  return j.dump(2);
}

} // namespace xattn::workloads
