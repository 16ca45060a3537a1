// Which requester instance a request decodes on: a session stays on one, sub-agents spread over
// them round-robin in order of first arrival. The live run and the offline look-ahead
// (future.hpp) both assign with this, so they agree by construction.
#pragma once

#include "workloads/request.hpp"

#include <cstdint>
#include <unordered_map>

namespace xattn::sim::engine
{

class Homes
{
public:
  explicit Homes(int instances) : instances_(instances) {}
  /// The instance of `r`, assigning the next one round-robin to a session or sub-agent first seen.
  int of(const workloads::Request& r)
  {
    auto& homes = r.is_subagent() ? subagent_ : session_;
    auto [it, fresh] = homes.try_emplace(r.is_subagent() ? r.agent : r.session, 0);
    if (fresh) it->second = next_++ % instances_;
    return it->second;
  }

private:
  int instances_;
  int next_ = 0;
  std::unordered_map<std::uint64_t, int> session_;  ///< session -> instance
  std::unordered_map<std::uint64_t, int> subagent_; ///< sub-agent -> instance
};

} // namespace xattn::sim::engine
