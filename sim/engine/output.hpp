// What `xattn run` writes (docs/file-formats.md, "Outputs"): summary.json, requests.csv, links.csv, holders.csv and
// report.md. Columns are documented in sim/engine/README.md and at the top of report.md.
#pragma once

#include "sim/engine/result.hpp"
#include "sim/engine/scenario.hpp"

#include <filesystem>
#include <string>

namespace xattn::sim::engine
{

/// The run's result from its policies' (in the scenario's order).
RunResult make_result(const Scenario& sc, std::vector<std::pair<std::string, PolicyResult>> policies);

/// Writes every output from the children's fragments in `parts` into `out_dir`, atomically.
void write_outputs(const Scenario& sc, const RunResult& result, const std::filesystem::path& parts,
                   const std::string& out_dir);

/// The terminal table comparing the policies, in the scenario's order.
std::string comparison_table(const RunResult& result);

inline constexpr const char* kRequestsHeader =
    "policy,request,session,agent,requester,arrival_s,first_step_s,finish_s,steps,mean_step_s,max_step_s,"
    "routed,fetched,prefilled,cached,ttft_s,tpot_s,e2e_s,good";
inline constexpr const char* kLinksHeader = "policy,link,direction,kind,bytes,utilisation";
inline constexpr const char* kHoldersHeader = "policy,gpu,kernels,busy_fraction,work_s,sharing_delay_s,max_concurrent,"
                                              "copies,copy_wait_s,max_copy_queue,own_work_s,own_delay_s";

} // namespace xattn::sim::engine
