// Builds the graph and the SimGrid platform of a topology (default: the 8,192-GPU preset) and
// reports the wall time of each step. Run under `/usr/bin/time -v` for the peak memory.
//   topo_bench [TOPOLOGY.yaml]
#include "sim/core/resources.hpp"
#include "topologies/platform.hpp"

#include <simgrid/s4u/Engine.hpp>

#include <chrono>
#include <iostream>

int main(int argc, char** argv)
{
  using clock = std::chrono::steady_clock;
  auto file =
      argc > 1 ? std::optional<std::filesystem::path>(argv[1]) : xattn::core::find_data("topologies/ndr400-1024.yaml");
  if (!file) {
    std::cerr << "topo_bench: cannot find topologies/ndr400-1024.yaml (set XATTN_DATA_DIR)\n";
    return 2;
  }
  try {
    auto t0 = clock::now();
    xattn::topo::Topology topo = xattn::topo::load_topology(*file);
    auto t1 = clock::now();
    int sg_argc = 1;
    char name[] = "topo_bench";
    char* sg_argv[] = {name, nullptr};
    simgrid::s4u::Engine engine(&sg_argc, sg_argv);
    xattn::topo::Platform platform = xattn::topo::build_platform(topo, engine, {});
    auto t2 = clock::now();
    // Route a sample of pairs through SimGrid, as the engine would at launch.
    std::vector<simgrid::s4u::Link*> links;
    std::size_t hops = 0;
    for (std::size_t a = 0; a < topo.gpu_count(); a += 97) {
      double latency = 0;
      links.clear();
      platform.hosts[a]->route_to(platform.hosts[(a * 7919 + 13) % topo.gpu_count()], links, &latency);
      hops += links.size();
    }
    auto t3 = clock::now();
    auto sec = [](auto d) { return std::chrono::duration<double>(d).count(); };
    std::cout << topo.name() << ": " << topo.gpu_count() << " GPUs, " << topo.node_count() << " nodes, "
              << topo.link_count() << " links, " << topo.vertex_count() << " vertices\n"
              << "graph:    " << sec(t1 - t0) << " s\n"
              << "platform: " << sec(t2 - t1) << " s\n"
              << "total:    " << sec(t2 - t0) << " s\n"
              << "routes:   " << sec(t3 - t2) << " s for sampled pairs (" << hops << " hops)\n";
  } catch (const xattn::core::InputError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
}
