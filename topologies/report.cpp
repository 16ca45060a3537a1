#include "topologies/report.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <charconv>
#include <map>
#include <optional>

namespace xattn::topo
{
namespace
{

std::map<std::string, std::size_t> links_by_kind(const Topology& t)
{
  std::map<std::string, std::size_t> out; // sorted by name: deterministic output
  for (const Link& l : t.links())
    ++out[std::string(to_string(l.kind))];
  return out;
}

std::string_view dir_name(Direction d)
{
  return d == Direction::kUp ? "up" : "down";
}

/// The GPU `a` relays through when it stripes (-1: none, or not striping).
long long relay_of(const Topology& t, GpuId a, GpuId b, bool striped)
{
  if (!striped) return -1;
  const std::optional<GpuId> via = t.rail_relay(a, b);
  return via.has_value() ? static_cast<long long>(via.value()) : -1;
}
} // namespace

std::string summary_text(const Topology& t)
{
  const TopologySpec& s = t.spec();
  std::string out =
      fmt::format("topology {}: {} nodes x {} GPUs = {} GPUs\n", s.name, s.nodes, s.gpus_per_node, t.gpu_count());
  if (!s.description.empty()) out += "  " + s.description + "\n";
  if (s.nvlink) {
    out += fmt::format("  nvlink: {} per GPU each way", core::format_rate(s.nvlink->bandwidth));
    if (s.nvlink->switch_trays > 0)
      out +=
          fmt::format(" ({} switch trays x {})", s.nvlink->switch_trays, core::format_rate(s.nvlink->tray_bandwidth));
    if (s.nvlink->nodes_per_domain > 1)
      out += fmt::format(", {} domains of {} nodes ({} GPUs)", t.domain_count(), s.nvlink->nodes_per_domain,
                         s.nvlink->nodes_per_domain * s.gpus_per_node);
    out += "\n";
  } else
    out += "  nvlink: none (GPUs of a node talk over PCIe)\n";
  out += fmt::format("  pcie: {} switches per node, {} slots, {} to the host\n", s.pcie.switches,
                     core::format_rate(s.pcie.bandwidth), core::format_rate(s.pcie.host_bandwidth));
  if (s.host_memory.value() > 0) out += fmt::format("  host memory: {} per node\n", core::format_bytes(s.host_memory));
  if (s.nics) out += fmt::format("  nics: {} per node\n", s.nics->count);
  if (s.fabric && s.fabric->rails == 1)
    out += fmt::format("  fabric: {} leaves of {} nodes, {} spines ({} routing), {} links, oversubscription {}\n",
                       s.fabric->leaves, s.fabric->nodes_per_leaf, s.fabric->spines, to_string(s.fabric->routing),
                       core::format_rate(s.fabric->link_bandwidth), s.fabric->oversubscription);
  else if (s.fabric)
    out += fmt::format("  fabric: rail-optimised, {} groups of {} nodes x {} rails = {} leaves, cross-rail {}, {} "
                       "spines ({} routing), {} links, oversubscription {}\n",
                       s.fabric->leaves / s.fabric->rails, s.fabric->nodes_per_leaf, s.fabric->rails, s.fabric->leaves,
                       s.fabric->cross_rail == CrossRail::kPxn ? "pxn" : "spine", s.fabric->spines,
                       to_string(s.fabric->routing), core::format_rate(s.fabric->link_bandwidth),
                       s.fabric->oversubscription);
  out += fmt::format("  links: {}", t.link_count());
  std::string sep = " (";
  for (const auto& [kind, n] : links_by_kind(t)) {
    out += fmt::format("{}{} {}", sep, kind, n);
    sep = ", ";
  }
  return out + ")\n";
}

nlohmann::json summary_json(const Topology& t)
{
  nlohmann::json by_kind = nlohmann::json::object();
  for (const auto& [kind, n] : links_by_kind(t))
    by_kind[kind] = n;
  const TopologySpec& s = t.spec();
  return {{"name", t.name()},
          {"description", s.description},
          {"gpus", t.gpu_count()},
          {"nodes", t.node_count()},
          {"gpus_per_node", s.gpus_per_node},
          {"leaves", t.leaf_count()},
          {"spines", t.spine_count()},
          {"routing", s.fabric ? nlohmann::json(to_string(s.fabric->routing)) : nlohmann::json(nullptr)},
          {"links", t.link_count()},
          {"vertices", t.vertex_count()},
          {"nvlink", t.has_nvlink()},
          {"nvlink_domain_gpus", t.has_nvlink() ? t.nodes_per_domain() * s.gpus_per_node : 0},
          {"switch_trays", s.nvlink ? s.nvlink->switch_trays : 0},
          {"rails", t.rails()},
          {"cross_rail", t.rails() > 1 ? nlohmann::json(s.fabric->cross_rail == CrossRail::kPxn ? "pxn" : "spine")
                                       : nlohmann::json(nullptr)},
          {"links_by_kind", by_kind}};
}

std::string path_text(const Topology& t, GpuId a, GpuId b, bool striped)
{
  const long long via = relay_of(t, a, b, striped);
  Path p = via >= 0 ? t.path_via(a, static_cast<GpuId>(via), b) : t.path(a, b);
  std::string out = fmt::format("{} -> {}: {}, {} hops, latency {}, bottleneck {}\n", t.gpu_name(a), t.gpu_name(b),
                                core::to_string(p.fabric), p.hops.size(), core::format_seconds(p.latency),
                                p.hops.empty() ? std::string("none") : core::format_rate(p.bottleneck));
  if (striped)
    out += via >= 0 ? fmt::format("  relayed through {} (NIC {}, the rail of {})\n",
                                  t.gpu_name(static_cast<GpuId>(via)), t.nic_of(b), t.gpu_name(b))
                    : std::string("  not relayed: same node, same rail, or no NVLink\n");
  for (std::size_t i = 0; i < p.hops.size(); ++i) {
    const Hop& h = p.hops[i];
    out += fmt::format("  {:>2}  {:<24} {:<4}  {:>10}  {:>8}\n", i + 1, t.link(h.link).name, dir_name(h.dir),
                       core::format_rate(h.bandwidth), core::format_seconds(h.latency));
  }
  return out;
}

nlohmann::json path_json(const Topology& t, GpuId a, GpuId b, bool striped)
{
  const long long via = relay_of(t, a, b, striped);
  Path p = via >= 0 ? t.path_via(a, static_cast<GpuId>(via), b) : t.path(a, b);
  nlohmann::json hops = nlohmann::json::array();
  for (const Hop& h : p.hops)
    hops.push_back({{"link", t.link(h.link).name},
                    {"direction", dir_name(h.dir)},
                    {"bandwidth_Bps", h.bandwidth.value()},
                    {"latency_s", h.latency.value()}});
  nlohmann::json j = {
      {"from", t.gpu_name(a)},
      {"to", t.gpu_name(b)},
      {"fabric", core::to_string(p.fabric)},
      {"latency_s", p.latency.value()},
      {"bottleneck_Bps", p.hops.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.bottleneck.value())},
      {"hops", hops}};
  if (striped) j["relay"] = via >= 0 ? nlohmann::json(t.gpu_name(static_cast<GpuId>(via))) : nlohmann::json(nullptr);
  return j;
}

GpuId parse_gpu(const Topology& t, std::string_view text, std::string_view flag)
{
  if (auto g = t.find_gpu(text)) return *g;
  std::uint64_t index = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), index);
  if (ec == std::errc() && end == text.data() + text.size() && index < t.gpu_count()) return static_cast<GpuId>(index);
  core::fail("command line", 0, 0, std::string(flag),
             fmt::format("unknown GPU '{}' (expected nodeN.gpuG with N < {} and G < {}, or an index below {})", text,
                         t.node_count(), t.spec().gpus_per_node, t.gpu_count()));
}

} // namespace xattn::topo
