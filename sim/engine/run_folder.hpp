// Where a run writes: a folder of its own unless told where, never one holding another run's
// outputs unless told to replace them (docs/file-formats.md, "Outputs").
#pragma once

#include "sim/engine/driver.hpp"

#include <array>
#include <filesystem>
#include <string>

namespace xattn::sim::engine
{

/// Every name a run writes into its folder (report/ is `xattn report`'s).
inline constexpr std::array<const char*, 8> kRunFiles{
    "summary.json", "summary.interrupted.json", "requests.csv", "links.csv", "holders.csv", "report.md", "report",
    "report.html"};

struct RunFolder {
  std::string dir;              ///< where this run writes
  std::string id;               ///< the run id every output carries
  std::filesystem::path latest; ///< non-empty: out/<name>/latest, linked to `dir` once the run completes
};

/// The run's folder: RunOptions::out_dir, else the scenario's output.dir, else out/<name>/<id>.
/// Throws core::InputError (naming --out or output.dir) for an explicit folder that holds an
/// earlier run's outputs, unless opt.replace. Creates nothing.
RunFolder choose_folder(const Scenario& sc, const RunOptions& opt);

/// Points f.latest at f.dir (a new link renamed over the old one). No-op when f.latest is empty.
void link_latest(const RunFolder& f);

} // namespace xattn::sim::engine
