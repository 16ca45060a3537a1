// `xattn report DIR`: one self-contained HTML page (DIR/report.html) for a run folder or a sweep
// folder, with the CSV behind every plot in DIR/report/. The C++ side writes what only it can
// compute (the closed-form route/fetch/local crossover map over M_q and c_t, from sim::predict);
// sim/study/report.py, run with Debian's /usr/bin/python3 and python3-matplotlib, reads the run's
// own files and those CSVs, draws the plots and embeds them as base64 PNGs.
#pragma once

#include "sim/engine/scenario.hpp"

#include <optional>
#include <string>

namespace xattn::sim::study
{

/// The closed-form decision over a grid of M_q (query rows) and c_t (tokens per chunk), for each
/// fabric class a requester-holder pair can use, at the scenario's model, profile and transport,
/// with `reuse` later calls attending the same tokens (unset: the predicate's prior,
/// engine.predicate_prior_steps): CSV `fabric,mq,ct,reuse,decision,route_s,fetch_s,local_s,break_even_reuse`
/// (one attention call, one holder; route_s, fetch_s and local_s are one call's seconds;
/// break_even_reuse, in later uses, does not depend on `reuse` and is inf where fetch never breaks even).
/// REQUIRES: reuse, when set, is finite and >= 0.
std::string crossover_csv(const engine::Scenario& sc, std::optional<double> reuse = std::nullopt);

/// Writes DIR/report/ (CSVs, meta.json) and DIR/report.html; returns the HTML path. `scenario`
/// names the scenario for the crossover map (empty: the sweep's base, or the path report.md names);
/// `reuse` is the later uses the decision map assumes (unset: the scenario's engine.predicate_prior_steps).
/// Throws core::InputError when DIR is neither a run nor a sweep folder, when `reuse` is negative or
/// not finite, or when python3-matplotlib is missing (the message names the Debian package).
std::string write_report(const std::string& dir, const std::string& scenario = "",
                         std::optional<double> reuse = std::nullopt);

} // namespace xattn::sim::study
