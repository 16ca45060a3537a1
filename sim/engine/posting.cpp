#include "sim/engine/posting.hpp"

#include <algorithm>

namespace xattn::sim::engine
{

Posting::Posting(const calibrate::Profile& profile, const topo::Topology& topo)
    : topo_(topo), proxy_post_(profile.proxy_post.value()), threads_(profile.proxy_threads)
{
  if (proxy_post_ > 0) proxy_free_.assign(topo.gpu_count() * static_cast<std::size_t>(threads_), 0.0);
}

double Posting::leave(topo::GpuId src, topo::GpuId dst, core::Transport transport, double now)
{
  if (!priced(transport)) return now;
  const core::FabricClass f = topo_.fabric_class(src, dst);
  if (f != core::FabricClass::kIbSameLeaf && f != core::FabricClass::kIbSpine) return now;
  // The GPU's thread that frees first takes it (the first of them on a tie); its post is the
  // message's own, inside the probe.
  const auto first = proxy_free_.begin() + static_cast<std::ptrdiff_t>(src) * threads_;
  const auto thread = std::min_element(first, first + threads_);
  const double leaves = std::max(*thread, now);
  *thread = leaves + proxy_post_;
  return leaves;
}

} // namespace xattn::sim::engine
