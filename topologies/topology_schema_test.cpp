// Bad topology files: each gives one clear line with file:line:col (the CLI maps it to exit 2).
#include "sim/core/yaml.hpp"
#include "topologies/topology.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace xattn;
using Catch::Matchers::Contains;

namespace
{

// A well-formed two-leaf topology; cases below break one thing each. Line numbers are 1-based.
const std::string kGood = "name: t\n"                // 1
                          "nodes: 4\n"               // 2
                          "gpus_per_node: 4\n"       // 3
                          "nvlink:\n"                // 4
                          "  bandwidth: 450GBps\n"   // 5
                          "  latency: 1us\n"         // 6
                          "nics:\n"                  // 7
                          "  count: 2\n"             // 8
                          "fabric:\n"                // 9
                          "  nodes_per_leaf: 2\n"    // 10
                          "  leaves: 2\n"            // 11
                          "  spines: 2\n"            // 12
                          "  link:\n"                // 13
                          "    bandwidth: 200Gbps\n" // 14
                          "    latency: 0.5us\n";    // 15

std::string replace(std::string text, const std::string& from, const std::string& to)
{
  auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

// The error text a document gives, or "" when it loads.
std::string error_of(const std::string& text)
{
  try {
    (void)topo::load_topology(core::parse_yaml(text, "t.yaml"));
  } catch (const core::InputError& e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST_CASE("topo: the well-formed base file loads")
{
  CHECK(error_of(kGood) == "");
}

TEST_CASE("topo: unknown key is one error at its position")
{
  CHECK(error_of(replace(kGood, "nvlink:", "nvlnk:")) ==
        "t.yaml:4:1: error: nvlnk: unknown key 'nvlnk' (did you mean 'nvlink'?)");
}

TEST_CASE("topo: missing field names the key")
{
  CHECK(error_of(replace(kGood, "  spines: 2\n", "")) ==
        "t.yaml:10:3: error: fabric.spines: missing required key (integer: spine switches)");
}

TEST_CASE("topo: wrong unit is one error at the value")
{
  CHECK(error_of(replace(kGood, "200Gbps", "200Gbs")) ==
        "t.yaml:14:16: error: fabric.link.bandwidth: unknown unit 'Gbs' in '200Gbs': expected a bandwidth such as "
        "25GBps, 400Gbps");
  CHECK(error_of(replace(kGood, "latency: 1us", "latency: 1")) ==
        "t.yaml:6:12: error: nvlink.latency: missing unit in '1': expected a time such as 16us, 3ms, 2s");
}

TEST_CASE("topo: leaf-spine rejects zero spines")
{
  CHECK(error_of(replace(kGood, "spines: 2", "spines: 0")) ==
        "t.yaml:12:11: error: fabric.spines: must be greater than zero, got '0'");
}

TEST_CASE("topo: a node count that does not divide into leaves")
{
  CHECK(error_of(replace(kGood, "nodes: 4", "nodes: 5")) ==
        "t.yaml:10:19: error: fabric.nodes_per_leaf: 5 nodes do not divide into leaves of 2");
  CHECK(error_of(replace(kGood, "nodes: 4", "nodes: 6")) ==
        "t.yaml:11:11: error: fabric.leaves: 6 nodes at 2 per leaf need 3 leaves, got 2");
}

TEST_CASE("topo: a dangling GPU-NIC reference")
{
  CHECK(error_of(replace(kGood, "  count: 2\n", "  count: 2\n  affinity: [0, 1, 3, 1]\n")) ==
        "t.yaml:9:13: error: nics.affinity: GPU 2 refers to NIC 3, but a node has 2 NICs (0..1)");
}

TEST_CASE("topo: inconsistent counts and a disconnected cluster are errors")
{
  CHECK(error_of(replace(kGood, "  count: 2\n", "  count: 8\n")) ==
        "t.yaml:8:10: error: nics.count: 8 NICs per node for 4 GPUs: at most one NIC per GPU");
  CHECK(error_of(replace(kGood, "gpus_per_node: 4\n", "gpus_per_node: 4\npcie: {switches: 3}\n")) ==
        "t.yaml:4:18: error: pcie.switches: 4 GPUs per node do not spread evenly over 3 PCIe switches");
  const std::string no_fabric = kGood.substr(0, kGood.find("fabric:"));
  CHECK(error_of(no_fabric) ==
        "t.yaml:2:8: error: nodes: 4 nodes but no 'fabric' section: the nodes are not connected");
  CHECK(error_of(replace(kGood, "nics:\n  count: 2\n", "")) ==
        "t.yaml:8:3: error: fabric: a fabric needs a 'nics' section (how each node reaches its leaf)");
}

TEST_CASE("topo: all value errors are reported together")
{
  std::string text = replace(replace(kGood, "spines: 2", "spines: 0"), "450GBps", "450");
  std::string all = error_of(text);
  CHECK_THAT(all, Contains("t.yaml:5:14: error: nvlink.bandwidth: missing unit"));
  CHECK_THAT(all, Contains("t.yaml:12:11: error: fabric.spines: must be greater than zero"));
  CHECK(std::count(all.begin(), all.end(), '\n') == 1);
}

TEST_CASE("topo: a topology embedded in a scenario reports the scenario's positions")
{
  const core::Schema scenario{
      {.key = "name", .kind = core::FieldKind::kString, .def = "s", .meaning = "scenario name"},
      {.key = "topology",
       .kind = core::FieldKind::kSection,
       .def = core::kRequired,
       .meaning = "the cluster",
       .sub = &topo::topology_schema()},
  };
  std::string text = "name: s\ntopology:\n  nodes: 1\n  gpus_per_node: 2\n  pcie: {bandwidth: 8GBps}\n";
  core::Document doc = core::parse_yaml(text, "scenario.yaml");
  core::Diagnostics diags;
  core::Section top(doc.file, doc.root, "", scenario, diags);
  core::Section sub = top.section("topology");
  topo::Topology t = topo::read_topology(sub);
  CHECK(t.gpu_count() == 2);
  CHECK(t.path(0, 1).bottleneck.value() == 8e9); // PCIe only, one switch

  core::Document bad = core::parse_yaml("name: s\ntopology:\n  nodes: 1\n  gpus_per_node: 0\n", "scenario.yaml");
  core::Diagnostics d2;
  core::Section top2(bad.file, bad.root, "", scenario, d2);
  core::Section sub2 = top2.section("topology");
  REQUIRE_THROWS_WITH(topo::read_topology(sub2),
                      "scenario.yaml:4:18: error: topology.gpus_per_node: must be greater than zero, got '0'");
}

namespace
{
// A rail-optimised variant of kGood: 2 rails, so 2 groups x 2 rails = 4 leaves.
std::string rails(const std::string& extra)
{
  return replace(replace(kGood, "  leaves: 2\n", "  leaves: 4\n"), "  spines: 2\n",
                 "  spines: 2\n  rails: 2\n" + extra);
}
} // namespace

TEST_CASE("topo: a rail-optimised fabric loads, and needs a leaf per rail per group")
{
  CHECK(error_of(rails("")) == "");
  CHECK(error_of(rails("  cross_rail: spine\n")) == "");
  CHECK(error_of(replace(kGood, "  spines: 2\n", "  spines: 2\n  rails: 2\n")) ==
        "t.yaml:11:11: error: fabric.leaves: 4 nodes at 2 per leaf and 2 rails need 4 leaves, got 2");
  CHECK(error_of(
            replace(replace(kGood, "  leaves: 2\n", "  leaves: 8\n"), "  spines: 2\n", "  spines: 2\n  rails: 4\n")) ==
        "t.yaml:13:10: error: fabric.rails: 4 rails need a NIC of every node on each, but a node has 2 NICs");
  CHECK(error_of(replace(kGood, "  spines: 2\n", "  spines: 2\n  rails: 0\n")) ==
        "t.yaml:13:10: error: fabric.rails: must be greater than zero, got '0'");
}

TEST_CASE("topo: rail_of_nic must give every NIC an existing rail and every rail a NIC")
{
  CHECK(error_of(rails("  rail_of_nic: [1, 0]\n")) == "");
  CHECK(error_of(rails("  rail_of_nic: [0, 2]\n")) ==
        "t.yaml:14:16: error: fabric.rail_of_nic: NIC 1 is on rail 2, but the fabric has 2 rails (0..1)");
  CHECK(error_of(rails("  rail_of_nic: [0]\n")) ==
        "t.yaml:14:16: error: fabric.rail_of_nic: lists 1 rail, expected one per NIC (2)");
  CHECK(error_of(rails("  rail_of_nic: [1, 1]\n")) ==
        "t.yaml:14:16: error: fabric.rail_of_nic: rail 0 has no NIC: every rail leaf needs one of each node");
}

TEST_CASE("topo: cross_rail is checked against the rails and the NVLink it relays over")
{
  CHECK(error_of(replace(kGood, "  spines: 2\n", "  spines: 2\n  cross_rail: spine\n")) ==
        "t.yaml:13:15: error: fabric.cross_rail: applies to a rail-optimised fabric only (rails > 1); this one has "
        "one leaf per group");
  CHECK(error_of(rails("  cross_rail: pxm\n")) ==
        "t.yaml:14:15: error: fabric.cross_rail: unknown value 'pxm' (expected one of: pxn, spine)");
  CHECK(error_of(replace(rails(""), "nvlink:\n  bandwidth: 450GBps\n  latency: 1us\n", "")) ==
        "t.yaml:7:3: error: fabric.cross_rail: pxn relays over NVLink, but the nodes have no NVLink (set cross_rail: "
        "spine)");
  CHECK(error_of(replace(rails(""), "  count: 2\n", "  count: 2\n  affinity: [0, 0, 0, 0]\n")) ==
        "t.yaml:11:3: error: fabric.cross_rail: pxn relays through the GPU on the destination's rail, but no GPU "
        "uses a NIC of rail 1 (see nics.affinity; or set cross_rail: spine)");
}

TEST_CASE("topo: NVLink domains and switch trays are checked")
{
  const std::string trays = "  latency: 1us\n  switch_trays: 9\n  tray_bandwidth: 50GBps\n";
  CHECK(error_of(replace(kGood, "  latency: 1us\n", trays)) == ""); // 9 x 50 = 450, as given
  CHECK(error_of(replace(replace(kGood, "  bandwidth: 450GBps\n", ""), "  latency: 1us\n",
                         trays + "  nodes_per_domain: 2\n")) == "");
  CHECK(error_of(replace(kGood, "  latency: 1us\n", "  latency: 1us\n  nodes_per_domain: 3\n")) ==
        "t.yaml:7:21: error: nvlink.nodes_per_domain: 4 nodes do not divide into NVLink domains of 3");
  CHECK(
      error_of(replace(kGood, "  latency: 1us\n", "  latency: 1us\n  switch_trays: 9\n")) ==
      "t.yaml:7:17: error: nvlink.switch_trays: needs tray_bandwidth (the NVLink bandwidth from one GPU to one tray)");
  CHECK(error_of(replace(kGood, "  latency: 1us\n", "  latency: 1us\n  tray_bandwidth: 50GBps\n")) ==
        "t.yaml:7:19: error: nvlink.tray_bandwidth: needs switch_trays (how many trays each GPU connects to)");
  CHECK(
      error_of(replace(kGood, "  latency: 1us\n", "  latency: 1us\n  switch_trays: 9\n  tray_bandwidth: 100GBps\n")) ==
      "t.yaml:5:14: error: nvlink.bandwidth: 450GBps disagrees with 9 switch trays x 100GBps = 900GBps");
  CHECK(error_of(replace(kGood, "  bandwidth: 450GBps\n", "")) ==
        "t.yaml:5:3: error: nvlink.bandwidth: missing: give the per-GPU NVLink bandwidth, or switch_trays and "
        "tray_bandwidth");
  CHECK(error_of(replace(kGood, "  latency: 1us\n", "  latency: 1us\n  switch_trays: 0\n  tray_bandwidth: 1GBps\n")) ==
        "t.yaml:7:17: error: nvlink.switch_trays: must be greater than zero, got '0'");
}

TEST_CASE("topo: the schema describes every key")
{
  std::string text = core::describe(topo::topology_schema(), "topology");
  for (const char* key : {"nodes", "gpus_per_node", "nvlink", "nodes_per_leaf", "spines", "oversubscription",
                          "affinity", "host_bandwidth", "host_memory", "nodes_per_domain", "switch_trays",
                          "tray_bandwidth", "rails", "rail_of_nic", "cross_rail"})
    CHECK_THAT(text, Contains(key));
}
