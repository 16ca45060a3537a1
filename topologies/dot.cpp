// Graphviz export of the topology graph through Boost.Graph's writer.
#include "topologies/graph.hpp"
#include "topologies/topology.hpp"

#include <boost/graph/graphviz.hpp>

#include <ostream>

namespace xattn::topo
{

void Topology::write_dot(std::ostream& out) const
{
  auto shape = [](VertexKind k) {
    switch (k) {
    case VertexKind::kGpu:
      return "box";
    case VertexKind::kNic:
      return "hexagon";
    case VertexKind::kCpu:
      return "house";
    default:
      return "ellipse";
    }
  };
  auto vertex_writer = [&](std::ostream& o, Graph::List::vertex_descriptor v) {
    o << "[label=" << boost::escape_dot_string(vertices_[v].name) << ",shape=" << shape(vertices_[v].kind) << "]";
  };
  auto edge_writer = [&](std::ostream& o, Graph::List::edge_descriptor e) {
    const Link& l = links_[boost::get(boost::edge_index, graph_->list, e)];
    o << "[label=\"" << l.name << "\\n"
      << core::format_rate(l.bandwidth) << " " << core::format_seconds(l.latency) << "\"]";
  };
  auto graph_writer = [&](std::ostream& o) { o << "label=" << boost::escape_dot_string(spec_.name) << ";\n"; };
  boost::write_graphviz(out, graph_->list, vertex_writer, edge_writer, graph_writer);
}

} // namespace xattn::topo
