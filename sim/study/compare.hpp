// A sweep's points compared with each other (DIR/comparison.txt, printed by `xattn sweep` once its
// table is whole): for each seed and policy, every point's mean TTFT, mean TPOT and goodput, with
// the 5-95% range of an ensemble sweep (`ensemble: N`), then the run table's verdict with the points
// in place of the policies: which point is best on mean TPOT and on mean TTFT, each other one's
// ratio (member by member under an ensemble: the points of one seed draw the same profiles), what
// holds it back, and a point that did not keep up with its load named, not ranked.
#pragma once

#include "sim/study/manifest.hpp"

#include <array>
#include <string>

namespace xattn::sim::study
{

/// The figures compared, by their path in a policy's summary (each one used for engine::kSpread, figures.hpp):
/// the table's ensemble columns are theirs, `<path, dots as underscores>_p5` and `_p95`.
inline constexpr std::array<const char*, 5> kComparedFigures{"ttft_s.mean", "tpot_s.mean", "step_latency_s.mean",
                                                             "goodput.share", "goodput.requests_per_s"};

/// The comparison's text; empty where no seed has two complete points.
std::string compare_points(const Manifest& m, const std::string& dir);
/// Writes it to DIR/comparison.txt (atomically) when it is not empty; returns it.
std::string write_comparison(const Manifest& m, const std::string& dir);

} // namespace xattn::sim::study
