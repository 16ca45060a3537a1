// Posting network messages (docs/contention.md, "Posting a fan-out"). Before its bytes cross the
// network a message is posted to its sender's NIC: through a CPU proxy, by one of the GPU's proxy
// threads, each posting one message at a time (dispatch.proxy_post), so that a fan-out of many
// small messages queues there; device-initiated (IBGDA), by the message's own thread blocks
// (dispatch.gpu_post), in parallel with the GPU's other messages. Messages that stay inside an
// NVLink domain or a node's PCIe are not posted to a NIC. With both costs 0 (the default) posting is
// inside the fabric's probe and every message leaves at once.
#pragma once

#include "calibrate/profile.hpp"
#include "sim/core/fabric.hpp"
#include "topologies/topology.hpp"

#include <vector>

namespace xattn::sim::engine
{

class Posting
{
public:
  Posting(const calibrate::Profile& profile, const topo::Topology& topo);
  /// Whether posting through `transport` costs anything (else every message leaves when it is sent).
  bool priced(core::Transport transport) const
  {
    return (transport == core::Transport::kProxy ? proxy_post_ : gpu_post_) > 0;
  }
  /// When a message that GPU `src` sends to `dst` at `now` through `transport` leaves its sender:
  /// after a proxy thread is free and has posted it (the thread is busy until then), or after its
  /// thread blocks posted it, or at once where it goes to no NIC.
  double leave(topo::GpuId src, topo::GpuId dst, core::Transport transport, double now);

private:
  const topo::Topology& topo_;
  double proxy_post_ = 0, gpu_post_ = 0;
  int threads_ = 1;
  std::vector<double> proxy_free_; ///< [gpu * threads + k]: when proxy thread k of a GPU is free
};

} // namespace xattn::sim::engine
