// The Boost.Graph adjacency list a Topology keeps its vertices and links in. Internal to
// topologies/: only the files that walk the graph (the build and its check, paths, the DOT export)
// include Boost.Graph, not every file that names a topology.
#pragma once

#include "topologies/topology.hpp"

#include <boost/graph/adjacency_list.hpp>

namespace xattn::topo
{

/// Undirected; each edge carries its LinkId (Topology::links() order) as its index.
struct Topology::Graph {
  using List = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, boost::no_property,
                                     boost::property<boost::edge_index_t, LinkId>>;
  List list;
};

} // namespace xattn::topo
