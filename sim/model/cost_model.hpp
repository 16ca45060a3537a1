// The paper's closed-form, topology-aware cost model and the route/fetch/local predicate
// (DESIGN.md §1, §3.1): T = T_probe + T_transfer + T_compute + T_return + T_merge per primitive.
//
// All prices are for one attention call (one layer, one batch of M_q rows) unless scaled by
// `layers`. The same functions price the fixed delays inside the engine, so that an idle
// simulated cluster and this closed form agree by construction of the terms and only differ
// where the simulation adds contention.
#pragma once

#include "calibrate/profile.hpp"
#include "sim/core/fabric.hpp"
#include "sim/model/model.hpp"

#include <limits>
#include <string_view>

namespace xattn::sim {

using calibrate::Profile;
using core::BytesPerSec;
using core::Seconds;

enum class Primitive { kRoute, kFetch, kLocal };
std::string_view to_string(Primitive p);

/// The requester-holder path as the model sees it.
struct PathCost {
  core::FabricClass fabric = core::FabricClass::kIbSpine;
  BytesPerSec bottleneck;   ///< slowest link on the path, per direction
  Seconds latency;          ///< one-way wire latency sum (the profile's wire_latency on its nominal path)
  /// Disjoint routes the requester's transfers to several holders spread over (its node's NICs
  /// when it stripes them rail-matched: `xattn predict --rails`); 1: they share one. The engine
  /// needs none of this: it routes each transfer on its own relayed path.
  int lanes = 1;
};
/// The profile's nominal path for a fabric class (predict without --topology).
PathCost nominal_path(const Profile& p, core::FabricClass f);

/// What one attention call needs from remote holders.
struct CallShape {
  double rows          = 256;  ///< M_q: query rows (heads x query tokens)
  double tokens        = 2048; ///< tokens attended remotely, over all holders
  int holders          = 1;    ///< holders concerned (transfers run in parallel)
  int runs             = 1;    ///< contiguous runs of tokens (one splice each under fetch)
  bool sparse          = false; ///< DSA selection: fetch needs the holders' block ids first
  core::Transport transport = core::Transport::kGpu;
};

/// The terms of one primitive's cost; total() is their sum.
struct Breakdown {
  Seconds probe, transfer, compute, ret, merge, splice, prefill, index, host;
  Seconds total() const { return probe + transfer + compute + ret + merge + splice + prefill + index + host; }
  Breakdown scaled(double k) const;
};

struct CallCost {
  Breakdown route, fetch, local;
  Bytes route_wire; ///< both legs, all holders
  Bytes fetch_wire; ///< the moved cache (and the index exchange under selection)
  Seconds reuse;    ///< a later call attending the cached tokens locally
};

/// Per-flow rate of a transfer dispatched by `blocks` thread blocks on `path`.
BytesPerSec dispatch_rate(const Profile& p, const PathCost& path, int blocks);
/// Latency a leg adds to the probe on `path`: the path's beyond the probe's own measured path
/// (never negative: a shorter path is priced like the measured one).
Seconds leg_latency(const Profile& p, const PathCost& path);
/// Time for `holders` equal parallel flows of `bytes_each` through the requester's link (the
/// shared first hop): max-min gives each min(cap, bottleneck / holders). `latency` is the leg's.
Seconds parallel_transfer(Bytes bytes_each, int holders, BytesPerSec cap, const PathCost& path, Seconds latency);

/// Prices one attention call under each primitive.
CallCost price_call(const ModelSpec& m, const Profile& p, const CallShape& s, const PathCost& path);

/// The predicate: the cheapest primitive over this call and `reuse` later calls that attend the
/// same tokens (route pays every call; fetch and local pay once, then attend locally).
struct Decision {
  Primitive choice = Primitive::kRoute;
  Seconds route_total, fetch_total, local_total;
  /// Smallest reuse at which fetch costs no more than route; +infinity when it never does.
  double break_even_reuse = std::numeric_limits<double>::infinity();
};
Decision decide(const CallCost& c, double reuse);

} // namespace xattn::sim
