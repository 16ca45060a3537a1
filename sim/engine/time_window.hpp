// The window of simulated time a run's timeline keeps (`xattn run --window FROM:TO`). Its own
// header, so that the driver's options name it without including the timeline.
#pragma once

#include "sim/core/units.hpp"

#include <limits>
#include <string_view>

namespace xattn::sim::engine
{

/// The simulated time a timeline keeps: events overlapping [from, to].
struct TimeWindow {
  core::Seconds from{0};
  core::Seconds to{std::numeric_limits<double>::infinity()}; ///< +infinity: to the end of the run
};
/// Parses `--window FROM:TO` ("0s:2s", "500ms:1.5s"; units as everywhere, sim/core/units.hpp).
/// Throws core::InputError on a missing or unknown unit, a missing ':', or TO <= FROM.
TimeWindow parse_window(std::string_view text);

} // namespace xattn::sim::engine
