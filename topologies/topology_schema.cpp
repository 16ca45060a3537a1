// The topology file's schema and its reader: values first, then the cross-field checks (counts that
// must divide, references that must resolve), each reported once at the key the user has to fix.
#include "topologies/spec.hpp"

#include <fmt/format.h>

#include <string>

namespace xattn::topo
{
namespace
{

using core::Check;
using core::Dimension;
using core::FieldKind;
using core::kNoDefault;
using core::kRequired;
using core::Schema;

const Schema kNvlink{
    {.key = "bandwidth",
     .dim = Dimension::kBytesPerSec,
     .def = kRequired,
     .meaning = "per-GPU NVLink bandwidth, each way (NVLink 4.0: 450GBps)",
     .check = Check::kPositive},
    {.key = "latency", .dim = Dimension::kSeconds, .def = kRequired, .meaning = "GPU <-> NVSwitch port latency"},
    {.key = "switch_latency", .dim = Dimension::kSeconds, .def = "0s", .meaning = "crossing the NVSwitch"},
};

const Schema kPcie{
    {.key = "switches",
     .kind = FieldKind::kInteger,
     .def = "1",
     .meaning = "PCIe switches per node (GPUs spread evenly)",
     .check = Check::kPositive},
    {.key = "bandwidth",
     .dim = Dimension::kBytesPerSec,
     .def = "64GBps",
     .meaning = "GPU or NIC slot <-> PCIe switch, each way (Gen5 x16: 64GBps)",
     .check = Check::kPositive},
    {.key = "latency", .dim = Dimension::kSeconds, .def = "0.5us", .meaning = "slot link latency"},
    {.key = "switch_latency", .dim = Dimension::kSeconds, .def = "0s", .meaning = "crossing a PCIe switch"},
    {.key = "host_bandwidth",
     .dim = Dimension::kBytesPerSec,
     .def = "64GBps",
     .meaning = "PCIe switch <-> host CPU uplink, each way",
     .check = Check::kPositive},
    {.key = "host_latency",
     .dim = Dimension::kSeconds,
     .def = "0.5us",
     .meaning = "PCIe switch <-> host CPU link latency"},
    {.key = "host_crossing", .dim = Dimension::kSeconds, .def = "0s", .meaning = "crossing the host root complex"},
};

const Schema kNics{
    {.key = "count",
     .kind = FieldKind::kInteger,
     .def = kRequired,
     .meaning = "NICs per node: gpus_per_node = one per GPU, fewer = shared",
     .check = Check::kPositive},
    {.key = "latency", .dim = Dimension::kSeconds, .def = "0s", .meaning = "crossing the NIC (PCIe to wire)"},
    {.key = "affinity",
     .kind = FieldKind::kList,
     .def = kNoDefault,
     .meaning = "NIC index of each local GPU (default: even spread)"},
};

const Schema kLink{
    {.key = "bandwidth",
     .dim = Dimension::kBytesPerSec,
     .def = kRequired,
     .meaning = "NIC <-> leaf link, each way (NDR-200: 200Gbps)",
     .check = Check::kPositive},
    {.key = "latency",
     .dim = Dimension::kSeconds,
     .def = kRequired,
     .meaning = "cable latency (NIC-leaf and leaf-spine)"},
};

const Schema kFabric{
    {.key = "nodes_per_leaf",
     .kind = FieldKind::kInteger,
     .def = kRequired,
     .meaning = "nodes under one leaf switch",
     .check = Check::kPositive},
    {.key = "leaves",
     .kind = FieldKind::kInteger,
     .def = kRequired,
     .meaning = "leaf switches",
     .check = Check::kPositive},
    {.key = "spines",
     .kind = FieldKind::kInteger,
     .def = kRequired,
     .meaning = "spine switches",
     .check = Check::kPositive},
    {.key = "link", .kind = FieldKind::kSection, .def = kRequired, .meaning = "the InfiniBand links", .sub = &kLink},
    {.key = "switch_latency", .dim = Dimension::kSeconds, .def = "0s", .meaning = "crossing a leaf or spine switch"},
    {.key = "oversubscription",
     .dim = Dimension::kCount,
     .def = "1",
     .meaning = "leaf downlink / uplink capacity (1 = non-blocking)",
     .check = Check::kPositive},
};

const Schema kTopology{
    {.key = "name", .kind = FieldKind::kString, .def = "unnamed", .meaning = "a name for reports"},
    {.key = "nodes", .kind = FieldKind::kInteger, .def = kRequired, .meaning = "servers", .check = Check::kPositive},
    {.key = "gpus_per_node",
     .kind = FieldKind::kInteger,
     .def = kRequired,
     .meaning = "GPUs in each server",
     .check = Check::kPositive},
    {.key = "nvlink",
     .kind = FieldKind::kSection,
     .def = kNoDefault,
     .meaning = "NVLink through NVSwitch (absent: PCIe only inside a node)",
     .sub = &kNvlink},
    {.key = "pcie",
     .kind = FieldKind::kSection,
     .def = kNoDefault,
     .meaning = "the PCIe tree of a node",
     .sub = &kPcie},
    {.key = "nics",
     .kind = FieldKind::kSection,
     .def = kNoDefault,
     .meaning = "network cards (needed with a fabric)",
     .sub = &kNics},
    {.key = "fabric",
     .kind = FieldKind::kSection,
     .def = kNoDefault,
     .meaning = "leaf/spine InfiniBand fabric (needed past one node)",
     .sub = &kFabric},
};

// Bounds that keep a hand-edited file from asking for a cluster that cannot be built in memory
// (a typo of a few zeros must be an error, not a machine that swaps for an hour).
constexpr std::int64_t kMaxCount = 1'000'000;
constexpr std::int64_t kMaxGpus  = 65'536;

int bounded(core::Section& s, std::string_view key)
{
  const std::int64_t v = s.integer(key);
  if (v > kMaxCount) {
    s.error(key, "value " + std::to_string(v) + " is too large (at most " + std::to_string(kMaxCount) + ")");
    return 0;
  }
  return static_cast<int>(v);
}

} // namespace

const core::Schema& topology_schema()
{
  return kTopology;
}

TopologySpec read_topology_spec(core::Section& s)
{
  core::Diagnostics& diags = s.diagnostics();
  const std::size_t errors_before = diags.size();
  TopologySpec t;
  t.file = s.file();
  t.name = s.string("name");
  t.nodes = bounded(s, "nodes");
  t.gpus_per_node = bounded(s, "gpus_per_node");

  if (s.has("nvlink")) {
    core::Section n = s.section("nvlink");
    t.nvlink = NvlinkSpec{n.rate("bandwidth"), n.seconds("latency"), n.seconds("switch_latency")};
  }
  core::Section p = s.section("pcie");
  t.pcie = PcieSpec{bounded(p, "switches"), p.rate("bandwidth"),      p.seconds("latency"),
                    p.seconds("switch_latency"),   p.rate("host_bandwidth"), p.seconds("host_latency"),
                    p.seconds("host_crossing")};
  std::optional<core::Section> nics;
  std::vector<double> affinity;
  if (s.has("nics")) {
    nics.emplace(s.section("nics"));
    t.nics = NicSpec{bounded(*nics, "count"), nics->seconds("latency"), {}};
    affinity = nics->numbers("affinity", core::Dimension::kCount);
  }
  std::optional<core::Section> fabric;
  if (s.has("fabric")) {
    fabric.emplace(s.section("fabric"));
    core::Section link = fabric->section("link");
    t.fabric = FabricSpec{bounded(*fabric, "nodes_per_leaf"),
                          bounded(*fabric, "leaves"),
                          bounded(*fabric, "spines"),
                          link.rate("bandwidth"),
                          link.seconds("latency"),
                          fabric->seconds("switch_latency"),
                          fabric->number("oversubscription")};
  }
  if (diags.size() == errors_before && static_cast<std::int64_t>(t.nodes) * t.gpus_per_node > kMaxGpus)
    s.error("nodes", std::to_string(t.nodes) + " nodes of " + std::to_string(t.gpus_per_node) + " GPUs are " +
                         std::to_string(static_cast<std::int64_t>(t.nodes) * t.gpus_per_node) +
                         " GPUs; xattn simulates at most " + std::to_string(kMaxGpus));
  if (diags.size() != errors_before) return t; // cross-field checks on broken values would only repeat the same problem

  const int g = t.gpus_per_node;
  if (g % t.pcie.switches != 0)
    p.error("switches", std::to_string(g) + " GPUs per node do not spread evenly over " +
                            std::to_string(t.pcie.switches) + " PCIe switches");
  if (t.nics) {
    const int k = t.nics->count;
    if (k > g)
      nics->error("count",
                  std::to_string(k) + " NICs per node for " + std::to_string(g) + " GPUs: at most one NIC per GPU");
    if (nics->has("affinity")) {
      if (affinity.size() != static_cast<std::size_t>(g))
        nics->error("affinity", "lists " + std::to_string(affinity.size()) + " NICs, expected one per GPU (" +
                                    std::to_string(g) + ")");
      for (std::size_t i = 0; i < affinity.size(); ++i) {
        double a = affinity[i];
        if (a != static_cast<int>(a) || a >= k) {
          nics->error("affinity", "GPU " + std::to_string(i) + " refers to NIC " + fmt::format("{}", a) +
                                      ", but a node has " + std::to_string(k) + " NICs (0.." + std::to_string(k - 1) +
                                      ")");
          break;
        }
        t.nics->affinity.push_back(static_cast<int>(a));
      }
    } else {
      for (int i = 0; i < g; ++i)
        t.nics->affinity.push_back(i * k / g);
    }
  }
  if (t.fabric) {
    const FabricSpec& f = *t.fabric;
    if (!t.nics) s.error("fabric", "a fabric needs a 'nics' section (how each node reaches its leaf)");
    if (t.nodes % f.nodes_per_leaf != 0)
      fabric->error("nodes_per_leaf", std::to_string(t.nodes) + " nodes do not divide into leaves of " +
                                          std::to_string(f.nodes_per_leaf));
    else if (t.nodes / f.nodes_per_leaf != f.leaves)
      fabric->error("leaves", std::to_string(t.nodes) + " nodes at " + std::to_string(f.nodes_per_leaf) +
                                  " per leaf need " + std::to_string(t.nodes / f.nodes_per_leaf) + " leaves, got " +
                                  std::to_string(f.leaves));
  } else if (t.nodes > 1) {
    s.error("nodes", std::to_string(t.nodes) + " nodes but no 'fabric' section: the nodes are not connected");
  }
  return t;
}

} // namespace xattn::topo
