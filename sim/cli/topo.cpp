// `xattn topo TOPOLOGY [--json] [--path GPU GPU [--striped]] [--dot FILE] [--describe]`: inspect a topology file
// or preset (its JSON: docs/file-formats.md, "Outputs").
#include "sim/cli/command.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/resources.hpp"
#include "topologies/report.hpp"

#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

namespace xattn::cli
{
namespace
{
struct TopoOptions {
  std::string file;
  std::vector<std::string> path;
  std::string dot;
  bool json = false;
  bool describe = false;
  bool striped = false;
};
} // namespace

void add_topo(CLI::App& app, Action& action)
{
  auto o = std::make_shared<TopoOptions>();
  auto* sub = app.add_subcommand("topo", "Summarise a topology, show the path between two GPUs, export DOT");
  sub->add_option("topology", o->file, "Topology file or preset name (topologies/NAME.yaml)");
  sub->add_flag("--json", o->json, "Print JSON instead of text");
  sub->add_option("--path", o->path, "Show the routed path between two GPUs (nodeN.gpuG or index)")->expected(2);
  sub->add_flag(
      "--striped", o->striped,
      "With --path: as the first GPU sends when it stripes over its node's NICs (engine.requester_nics: node)");
  sub->add_option("--dot", o->dot, "Write the graph as Graphviz DOT to FILE");
  sub->add_flag("--describe", o->describe, "Print the topology file schema");
  on_run(sub, action, [o] {
    if (o->describe) {
      std::cout << describe_format("topology");
      return 0;
    }
    if (o->file.empty()) core::fail("command line", 0, 0, "topo", "a topology file or preset name is required");
    auto file = core::resolve_preset(o->file, "topologies");
    if (!file) core::fail("command line", 0, 0, "TOPOLOGY", core::no_preset_message("topology", o->file, "topologies"));
    topo::Topology t = topo::load_topology(*file);
    std::optional<std::pair<topo::GpuId, topo::GpuId>> pair;
    if (o->striped && o->path.empty()) core::fail("command line", 0, 0, "--striped", "needs --path GPU GPU");
    if (!o->path.empty())
      pair.emplace(topo::parse_gpu(t, o->path[0], "--path"), topo::parse_gpu(t, o->path[1], "--path"));
    if (!o->dot.empty()) { // written atomically: an interrupted export never leaves half a graph
      std::ostringstream dot;
      t.write_dot(dot);
      core::write_file_atomically(o->dot, dot.str(), "--dot");
    }
    if (o->json) {
      nlohmann::json j = topo::summary_json(t);
      if (pair) j["path"] = topo::path_json(t, pair->first, pair->second, o->striped);
      std::cout << j.dump(2) << "\n";
    } else {
      std::cout << topo::summary_text(t);
      if (pair) std::cout << topo::path_text(t, pair->first, pair->second, o->striped);
    }
    return 0;
  });
}

} // namespace xattn::cli
