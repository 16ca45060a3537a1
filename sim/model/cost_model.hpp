// The paper's closed-form, topology-aware cost model and the route/fetch/local predicate:
// T = T_probe + T_transfer + T_compute + T_return + T_merge per primitive.
//
// All prices are for one attention call (one layer, one batch of M_q rows) unless scaled by
// `layers`. The call is added up from the pieces pricing.hpp prices (an exchange with each holder,
// a moved piece from each holder), the same pieces the engine runs, so that an idle simulated
// cluster and this closed form agree by construction and differ only where the simulation adds
// contention.
#pragma once

#include "calibrate/profile.hpp"
#include "sim/core/fabric.hpp"
#include "sim/model/model.hpp"
#include "sim/model/path.hpp"
#include "sim/model/primitive.hpp"

#include <array>
#include <limits>
#include <string_view>
#include <utility>

namespace xattn::sim
{

using calibrate::Profile;

/// What one attention call needs from remote holders.
struct CallShape {
  double rows = 256;    ///< M_q: query rows (heads x query tokens)
  double tokens = 2048; ///< tokens attended remotely, over all holders
  int holders = 1;      ///< holders concerned (transfers run in parallel)
  int runs = 1;         ///< contiguous runs of tokens (one splice each under fetch)
  bool sparse = false;  ///< DSA selection: fetch needs the holders' block ids first
  core::Transport transport = core::Transport::kGpu;
  bool aligned = false; ///< moved runs keep their positions (prefix-chained reuse): nothing to re-rotate
  int gpus = 1;         ///< GPUs of the requester instance (a re-prefill spreads over them, a fetch is shared out)
  /// Tokens a re-prefill computes: a selected block needs the tokens before it in its run, so a
  /// sparse re-prefill spans from its chunk's start. 0: `tokens`.
  double prefill_tokens = 0;
  /// Sparse: context tokens the holders' indexers scan to select, over all holders. 0: `tokens`.
  double scanned = 0;
  /// Sparse: the index keys are on the requester too, which scans them all itself (no exchange).
  bool index_on_requester = false;
  /// Sparse: tokens a fetch moves and splices, over all holders: every block any layer selected,
  /// while `tokens` is what one layer attends. 0: `tokens`.
  double moved = 0;
  int ep = 1; ///< the requester's expert-parallel group: a re-prefill's routed experts spread over it
};

/// The terms of one primitive's cost; total() is their sum.
struct Breakdown {
  Seconds probe, transfer, compute, ret, merge, splice, prefill, index, host;
  Seconds total() const { return probe + transfer + compute + ret + merge + splice + prefill + index + host; }
  Breakdown scaled(double k) const;
};

/// The terms by name, in the order tables list them ("return" is `ret`).
inline constexpr std::array<std::pair<const char*, Seconds Breakdown::*>, 9> kBreakdownTerms{
    {{"probe", &Breakdown::probe},
     {"index", &Breakdown::index},
     {"transfer", &Breakdown::transfer},
     {"compute", &Breakdown::compute},
     {"return", &Breakdown::ret},
     {"merge", &Breakdown::merge},
     {"splice", &Breakdown::splice},
     {"prefill", &Breakdown::prefill},
     {"host", &Breakdown::host}}};

struct CallCost {
  Breakdown route, fetch, local;
  Bytes route_wire; ///< both legs, all holders
  Bytes fetch_wire; ///< the moved cache (and the index exchange under selection)
  Seconds reuse;    ///< a later call attending the cached tokens locally
};

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
