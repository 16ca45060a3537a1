#include "sim/engine/session_history.hpp"

namespace xattn::sim::engine
{

void SessionHistory::arrive(std::uint64_t session, std::span<const std::uint64_t> chunks)
{
  Session& s = sessions_[session];
  if (s.turns > 0 && !s.chunks.empty()) {
    std::size_t again = 0; // chunks of the last turn this one reads too (both sorted)
    for (std::size_t a = 0, b = 0; a < s.chunks.size() && b < chunks.size();)
      if (s.chunks[a] < chunks[b])
        ++a;
      else if (chunks[b] < s.chunks[a])
        ++b;
      else
        ++again, ++a, ++b;
    carried_sum_ += static_cast<double>(again) / static_cast<double>(s.chunks.size());
    ++pairs_;
  }
  if (reached_.size() <= static_cast<std::size_t>(s.turns)) reached_.resize(static_cast<std::size_t>(s.turns) + 1, 0);
  ++reached_[static_cast<std::size_t>(s.turns)];
  ++s.turns;
  s.chunks.assign(chunks.begin(), chunks.end());
  remaining_.clear();
}

int SessionHistory::turns(std::uint64_t session) const
{
  const auto it = sessions_.find(session);
  return it == sessions_.end() ? 0 : it->second.turns;
}

double SessionHistory::remaining_turns(int k) const
{
  if (k <= 0 || static_cast<std::size_t>(k) >= reached_.size()) return 0.0; // unseen, or past the furthest turn
  if (remaining_.empty()) {
    // R(k) = c(k) (1 + R(k + 1)), c(k) = reached_[k] / reached_[k - 1]: of the sessions that had
    // k turns, the share that had a next one. R is 0 at the furthest turn seen.
    remaining_.assign(reached_.size() + 1, 0.0);
    for (std::size_t j = reached_.size() - 1; j >= 1; --j)
      remaining_[j] = static_cast<double>(reached_[j]) / static_cast<double>(reached_[j - 1]) * (1 + remaining_[j + 1]);
  }
  return remaining_[static_cast<std::size_t>(k)];
}

} // namespace xattn::sim::engine
