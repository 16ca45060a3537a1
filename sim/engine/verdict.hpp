// The lines under a run's comparison table: which policy wins the headline figure, by how much
// over each other one (with the ensemble's range of that ratio when there is one), what holds
// each loser back; and a legend of the table's columns.
#pragma once

#include "sim/engine/result.hpp"

#include <string>

namespace xattn::sim::engine
{

/// The headline figure of a run: TPOT's mean when the policies ran the whole model's step, the
/// step latency's mean otherwise (its path in a policy's summary, figures.hpp).
std::string headline_figure(const RunResult& result);

/// "verdict: ..." (one paragraph, wrapped, ending in a newline). A policy that did not keep up
/// with the load (PolicyResult::load, overloaded) is never ranked by latency: the verdict says how
/// far it fell short instead, and when none kept up, says so. Policies within 0.5% of the best
/// tie with it. With an ensemble, each margin gets the 5-95% range of the member-by-member ratio
/// (members share their drawn profile across policies, so the ratio is paired). `figure`: the
/// latency figure ranked, lower first ("tpot_s.mean", "ttft_s.mean", "step_latency_s.mean"; empty:
/// the headline figure).
std::string verdict(const RunResult& result, const std::string& figure = "");

/// The width of the run tables' policy column: the longest policy name, at least 10 characters.
int policy_column(const RunResult& result);

/// Breaks `text` into lines of at most `width` characters at spaces, each ending in a newline,
/// the lines after the first indented by two.
std::string wrap(const std::string& text, std::size_t width);

/// What each column of the comparison table means.
std::string table_legend(const RunResult& result);

} // namespace xattn::sim::engine
