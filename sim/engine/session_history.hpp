// What a live scheduler knows of the sessions so far, for a forecast of their later turns
// (policy::Need::session_reuse): how many turns each session has had, how far the sessions seen
// went, and how much of a turn's context its session's next turn read again. Online: every figure
// comes from the turns that have arrived, as each arrives. Internal to sim/engine.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cstdint>
#include <span>
#include <vector>

namespace xattn::sim::engine
{

class SessionHistory
{
public:
  /// A turn of `session` arrives, reading `chunks` (sorted, distinct).
  void arrive(std::uint64_t session, std::span<const std::uint64_t> chunks);
  /// The turns `session` has had so far (0: none yet).
  int turns(std::uint64_t session) const;
  /// The later turns a session with `k` turns so far is expected to have: the sum over j >= 1 of
  /// the chance it reaches turn k + j, each turn's chance of a next one the share of the sessions
  /// seen at it that went on (0 past the furthest turn seen): R(k) = c(k) (1 + R(k + 1)).
  double remaining_turns(int k) const;
  /// The share of a turn's chunks that its session's next turn read again, over every pair of
  /// consecutive turns seen (0 before the first pair).
  double carried() const { return pairs_ > 0 ? carried_sum_ / static_cast<double>(pairs_) : 0.0; }

private:
  struct Session {
    int turns = 0;
    std::vector<std::uint64_t> chunks; ///< its last turn's, sorted
  };
  absl::flat_hash_map<std::uint64_t, Session> sessions_;
  std::vector<std::uint64_t> reached_; ///< [k]: sessions with more than k turns
  double carried_sum_ = 0;
  std::uint64_t pairs_ = 0;
  mutable std::vector<double> remaining_; ///< R(k) at [k], for k turns so far; empty: to redo
};

} // namespace xattn::sim::engine
