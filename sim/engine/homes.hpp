// Which requester instance a request decodes on under the routers that need no run state
// (router.policy session and round-robin): a session stays on one, sub-agents spread over them
// round-robin in order of first arrival; or every request the next in turn. The live run and the
// offline look-ahead (future.hpp) both assign with this, so they agree by construction.
#pragma once

#include "workloads/request.hpp"

#include <cstdint>
#include <unordered_map>

namespace xattn::sim::engine
{

class Homes
{
public:
  /// `per_request`: each request the next instance in turn, whatever its session (router
  /// round-robin).
  explicit Homes(int instances, bool per_request = false) : instances_(instances), per_request_(per_request) {}
  /// The instance of `r`, assigning the next one round-robin to a session or sub-agent first seen
  /// (or to every request).
  int of(const workloads::Request& r)
  {
    if (per_request_) return next_++ % instances_;
    auto& homes = r.is_subagent() ? subagent_ : session_;
    auto [it, fresh] = homes.try_emplace(r.is_subagent() ? r.agent : r.session, 0);
    if (fresh) it->second = next_++ % instances_;
    return it->second;
  }

private:
  int instances_;
  bool per_request_;
  int next_ = 0;
  std::unordered_map<std::uint64_t, int> session_;  ///< session -> instance
  std::unordered_map<std::uint64_t, int> subagent_; ///< sub-agent -> instance
};

} // namespace xattn::sim::engine
