// `xattn trace stats`: one pass over a request stream. Memory grows with distinct blocks and
// agents (the reuse ratio needs every block seen), never with the number of requests.
#pragma once

#include "workloads/request.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace xattn::workloads
{

/// Histogram of non-negative integers in constant memory: exact below 128, then 64 buckets per
/// power of two (quantiles within 1.6%). Mean and max are exact.
class LengthHistogram
{
public:
  void add(std::int64_t v);
  std::uint64_t count() const { return count_; }
  double mean() const { return count_ ? sum_ / static_cast<double>(count_) : 0.0; }
  std::int64_t max() const { return max_; }
  /// The q-quantile (0 <= q <= 1): the lower edge of the bucket that holds it.
  std::int64_t quantile(double q) const;

private:
  static constexpr int kBuckets = 128 + 57 * 64;
  std::array<std::uint64_t, kBuckets> buckets_{};
  std::uint64_t count_ = 0;
  double sum_ = 0.0;
  std::int64_t max_ = 0;
};

/// Summary of a length distribution, tokens.
struct LengthSummary {
  double mean = 0;
  std::int64_t p50 = 0, p90 = 0, p99 = 0, max = 0;
};

struct StatsReport {
  std::uint64_t requests = 0;
  double duration_s = 0; ///< last arrival - first arrival, s
  double rate_per_s = 0; ///< requests / duration, 1/s (0 when duration is 0)
  LengthSummary input_tokens, output_tokens;
  std::int64_t block_tokens = 0; ///< of the first request with blocks (0: none)
  std::uint64_t block_refs = 0;  ///< block ids over all requests
  std::uint64_t distinct_blocks = 0;
  double reuse_ratio = 0;     ///< share of block references to a block already seen
  double zipf_s = 0;          ///< popularity skew: -slope of log(count) vs log(rank), ranks with count >= 20
  double top1pct_share = 0;   ///< share of references going to the most popular 1% of blocks
  double top_block_share = 0; ///< share of requests that hold the most popular block
  std::uint64_t sessions = 0, agents = 0, subagents = 0;
  std::uint64_t subagent_requests = 0;
  std::uint64_t parents_with_subagents = 0;
  std::uint64_t max_siblings = 0;  ///< most sub-agents of one parent
  double sibling_overlap = 0;      ///< mean Jaccard similarity of sibling sub-agents' first requests' blocks
  std::uint64_t sibling_pairs = 0; ///< pairs averaged (nearest 8 earlier siblings of each)
};

class TraceStats
{
public:
  void add(const Request& r);
  StatsReport report() const;

private:
  struct Agent {
    std::uint64_t parent = kNoAgent;
  };
  struct Parent {
    std::uint64_t children = 0;
    std::vector<std::vector<std::uint64_t>> recent_first; ///< sorted first-request blocks, last 8 children
  };
  std::uint64_t requests_ = 0;
  double first_s_ = 0, last_s_ = 0;
  LengthHistogram in_, out_;
  std::int64_t block_tokens_ = 0;
  std::uint64_t refs_ = 0;
  struct BlockCount {
    std::uint64_t refs = 0, requests = 0, last = 0; ///< references, requests holding it, last request + 1
  };
  std::unordered_map<std::uint64_t, BlockCount> blocks_;
  std::unordered_map<std::uint64_t, char> sessions_;
  std::unordered_map<std::uint64_t, Agent> agents_;
  std::unordered_map<std::uint64_t, Parent> parents_;
  std::uint64_t subagent_requests_ = 0;
  double overlap_sum_ = 0;
  std::uint64_t overlap_pairs_ = 0;
  std::vector<std::uint64_t> scratch_;
};

/// Human-readable report, one quantity per line.
std::string to_text(const StatsReport& s);
/// The report as one JSON object (keys as in StatsReport), for --json.
std::string to_json(const StatsReport& s);

} // namespace xattn::workloads
