// The topology file's schema and its reader: values first, then the cross-field checks (counts that
// must divide, references that must resolve), each reported once at the key the user has to fix.
#include "sim/core/plausible.hpp"
#include "sim/core/yaml.hpp"
#include "topologies/spec.hpp"

#include <fmt/format.h>

#include <cmath>
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

// Every number's range (core::Range): what real clusters span, with room to spare; outside it a
// value is a typo, and a far one would ask for a cluster or a time that cannot be simulated.
constexpr core::Range kGpuCount{1, 65536, "xattn simulates at most 65,536 GPUs (and as many nodes, leaves or spines)"};
constexpr core::Range kLatency{0, 1, "cables, switches and NICs take ns to us; a second is a typo"};
constexpr core::Range kBandwidth{1e6, 1e15,
                                 "fabrics run at GB/s (NDR-400: 50GBps, NVLink 5: 900GBps); slower rates "
                                 "overflow simulated time"};
constexpr core::Range kPerNode{1, 1024, "servers hold 1 to 10 of them"};

const Schema kNvlink{
    {.key = "bandwidth",
     .dim = Dimension::kBytesPerSec,
     .def = kNoDefault,
     .meaning = "per-GPU NVLink bandwidth, each way (NVLink 4.0: 450GBps); required unless switch_trays gives it",
     .check = Check::kPositive,
     .range = kBandwidth},
    {.key = "latency",
     .dim = Dimension::kSeconds,
     .def = kRequired,
     .meaning = "GPU <-> NVSwitch port latency",
     .range = kLatency},
    {.key = "switch_latency",
     .dim = Dimension::kSeconds,
     .def = "0s",
     .meaning = "crossing the NVSwitch",
     .range = kLatency},
    {.key = "nodes_per_domain",
     .kind = FieldKind::kInteger,
     .def = "1",
     .meaning = "consecutive nodes sharing one NVLink domain (GB200 NVL72: 18 trays of 4 GPUs)",
     .check = Check::kPositive,
     .range = kGpuCount},
    {.key = "switch_trays",
     .kind = FieldKind::kInteger,
     .def = kNoDefault,
     .meaning = "NVLink switch trays of a domain (NVL72: 9); needs tray_bandwidth",
     .check = Check::kPositive,
     .range = {1, 1024, "an NVL72 domain has 9"}},
    {.key = "tray_bandwidth",
     .dim = Dimension::kBytesPerSec,
     .def = kNoDefault,
     .meaning = "NVLink bandwidth from one GPU to one switch tray, each way (NVL72: 2 NVLink 5 links = 100GBps)",
     .check = Check::kPositive,
     .range = kBandwidth},
};

const Schema kPcie{
    {.key = "switches",
     .kind = FieldKind::kInteger,
     .def = "1",
     .meaning = "PCIe switches per node (GPUs spread evenly)",
     .check = Check::kPositive,
     .range = kPerNode},
    {.key = "bandwidth",
     .dim = Dimension::kBytesPerSec,
     .def = "64GBps",
     .meaning = "GPU or NIC slot <-> PCIe switch, each way (Gen5 x16: 64GBps)",
     .check = Check::kPositive,
     .range = kBandwidth},
    {.key = "latency", .dim = Dimension::kSeconds, .def = "0.5us", .meaning = "slot link latency", .range = kLatency},
    {.key = "switch_latency",
     .dim = Dimension::kSeconds,
     .def = "0s",
     .meaning = "crossing a PCIe switch",
     .range = kLatency},
    {.key = "host_bandwidth",
     .dim = Dimension::kBytesPerSec,
     .def = "64GBps",
     .meaning = "PCIe switch <-> host CPU uplink, each way",
     .check = Check::kPositive,
     .range = kBandwidth},
    {.key = "host_latency",
     .dim = Dimension::kSeconds,
     .def = "0.5us",
     .meaning = "PCIe switch <-> host CPU link latency",
     .range = kLatency},
    {.key = "host_crossing",
     .dim = Dimension::kSeconds,
     .def = "0s",
     .meaning = "crossing the host root complex",
     .range = kLatency},
};

const Schema kNics{
    {.key = "count",
     .kind = FieldKind::kInteger,
     .def = kRequired,
     .meaning = "NICs per node: gpus_per_node = one per GPU, fewer = shared",
     .check = Check::kPositive,
     .range = kPerNode},
    {.key = "latency",
     .dim = Dimension::kSeconds,
     .def = "0s",
     .meaning = "crossing the NIC (PCIe to wire)",
     .range = kLatency},
    {.key = "affinity",
     .kind = FieldKind::kList,
     .def = kNoDefault,
     .meaning = "NIC index of each local GPU (default: even spread)",
     .range = {0, 1023, "a NIC of the node (below nics.count)"}},
};

const Schema kLink{
    {.key = "bandwidth",
     .dim = Dimension::kBytesPerSec,
     .def = kRequired,
     .meaning = "NIC <-> leaf link, each way (NDR-200: 200Gbps)",
     .check = Check::kPositive,
     .range = kBandwidth},
    {.key = "latency",
     .dim = Dimension::kSeconds,
     .def = kRequired,
     .meaning = "cable latency (NIC-leaf and leaf-spine)",
     .range = kLatency},
};

const std::string kRoutingNames = core::choices_of(kRoutings);

const Schema kFabric{
    {.key = "nodes_per_leaf",
     .kind = FieldKind::kInteger,
     .def = kRequired,
     .meaning = "nodes under one leaf switch",
     .check = Check::kPositive,
     .range = kGpuCount},
    {.key = "leaves",
     .kind = FieldKind::kInteger,
     .def = kRequired,
     .meaning = "leaf switches",
     .check = Check::kPositive,
     .range = kGpuCount},
    {.key = "spines",
     .kind = FieldKind::kInteger,
     .def = kRequired,
     .meaning = "spine switches",
     .check = Check::kPositive,
     .range = kGpuCount},
    {.key = "link", .kind = FieldKind::kSection, .def = kRequired, .meaning = "the InfiniBand links", .sub = &kLink},
    {.key = "switch_latency",
     .dim = Dimension::kSeconds,
     .def = "0s",
     .meaning = "crossing a leaf or spine switch",
     .range = kLatency},
    {.key = "oversubscription",
     .dim = Dimension::kCount,
     .def = "1",
     .meaning = "leaf downlink / uplink capacity (1 = non-blocking)",
     .check = Check::kPositive,
     .range = {0.01, 100, "fabrics are built at 1 to 4"}},
    {.key = "rails",
     .kind = FieldKind::kInteger,
     .def = "1",
     .meaning = "leaves per group of nodes_per_leaf nodes: > 1 is rail-optimised (NIC k on rail leaf k)",
     .check = Check::kPositive,
     .range = {1, 1024, "at most one per NIC of a node"}},
    {.key = "rail_of_nic",
     .kind = FieldKind::kList,
     .def = kNoDefault,
     .meaning = "rail leaf of each local NIC (default: even spread, NIC k on rail k x rails / NICs)",
     .range = {0, 1023, "a rail of the fabric (below fabric.rails)"}},
    {.key = "cross_rail",
     .kind = FieldKind::kChoice,
     .def = "pxn",
     .meaning =
         "rails > 1: pxn = NVLink to the node's GPU on the peer's rail, then that rail; spine = own rail, a spine",
     .choices = "pxn|spine"},
    {.key = "routing",
     .kind = FieldKind::kChoice,
     .def = "ecmp",
     .meaning = "how flows between two leaves cross the spines (each preset says which its switches do). adaptive: "
                "every flow spread evenly over all spines "
                "(switches with adaptive routing spread a flow's packets; a leaf's uplinks then carry it as one "
                "link); ecmp: each GPU pair's flows over one spine picked by a seeded hash of the pair (as switches "
                "hash a connection's headers: pairs that hash alike share a spine); pinned: every flow of a leaf "
                "pair over spine (leaf_a + leaf_b) % spines, a static table",
     .choices = kRoutingNames},
    {.key = "ecmp_seed",
     .kind = FieldKind::kInteger,
     .def = "0",
     .meaning = "routing ecmp: the switches' hash seed (another seed, another set of collisions)",
     .range = {0, 2147483647, "a seed fits 31 bits"}},
};

const Schema kTopology{
    {.key = "name", .kind = FieldKind::kString, .def = "unnamed", .meaning = "a name for reports"},
    {.key = "description",
     .kind = FieldKind::kString,
     .def = kNoDefault,
     .meaning = "what the topology models, in a line (shown by xattn topo)"},
    {.key = "nodes",
     .kind = FieldKind::kInteger,
     .def = kRequired,
     .meaning = "servers",
     .check = Check::kPositive,
     .range = kGpuCount},
    {.key = "gpus_per_node",
     .kind = FieldKind::kInteger,
     .def = kRequired,
     .meaning = "GPUs in each server",
     .check = Check::kPositive,
     .range = kGpuCount},
    {.key = "host_memory",
     .dim = Dimension::kBytes,
     .def = kNoDefault,
     .meaning = "each node's CPU memory, the bound of a host tier for KV (prefill.host_capacity); absent: not "
                "described",
     .range = core::kHostMemoryRange},
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

// The GPU total a file may ask for: each count is bounded by its range (the schema above), their
// product here (a typo of a few zeros must be an error, not a machine that swaps for an hour).
constexpr std::int64_t kMaxGpus = 65'536;

Routing routing_named(const std::string& name)
{
  for (const auto& [n, r] : kRoutings)
    if (name == n) return r;
  return Routing::kPinned; // the schema admits only the names above
}

int bounded(core::Section& s, std::string_view key)
{
  return s.count(key); // within the field's range, or 0 (reported)
}

// The nvlink section's values. The per-GPU bandwidth is `bandwidth` or switch_trays x tray_bandwidth,
// whichever is given; when both are, they must agree (check_nvlink).
NvlinkSpec read_nvlink(core::Section& n)
{
  NvlinkSpec v;
  if (n.has("bandwidth")) v.bandwidth = n.rate("bandwidth");
  v.latency = n.seconds("latency");
  v.switch_latency = n.seconds("switch_latency");
  v.nodes_per_domain = bounded(n, "nodes_per_domain");
  if (n.has("switch_trays")) v.switch_trays = bounded(n, "switch_trays");
  if (n.has("tray_bandwidth")) v.tray_bandwidth = n.rate("tray_bandwidth");
  if (!n.has("bandwidth") && !n.has("switch_trays"))
    n.error("bandwidth", "missing: give the per-GPU NVLink bandwidth, or switch_trays and tray_bandwidth");
  n.plausible("bandwidth", core::kNvlinkRate, v.bandwidth.value());
  n.plausible("tray_bandwidth", core::kNvlinkRate, v.tray_bandwidth.value());
  n.plausible("latency", core::kWireLatency, v.latency.value());
  n.plausible("switch_latency", core::kWireLatency, v.switch_latency.value());
  return v;
}

void check_nvlink(core::Section& n, NvlinkSpec& v, int nodes)
{
  const bool trays = n.has("switch_trays"), tray_bw = n.has("tray_bandwidth");
  if (trays && !tray_bw)
    n.error("switch_trays", "needs tray_bandwidth (the NVLink bandwidth from one GPU to one tray)");
  else if (tray_bw && !trays)
    n.error("tray_bandwidth", "needs switch_trays (how many trays each GPU connects to)");
  else if (trays) {
    const core::BytesPerSec sum = v.tray_bandwidth * static_cast<double>(v.switch_trays);
    if (!n.has("bandwidth"))
      v.bandwidth = sum;
    else if (std::abs(v.bandwidth.value() - sum.value()) > 1e-9 * sum.value())
      n.error("bandwidth", core::format_rate(v.bandwidth) + " disagrees with " + std::to_string(v.switch_trays) +
                               " switch trays x " + core::format_rate(v.tray_bandwidth) + " = " +
                               core::format_rate(sum));
  }
  if (nodes % v.nodes_per_domain != 0)
    n.error("nodes_per_domain", std::to_string(nodes) + " nodes do not divide into NVLink domains of " +
                                    std::to_string(v.nodes_per_domain));
}

// Rails of a rail-optimised fabric: which NIC goes to which rail leaf, and whether cross-rail
// traffic can take PXN. Runs once the NICs are known (t.nics set, affinity resolved).
void check_rails(core::Section& fabric, TopologySpec& t, const std::vector<double>& rail_of_nic)
{
  FabricSpec& f = *t.fabric;
  const int k = t.nics->count;
  if (f.rails > k) {
    fabric.error("rails", std::to_string(f.rails) + " rails need a NIC of every node on each, but a node has " +
                              std::to_string(k) + " NICs");
    return;
  }
  if (fabric.has("rail_of_nic")) {
    if (rail_of_nic.size() != static_cast<std::size_t>(k)) {
      fabric.error("rail_of_nic", "lists " + std::to_string(rail_of_nic.size()) +
                                      (rail_of_nic.size() == 1 ? " rail" : " rails") + ", expected one per NIC (" +
                                      std::to_string(k) + ")");
      return;
    }
    for (std::size_t i = 0; i < rail_of_nic.size(); ++i) {
      const double r = rail_of_nic[i];
      if (r != static_cast<int>(r) || r >= f.rails) {
        fabric.error("rail_of_nic", "NIC " + std::to_string(i) + " is on rail " + fmt::format("{}", r) +
                                        ", but the fabric has " + std::to_string(f.rails) + " rails (0.." +
                                        std::to_string(f.rails - 1) + ")");
        return;
      }
      f.rail_of_nic.push_back(static_cast<int>(r));
    }
  } else {
    for (int i = 0; i < k; ++i)
      f.rail_of_nic.push_back(i * f.rails / k);
  }
  std::vector<int> nics_on(f.rails, 0), gpus_on(f.rails, 0);
  for (int r : f.rail_of_nic)
    ++nics_on[r];
  for (int nic : t.nics->affinity)
    ++gpus_on[f.rail_of_nic[nic]];
  for (int r = 0; r < f.rails; ++r)
    if (nics_on[r] == 0) {
      fabric.error("rail_of_nic", "rail " + std::to_string(r) + " has no NIC: every rail leaf needs one of each node");
      return;
    }
  if (fabric.has("cross_rail") && f.rails == 1)
    fabric.error("cross_rail", "applies to a rail-optimised fabric only (rails > 1); this one has one leaf per group");
  if (f.rails == 1 || f.cross_rail != CrossRail::kPxn) return;
  if (!t.nvlink) {
    fabric.error("cross_rail", "pxn relays over NVLink, but the nodes have no NVLink (set cross_rail: spine)");
    return;
  }
  for (int r = 0; r < f.rails; ++r)
    if (gpus_on[r] == 0) {
      fabric.error("cross_rail",
                   "pxn relays through the GPU on the destination's rail, but no GPU uses a NIC of rail " +
                       std::to_string(r) + " (see nics.affinity; or set cross_rail: spine)");
      return;
    }
}

} // namespace

std::string_view to_string(Routing r)
{
  for (const auto& [n, routing] : kRoutings)
    if (routing == r) return n;
  return "?";
}

const core::Schema& topology_schema()
{
  return kTopology;
}

namespace
{
// The pcie section, each rate and latency checked against what hardware of its class has.
PcieSpec read_pcie(core::Section& p)
{
  const PcieSpec pcie{bounded(p, "switches"),      p.rate("bandwidth"),      p.seconds("latency"),
                      p.seconds("switch_latency"), p.rate("host_bandwidth"), p.seconds("host_latency"),
                      p.seconds("host_crossing")};
  p.plausible("bandwidth", core::kPcieRate, pcie.bandwidth.value());
  p.plausible("host_bandwidth", core::kPcieRate, pcie.host_bandwidth.value());
  for (const char* k : {"latency", "switch_latency", "host_latency", "host_crossing"})
    p.plausible(k, core::kWireLatency, p.seconds(k).value());
  return pcie;
}

// The fabric section but its rails (check_rails), each rate and latency checked as read_pcie's.
FabricSpec read_fabric(core::Section& fabric)
{
  core::Section link = fabric.section("link");
  FabricSpec f{bounded(fabric, "nodes_per_leaf"),
               bounded(fabric, "leaves"),
               bounded(fabric, "spines"),
               link.rate("bandwidth"),
               link.seconds("latency"),
               fabric.seconds("switch_latency"),
               fabric.number("oversubscription"),
               bounded(fabric, "rails"),
               {},
               fabric.choice("cross_rail") == "spine" ? CrossRail::kSpine : CrossRail::kPxn,
               routing_named(fabric.choice("routing")),
               static_cast<std::uint64_t>(fabric.integer("ecmp_seed"))};
  link.plausible("bandwidth", core::kNicRate, f.link_bandwidth.value());
  link.plausible("latency", core::kWireLatency, f.link_latency.value());
  fabric.plausible("switch_latency", core::kWireLatency, f.switch_latency.value());
  if (fabric.has("ecmp_seed") && f.routing != Routing::kEcmp)
    fabric.error("ecmp_seed",
                 "seeds the hash of routing ecmp; this fabric routes " + std::string(to_string(f.routing)));
  return f;
}

// The NICs' count against the GPUs of a node, and each GPU's NIC: `affinity` as listed, or spread
// evenly.
void check_nics(core::Section& nics, TopologySpec& t, const std::vector<double>& affinity)
{
  const int g = t.gpus_per_node;
  const int k = t.nics->count;
  if (k > g)
    nics.error("count",
               std::to_string(k) + " NICs per node for " + std::to_string(g) + " GPUs: at most one NIC per GPU");
  if (nics.has("affinity")) {
    if (affinity.size() != static_cast<std::size_t>(g))
      nics.error("affinity", "lists " + std::to_string(affinity.size()) + " NICs, expected one per GPU (" +
                                 std::to_string(g) + ")");
    for (std::size_t i = 0; i < affinity.size(); ++i) {
      double a = affinity[i];
      if (a != static_cast<int>(a) || a >= k) {
        nics.error("affinity", "GPU " + std::to_string(i) + " refers to NIC " + fmt::format("{}", a) +
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
} // namespace

TopologySpec read_topology_spec(core::Section& s)
{
  core::Diagnostics& diags = s.diagnostics();
  const std::size_t errors_before = diags.size();
  TopologySpec t;
  t.file = s.file();
  t.name = s.string("name");
  if (s.has("description")) t.description = s.string("description");
  t.nodes = bounded(s, "nodes");
  t.gpus_per_node = bounded(s, "gpus_per_node");
  if (s.has("host_memory")) {
    t.host_memory = s.bytes("host_memory");
    s.plausible("host_memory", core::kHostMemory, t.host_memory.value());
  }

  std::optional<core::Section> nvlink;
  if (s.has("nvlink")) {
    nvlink.emplace(s.section("nvlink"));
    t.nvlink = read_nvlink(*nvlink);
  }
  core::Section p = s.section("pcie");
  t.pcie = read_pcie(p);
  std::optional<core::Section> nics;
  std::vector<double> affinity;
  if (s.has("nics")) {
    nics.emplace(s.section("nics"));
    t.nics = NicSpec{bounded(*nics, "count"), nics->seconds("latency"), {}};
    affinity = nics->numbers("affinity", core::Dimension::kCount);
    nics->plausible("latency", core::kWireLatency, t.nics->latency.value());
  }
  std::optional<core::Section> fabric;
  std::vector<double> rail_of_nic;
  if (s.has("fabric")) {
    fabric.emplace(s.section("fabric"));
    t.fabric = read_fabric(*fabric);
    rail_of_nic = fabric->numbers("rail_of_nic", core::Dimension::kCount);
  }
  if (diags.size() == errors_before && static_cast<std::int64_t>(t.nodes) * t.gpus_per_node > kMaxGpus)
    s.error("nodes", std::to_string(t.nodes) + " nodes of " + std::to_string(t.gpus_per_node) + " GPUs are " +
                         std::to_string(static_cast<std::int64_t>(t.nodes) * t.gpus_per_node) +
                         " GPUs; xattn simulates at most " + std::to_string(kMaxGpus));
  if (diags.size() != errors_before) return t; // cross-field checks on broken values would only repeat the same problem

  const int g = t.gpus_per_node;
  if (t.nvlink) check_nvlink(*nvlink, *t.nvlink, t.nodes);
  if (g % t.pcie.switches != 0)
    p.error("switches", std::to_string(g) + " GPUs per node do not spread evenly over " +
                            std::to_string(t.pcie.switches) + " PCIe switches");
  const std::size_t before_nics = diags.size();
  if (t.nics) check_nics(*nics, t, affinity);
  const bool nics_ok = diags.size() == before_nics;
  if (t.fabric) {
    const FabricSpec& f = *t.fabric;
    if (!t.nics) s.error("fabric", "a fabric needs a 'nics' section (how each node reaches its leaf)");
    if (t.nodes % f.nodes_per_leaf != 0)
      fabric->error("nodes_per_leaf", std::to_string(t.nodes) + " nodes do not divide into leaves of " +
                                          std::to_string(f.nodes_per_leaf));
    else if (t.nodes / f.nodes_per_leaf * f.rails != f.leaves)
      fabric->error("leaves", std::to_string(t.nodes) + " nodes at " + std::to_string(f.nodes_per_leaf) + " per leaf" +
                                  (f.rails > 1 ? " and " + std::to_string(f.rails) + " rails" : "") + " need " +
                                  std::to_string(t.nodes / f.nodes_per_leaf * f.rails) + " leaves, got " +
                                  std::to_string(f.leaves));
    if (t.nics && nics_ok) check_rails(*fabric, t, rail_of_nic);
  } else if (t.nodes > 1) {
    s.error("nodes", std::to_string(t.nodes) + " nodes but no 'fabric' section: the nodes are not connected");
  }
  return t;
}

} // namespace xattn::topo
