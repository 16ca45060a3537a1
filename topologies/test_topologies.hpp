// Small hand-checkable topologies shared by the tests (written here, not read from the presets).
#pragma once

#include "topologies/topology.hpp"

#include <string>

namespace xattn::topo::test
{

// 4 nodes x 4 GPUs, 2 PCIe switches (GPUs 0-1 | 2-3), 2 NICs (default affinity [0,0,1,1]: NIC 0 on
// switch 0, NIC 1 on switch 1), 2 leaves of 2 nodes, 2 spines, trunks 4:1 oversubscribed below a
// 25 GB/s access link: 25e9 * (2 nodes * 2 NICs) / (8 * 2 spines) = 6.25e9 B/s per leaf-spine trunk.
// Folded latencies: nvlink 1 + 0.2/2 = 1.1us; GPU slot 0.5 + 0.1/2 = 0.55us; NIC slot 0.5 + 0.05 +
// 0.4/2 = 0.75us; host 1 + 0.05 + 0.3/2 = 1.2us; access 0.6 + 0.2 + 0.1 = 0.9us; trunk 0.6 + 0.2 = 0.8us.
inline std::string small_yaml(bool nvlink = true, const std::string& affinity = "")
{
  std::string t = "name: small\nnodes: 4\ngpus_per_node: 4\n";
  if (nvlink) t += "nvlink: {bandwidth: 450GBps, latency: 1us, switch_latency: 0.2us}\n";
  t += "pcie: {switches: 2, bandwidth: 64GBps, latency: 0.5us, switch_latency: 0.1us, host_bandwidth: 32GBps,"
       " host_latency: 1us, host_crossing: 0.3us}\n"
       "nics: {count: 2, latency: 0.4us" +
       (affinity.empty() ? std::string() : ", affinity: " + affinity) +
       "}\n"
       "fabric:\n  nodes_per_leaf: 2\n  leaves: 2\n  spines: 2\n  link: {bandwidth: 200Gbps, latency: 0.6us}\n"
       "  switch_latency: 0.2us\n  oversubscription: 8\n";
  return t;
}

inline Topology small(bool nvlink = true, const std::string& affinity = "")
{
  return load_topology(core::parse_yaml(small_yaml(nvlink, affinity), "small.yaml"));
}

} // namespace xattn::topo::test
