// Posting network messages (docs/contention.md, "Posting a fan-out"). A message to another node is
// posted to its sender's NIC before its bytes move. A lone message's post is inside its fabric's
// probe (the measured fixed time of one message); what a fan-out adds is the queue: through a CPU
// proxy, each of a GPU's proxy threads posts one message at a time (dispatch.proxy_post each), so
// the next message waits for the thread to finish the ones before it. Device-initiated (IBGDA),
// each message's own thread blocks post it, in parallel with the GPU's other messages: no queue.
// Messages that stay inside an NVLink domain or a node's PCIe are not posted to a NIC.
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
  /// Whether messages sent through `transport` can wait to be posted (else each leaves when sent).
  bool priced(core::Transport transport) const { return transport == core::Transport::kProxy && proxy_post_ > 0; }
  /// When a message that GPU `src` sends to `dst` at `now` through `transport` leaves its sender:
  /// through a proxy, once one of the GPU's threads is free (it is then busy posting it for
  /// proxy_post); device-initiated, or to no NIC, at once.
  double leave(topo::GpuId src, topo::GpuId dst, core::Transport transport, double now);

private:
  const topo::Topology& topo_;
  double proxy_post_ = 0;
  int threads_ = 1;
  std::vector<double> proxy_free_; ///< [gpu * threads + k]: when proxy thread k of a GPU is free
};

} // namespace xattn::sim::engine
