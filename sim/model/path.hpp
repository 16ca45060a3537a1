// The path a message takes as the cost model sees it, and how one message moves on it alone: the
// data pricing.hpp's formulas take and give. Its own header, so that the engine's network, which
// holds these for every route, does not recompile with every formula.
#pragma once

#include "sim/core/fabric.hpp"
#include "sim/core/units.hpp"

namespace xattn::sim
{

using core::BytesPerSec;
using core::Seconds;

/// The requester-holder path as the model sees it.
struct PathCost {
  core::FabricClass fabric = core::FabricClass::kIbSpine;
  BytesPerSec bottleneck; ///< slowest link on the path, per direction
  Seconds latency;        ///< one-way wire latency sum (the profile's wire_latency on its nominal path)
  /// Disjoint routes the requester's transfers to several holders spread over (its node's NICs
  /// when it stripes them rail-matched: `xattn predict --rails`); 1: they share one. The engine
  /// needs none of this: it routes each transfer on its own relayed path.
  int lanes = 1;
};
/// How one message of a given size moves alone on a path.
///
/// A message sent by `blocks` thread blocks moves at min(blocks x block_rate, e x bottleneck),
/// where e = curve bandwidth at its size / the fabric's nominal bandwidth (the share of a link's
/// capacity that a bulk transfer turns into progress); blocks that sustain the fabric's bulk rate
/// (`bandwidth`) move it at e x bottleneck whatever its size (the curve was measured that way). When the blocks bind,
/// the message is `blocks` flows each capped at one block's rate, and it uses link capacity one for one (`factor` 1);
/// when the link binds, it is `streams` equal flows (one, unless the transfer carries that many messages at once)
/// that progress at `factor` = e per unit of capacity they are given, alone or shared (SimGrid's bandwidth factor;
/// the engine's solver works in capacity), together never faster than the path alone. A fitted segment of small
/// messages may give e > 1: its line fits latency-dominated times.
struct Flow {
  BytesPerSec rate;  ///< alone on the path
  double factor = 1; ///< progress per unit of link capacity
  bool link_bound = false;
  int blocks = 1;
  /// The equal messages a link-bound transfer carries at once, each its own flow on the links it
  /// crosses (a share of them as a link divides among its flows): an expert-parallel exchange's
  /// token-expert pairs between two GPUs. A block-bound transfer's flows are its blocks, whatever
  /// it carries.
  int streams = 1;
};

} // namespace xattn::sim
