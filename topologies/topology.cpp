// Building the graph from a spec: fixed per-node blocks of vertices and links, then the fabric.
#include "topologies/topology.hpp"
#include "sim/core/yaml.hpp"
#include "topologies/graph.hpp"

#include <boost/graph/connected_components.hpp>

#include <charconv>
#include <string>

namespace xattn::topo
{

std::string_view to_string(LinkKind k)
{
  switch (k) {
  case LinkKind::kNvlink:
    return "nvlink";
  case LinkKind::kPcieSlot:
    return "pcie";
  case LinkKind::kPcieHost:
    return "pcie-host";
  case LinkKind::kIbAccess:
    return "ib-access";
  case LinkKind::kIbTrunk:
    return "ib-trunk";
  }
  return "?";
}

Topology::Topology(TopologySpec spec) : spec_(std::move(spec))
{
  build();
  validate();
}

// Vertex block of a node: GPUs, [NVSwitch], PCIe switches, CPU, NICs. A node's NVSwitch is in its
// block when its NVLink domain is the node alone; multi-node domains get one switch vertex each,
// after the node blocks ("domain3.nvswitch").
void Topology::place_nics()
{
  const int g_n = spec_.gpus_per_node;
  const int p_n = spec_.pcie.switches;
  const int k_n = spec_.nics ? spec_.nics->count : 0;
  // A NIC sits on the PCIe switch of the first GPU that uses it (else spread evenly).
  nic_switch_.assign(k_n, -1);
  nic_owner_.assign(k_n, -1);
  for (int g = 0; g < g_n && spec_.nics; ++g)
    if (int& owner = nic_owner_[spec_.nics->affinity[g]]; owner < 0) {
      owner = g;
      nic_switch_[spec_.nics->affinity[g]] = pcie_switch_of_gpu(g);
    }
  for (int k = 0; k < k_n; ++k)
    if (nic_switch_[k] < 0) nic_switch_[k] = k * p_n / k_n;
  rail_owner_.assign(rails(), -1);
  for (int g = 0; g < g_n && spec_.fabric; ++g)
    if (int& owner = rail_owner_[rail_of_nic(spec_.nics->affinity[g])]; owner < 0) owner = g;
}

// Link block of a node:   [NVLink per GPU], PCIe slot per GPU, PCIe slot per NIC, host uplink per PCIe switch.
// Then: domain switches, leaves, spines (vertices); NIC access links node-major, leaf-spine trunks
// leaf-major (links).
void Topology::build()
{
  const int g_n = spec_.gpus_per_node;
  const int nv = has_nvlink() ? 1 : 0;
  const int nv_vertex = has_nvlink() && nodes_per_domain() == 1 ? 1 : 0;
  const int p_n = spec_.pcie.switches;
  const int k_n = spec_.nics ? spec_.nics->count : 0;
  gpus_per_node_ = g_n;
  vertices_per_node_ = g_n + nv_vertex + p_n + 1 + k_n;
  links_per_node_ = nv * g_n + g_n + k_n + p_n;

  place_nics();

  const auto& pc = spec_.pcie;
  core::Seconds zero{};
  core::Seconds nic_x = spec_.nics ? spec_.nics->latency : zero;
  const std::size_t nodes = spec_.nodes;
  const std::size_t domains = nv_vertex || !nv ? 0 : domain_count();
  const std::size_t leaves = leaf_count(), spines = trunks_per_leaf();
  vertices_.reserve(nodes * vertices_per_node_ + domains + leaves + spines);
  links_.reserve(nodes * (links_per_node_ + k_n) + leaves * spines);
  first_domain_switch_ = static_cast<VertexId>(nodes * vertices_per_node_);

  for (std::size_t n = 0; n < nodes; ++n) {
    const std::string node = "node" + std::to_string(n);
    for (int g = 0; g < g_n; ++g)
      vertices_.push_back({node + ".gpu" + std::to_string(g), VertexKind::kGpu});
    if (nv_vertex) vertices_.push_back({node + ".nvswitch", VertexKind::kNvswitch});
    for (int p = 0; p < p_n; ++p)
      vertices_.push_back({node + ".pcie" + std::to_string(p), VertexKind::kPcieSwitch});
    vertices_.push_back({node + ".cpu", VertexKind::kCpu});
    for (int k = 0; k < k_n; ++k)
      vertices_.push_back({node + ".nic" + std::to_string(k), VertexKind::kNic});

    const int ni = static_cast<int>(n);
    auto sw_vertex = [&](int p) { return node_vertex(ni, g_n + nv_vertex + p); };
    const VertexId cpu = node_vertex(ni, g_n + nv_vertex + p_n);
    for (int g = 0; g < g_n && nv; ++g)
      links_.push_back({node + ".gpu" + std::to_string(g) + ".nvlink", LinkKind::kNvlink, node_vertex(ni, g),
                        nvswitch_vertex(ni), spec_.nvlink->bandwidth,
                        spec_.nvlink->latency + spec_.nvlink->switch_latency / 2});
    for (int g = 0; g < g_n; ++g)
      links_.push_back({node + ".gpu" + std::to_string(g) + ".pcie", LinkKind::kPcieSlot, node_vertex(ni, g),
                        sw_vertex(pcie_switch_of_gpu(g)), pc.bandwidth, pc.latency + pc.switch_latency / 2});
    for (int k = 0; k < k_n; ++k)
      links_.push_back({node + ".nic" + std::to_string(k) + ".pcie", LinkKind::kPcieSlot,
                        node_vertex(ni, g_n + nv_vertex + p_n + 1 + k), sw_vertex(nic_switch_[k]), pc.bandwidth,
                        pc.latency + pc.switch_latency / 2 + nic_x / 2});
    for (int p = 0; p < p_n; ++p)
      links_.push_back({node + ".pcie" + std::to_string(p) + ".host", LinkKind::kPcieHost, sw_vertex(p), cpu,
                        pc.host_bandwidth, pc.host_latency + pc.switch_latency / 2 + pc.host_crossing / 2});
  }
  for (std::size_t d = 0; d < domains; ++d)
    vertices_.push_back({"domain" + std::to_string(d) + ".nvswitch", VertexKind::kNvswitch});
  const VertexId first_leaf = static_cast<VertexId>(vertices_.size());
  for (std::size_t l = 0; l < leaves; ++l)
    vertices_.push_back({"leaf" + std::to_string(l), VertexKind::kLeaf});
  // Under adaptive routing every flow spreads evenly over the spines, so each trunk of a leaf
  // carries the same share of its traffic and fills when their sum does: the spines as one vertex,
  // each leaf's uplinks as one trunk of their summed capacity, is the same fluid model.
  const bool spread = spines == 1 && spine_count() > 1;
  for (std::size_t s = 0; s < spines; ++s)
    vertices_.push_back({spread ? std::string("spines") : "spine" + std::to_string(s), VertexKind::kSpine});
  if (const auto& f = spec_.fabric) {
    for (std::size_t n = 0; n < nodes; ++n)
      for (int k = 0; k < k_n; ++k)
        links_.push_back({"node" + std::to_string(n) + ".nic" + std::to_string(k) + ".ib", LinkKind::kIbAccess,
                          node_vertex(static_cast<int>(n), g_n + nv_vertex + p_n + 1 + k),
                          first_leaf + leaf_of_nic(static_cast<int>(n), k), f->link_bandwidth,
                          f->link_latency + nic_x / 2 + f->switch_latency / 2});
    // Each leaf's uplink capacity, downlinks / oversubscription, spread evenly over the spines. A
    // rail leaf's downlinks are the NICs of its rail, one per NIC of that rail of each node.
    std::vector<int> nics_on_rail(f->rails, 0);
    for (int k = 0; k < k_n; ++k)
      ++nics_on_rail[rail_of_nic(k)];
    for (std::size_t l = 0; l < leaves; ++l) {
      const core::BytesPerSec trunk = f->link_bandwidth * (double(f->nodes_per_leaf) * nics_on_rail[l % f->rails] /
                                                           (f->oversubscription * static_cast<double>(spines)));
      for (std::size_t s = 0; s < spines; ++s)
        links_.push_back({"leaf" + std::to_string(l) + (spread ? std::string(".spines") : ".spine" + std::to_string(s)),
                          LinkKind::kIbTrunk, first_leaf + static_cast<VertexId>(l),
                          first_leaf + static_cast<VertexId>(leaves + s), trunk, f->link_latency + f->switch_latency});
    }
  }

  auto graph = std::make_shared<Graph>(Graph{Graph::List(vertices_.size())});
  for (LinkId id = 0; id < links_.size(); ++id)
    boost::add_edge(links_[id].a, links_[id].b, id, graph->list);
  graph_ = std::move(graph);
}

void Topology::validate() const
{
  core::Diagnostics diags;
  for (const Link& l : links_)
    if (!(l.bandwidth.value() > 0.0) || !(l.latency.value() >= 0.0))
      diags.add({spec_.file, 0, 0, "", "link " + l.name + " has no positive bandwidth or a negative latency"});
  std::vector<int> component(vertices_.size());
  int count = vertices_.empty() ? 0 : boost::connected_components(graph_->list, component.data());
  if (count > 1)
    for (std::size_t v = 1; v < vertices_.size(); ++v)
      if (component[v] != component[0]) {
        diags.add({spec_.file, 0, 0, "",
                   "the topology is not connected: no path from " + vertices_[0].name + " to " + vertices_[v].name});
        break;
      }
  diags.throw_if_any();
}

std::string Topology::gpu_name(GpuId g) const
{
  return "node" + std::to_string(node_of(g)) + ".gpu" + std::to_string(local_index(g));
}

std::optional<GpuId> Topology::find_gpu(std::string_view name) const
{
  auto number = [](std::string_view& s, std::string_view prefix) -> std::optional<std::uint64_t> {
    if (s.substr(0, prefix.size()) != prefix) return std::nullopt;
    s.remove_prefix(prefix.size());
    std::uint64_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end == s.data()) return std::nullopt;
    s.remove_prefix(end - s.data());
    return v;
  };
  auto node = number(name, "node");
  auto gpu = node ? number(name, ".gpu") : std::nullopt;
  if (!gpu || !name.empty() || *node >= node_count() || *gpu >= gpus_per_node_) return std::nullopt;
  return static_cast<GpuId>(*node * gpus_per_node_ + *gpu);
}

VertexId Topology::gpu_vertex(GpuId g) const
{
  return node_vertex(node_of(g), local_index(g));
}

VertexId Topology::nvswitch_vertex(int node) const
{
  if (nodes_per_domain() == 1) return node_vertex(node, static_cast<int>(gpus_per_node_));
  return first_domain_switch_ + static_cast<VertexId>(domain_of_node(node));
}

Topology read_topology(core::Section& section)
{
  const std::size_t before = section.diagnostics().size();
  TopologySpec spec = read_topology_spec(section);
  if (section.diagnostics().size() != before) section.diagnostics().throw_if_any();
  return Topology(std::move(spec));
}

Topology load_topology(const core::Document& doc)
{
  core::Diagnostics diags;
  core::Section top(doc.file, doc.root, "", topology_schema(), diags);
  TopologySpec spec = read_topology_spec(top);
  diags.throw_if_any();
  return Topology(std::move(spec));
}

Topology load_topology(const std::filesystem::path& file)
{
  return load_topology(core::load_yaml(file));
}

} // namespace xattn::topo
