#include "sim/engine/posting.hpp"

#include <algorithm>

namespace xattn::sim::engine
{

Posting::Posting(const calibrate::Profile& profile, const topo::Topology& topo)
    : topo_(topo), proxy_post_(profile.proxy_post.value()), gpu_post_(profile.gpu_post.value()),
      threads_(profile.proxy_threads)
{
  if (proxy_post_ > 0) proxy_free_.assign(topo.gpu_count() * static_cast<std::size_t>(threads_), 0.0);
}

double Posting::leave(topo::GpuId src, topo::GpuId dst, core::Transport transport, double now)
{
  const core::FabricClass f = topo_.fabric_class(src, dst);
  if (f != core::FabricClass::kIbSameLeaf && f != core::FabricClass::kIbSpine) return now;
  if (transport == core::Transport::kGpu) return now + gpu_post_;
  if (proxy_post_ <= 0) return now;
  // The GPU's thread that frees first takes it (the first of them on a tie).
  const auto first = proxy_free_.begin() + static_cast<std::ptrdiff_t>(src) * threads_;
  const auto thread = std::min_element(first, first + threads_);
  *thread = std::max(*thread, now) + proxy_post_;
  return *thread;
}

} // namespace xattn::sim::engine
