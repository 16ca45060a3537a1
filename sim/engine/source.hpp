// The request stream a scenario asks for: the trace (or generator), overlaid `copies` times with
// sessions and agents kept apart and the corpus shared, time-compressed by `time_scale`, cut at
// `max_requests`, output lengths capped at `max_output_tokens` (a recorded trace loads a large cluster lightly:
// docs/architecture.md).
//
// Lazily, in flat memory: copy k starts when the stream reaches its first arrival (the workload's
// first, plus k x copy_offset), and all copies read one underlying stream through a buffer that
// holds the requests between the furthest-behind copy and the furthest-ahead one (one group of
// simultaneous arrivals when copy_offset is 0, so 65,536 copies cost no more than one). When that
// window would pass kMaxBufferedBytes, the copies not yet started read their own stream instead,
// each opened when it starts and closed when it ends. Every request read ticks the memory guard
// and checks for a stop (stop.hpp).
#pragma once

#include "sim/engine/scenario.hpp"
#include "workloads/request.hpp"

#include <memory>

namespace xattn::sim::engine
{

/// The bytes of buffered requests past which copies not yet started get streams of their own.
inline constexpr double kMaxBufferedBytes = 256.0 * 1048576;

enum class Copies {
  kAll, ///< the stream the simulation replays
  kOne, ///< copy 0 alone: copies repeat its block ids, so a corpus scan of one copy finds the same blocks
};

/// Opens the scenario's stream afresh (each simulation process reads its own). `max_buffered_bytes`
/// is for tests of the copies' own streams.
std::unique_ptr<workloads::RequestSource> open_workload(const Scenario& sc, Copies copies = Copies::kAll,
                                                        double max_buffered_bytes = kMaxBufferedBytes);

} // namespace xattn::sim::engine
