// libFuzzer target: a topology file through the schema (topo::read_topology_spec), and, when the
// spec is valid and small enough to build quickly, the Boost.Graph model and a few routed paths.
// A finding is a crash, a sanitizer report, or an exception other than core::InputError.
#include "sim/core/yaml.hpp"
#include "topologies/topology.hpp"

#include <cstdint>
#include <string>

using namespace xattn;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    core::Document doc = core::parse_yaml(text, "fuzz.yaml");
    core::Diagnostics diags;
    core::Section s(doc.file, doc.root, "", topo::topology_schema(), diags);
    topo::TopologySpec spec = topo::read_topology_spec(s);
    diags.throw_if_any();
    // The schema allows up to 65,536 GPUs; building those is slow, not wrong: keep iterations fast.
    if (static_cast<std::int64_t>(spec.nodes) * spec.gpus_per_node > 4096) return 0;
    topo::Topology t(std::move(spec));
    const auto n = static_cast<topo::GpuId>(t.gpu_count());
    if (n > 0) {
      (void)t.path(0, n - 1);
      (void)t.path(n - 1, 0);
      (void)t.path(0, 0);
      (void)t.path(n / 2, n - 1);
    }
  } catch (const core::InputError&) {
  }
  return 0;
}
