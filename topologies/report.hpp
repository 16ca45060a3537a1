// What `xattn topo` prints: a summary of a topology and the description of one path, as text and
// as JSON (a contract scripts read, docs/file-formats.md: `topo --json` has at least "gpus",
// "nodes", "leaves", "spines", "links").
#pragma once

#include "topologies/topology.hpp"

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <string_view>

namespace xattn::topo
{

/// A few lines: counts, fabric, links by kind.
std::string summary_text(const Topology& t);
/// {"name","description","gpus","nodes","gpus_per_node","leaves","spines","links","vertices","nvlink",
/// "nvlink_domain_gpus" (0 without NVLink),"switch_trays" (0: not described),"rails" (1: classic),
/// "cross_rail" ("pxn", "spine", or null with one rail),"links_by_kind"}.
nlohmann::json summary_json(const Topology& t);

/// One line per hop (link, direction, bandwidth, latency) under a header with the fabric class,
/// latency sum and bottleneck. `striped`: as `a` sends it when it stripes over its node's NICs
/// (engine.requester_nics: node), through the rail-matched relay where there is one.
std::string path_text(const Topology& t, GpuId a, GpuId b, bool striped = false);
/// {"from","to","fabric","latency_s","bottleneck_Bps","hops":[{"link","direction","bandwidth_Bps","latency_s"}]},
/// and with `striped`, "relay": the relay GPU's name or null.
nlohmann::json path_json(const Topology& t, GpuId a, GpuId b, bool striped = false);

/// A GPU given by name ("node12.gpu3") or index ("99"). Throws core::InputError naming `flag`.
GpuId parse_gpu(const Topology& t, std::string_view text, std::string_view flag);

} // namespace xattn::topo
