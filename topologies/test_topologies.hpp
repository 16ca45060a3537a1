// Small hand-checkable topologies shared by the tests (written here, not read from the presets).
#pragma once

#include "sim/core/yaml.hpp"
#include "topologies/topology.hpp"

#include <string>

namespace xattn::topo::test
{

// 4 nodes x 4 GPUs, 2 PCIe switches (GPUs 0-1 | 2-3), 2 NICs (default affinity [0,0,1,1]: NIC 0 on
// switch 0, NIC 1 on switch 1), 2 leaves of 2 nodes, 2 spines, trunks 4:1 oversubscribed below a
// 25 GB/s access link: 25e9 * (2 nodes * 2 NICs) / (8 * 2 spines) = 6.25e9 B/s per leaf-spine trunk.
// Folded latencies: nvlink 1 + 0.2/2 = 1.1us; GPU slot 0.5 + 0.1/2 = 0.55us; NIC slot 0.5 + 0.05 +
// 0.4/2 = 0.75us; host 1 + 0.05 + 0.3/2 = 1.2us; access 0.6 + 0.2 + 0.1 = 0.9us; trunk 0.6 + 0.2 = 0.8us.
// `fabric_extra`: more lines of its fabric section ("  routing: ecmp\n"); without a routing line
// there, flows between leaves are pinned, (leaf_a + leaf_b) % 2.
inline std::string small_yaml(bool nvlink = true, const std::string& affinity = "",
                              const std::string& fabric_extra = "")
{
  std::string t = "name: small\nnodes: 4\ngpus_per_node: 4\n";
  if (nvlink) t += "nvlink: {bandwidth: 450GBps, latency: 1us, switch_latency: 0.2us}\n";
  t += "pcie: {switches: 2, bandwidth: 64GBps, latency: 0.5us, switch_latency: 0.1us, host_bandwidth: 32GBps,"
       " host_latency: 1us, host_crossing: 0.3us}\n"
       "nics: {count: 2, latency: 0.4us" +
       (affinity.empty() ? std::string() : ", affinity: " + affinity) +
       "}\n"
       "fabric:\n  nodes_per_leaf: 2\n  leaves: 2\n  spines: 2\n  link: {bandwidth: 200Gbps, latency: 0.6us}\n"
       "  switch_latency: 0.2us\n  oversubscription: 8\n" +
       (fabric_extra.find("routing:") == std::string::npos ? "  routing: pinned\n" : "") + fabric_extra;
  return t;
}

inline Topology small(bool nvlink = true, const std::string& affinity = "", const std::string& fabric_extra = "")
{
  return load_topology(core::parse_yaml(small_yaml(nvlink, affinity, fabric_extra), "small.yaml"));
}

// Rail-optimised: 4 nodes x 4 GPUs in 2 groups of 2 nodes; each group has 4 rail leaves, NIC k of
// every node on its group's leaf k (leaf = group * 4 + k: node0/1 on leaves 0-3, node2/3 on 4-7),
// 2 spines, 25 GB/s access links. One NIC per GPU (GPU k uses NIC k); NICs 0-1 on PCIe switch 0,
// 2-3 on switch 1. Trunks: 25e9 * (2 nodes * 1 NIC of the rail) / (4 * 2 spines) = 6.25e9 B/s.
// Folded latencies as small(): nvlink 1.1us, GPU slot 0.55us, NIC slot 0.75us, access 0.9us,
// trunk 0.8us. Flows between leaves are pinned, (leaf_a + leaf_b) % 2.
inline std::string rail_yaml(const std::string& cross_rail = "pxn")
{
  return "name: rail\nnodes: 4\ngpus_per_node: 4\n"
         "nvlink: {bandwidth: 450GBps, latency: 1us, switch_latency: 0.2us}\n"
         "pcie: {switches: 2, bandwidth: 64GBps, latency: 0.5us, switch_latency: 0.1us, host_bandwidth: 32GBps,"
         " host_latency: 1us, host_crossing: 0.3us}\n"
         "nics: {count: 4, latency: 0.4us}\n"
         "fabric:\n  nodes_per_leaf: 2\n  leaves: 8\n  spines: 2\n  rails: 4\n  cross_rail: " +
         cross_rail +
         "\n  link: {bandwidth: 200Gbps, latency: 0.6us}\n  switch_latency: 0.2us\n  oversubscription: 4\n"
         "  routing: pinned\n";
}

inline Topology rail(const std::string& cross_rail = "pxn")
{
  return load_topology(core::parse_yaml(rail_yaml(cross_rail), "rail.yaml"));
}

// NVLink domains of two nodes: 4 nodes x 2 GPUs, domain 0 = nodes 0-1, domain 1 = nodes 2-3, each
// GPU at 2 switch trays x 100 GB/s = 200 GB/s. One node per leaf (so a domain spans two leaves),
// 2 NICs per node, 1 spine, non-blocking. Folded nvlink latency 1 + 0.2 / 2 = 1.1us.
inline std::string domains_yaml()
{
  return "name: domains\nnodes: 4\ngpus_per_node: 2\n"
         "nvlink: {latency: 1us, switch_latency: 0.2us, nodes_per_domain: 2, switch_trays: 2,"
         " tray_bandwidth: 100GBps}\n"
         "pcie: {switches: 1, bandwidth: 64GBps, latency: 0.5us, switch_latency: 0.1us}\n"
         "nics: {count: 2, latency: 0.4us}\n"
         "fabric:\n  nodes_per_leaf: 1\n  leaves: 4\n  spines: 1\n  link: {bandwidth: 200Gbps, latency: 0.6us}\n"
         "  switch_latency: 0.2us\n";
}

inline Topology domains()
{
  return load_topology(core::parse_yaml(domains_yaml(), "domains.yaml"));
}

} // namespace xattn::topo::test
