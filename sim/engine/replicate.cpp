// engine.replication dynamic (replicas.hpp): where a new copy of a chunk goes, and its way there.
#include "sim/engine/iteration_steps.hpp"
#include "sim/engine/replicas.hpp"

#include "sim/core/check.hpp"

#include <algorithm>
#include <memory>
#include <tuple>

namespace xattn::sim::engine
{

void Simulation::count_read(int inst, std::uint64_t chunk, int h)
{
  if (!replicas_ || !replicas_->read(chunk, h)) return;
  std::vector<int> options;
  holders_with(chunk, options);
  replicate(inst, chunk, h, options);
}

// A copy of `chunk` from holder instance `from`, which serves requester instance `inst` a read of
// it, to the holder nearest that requester among those without one (`options` hold it): by
// fabric class from the requester's GPU, then the fewest kernels running, then the lowest index.
// Priced as a fetch to that holder: each GPU of `from` sends its rank's share of every layer to
// the same rank of the target through one of its copy streams; the copy serves calls once every
// rank's share landed.
void Simulation::replicate(int inst, std::uint64_t chunk, int from, const std::vector<int>& options)
{
  const topo::GpuId me = instances_[inst]->gpus[0];
  const int tp = sc_.tp;
  int target = -1;
  std::tuple<int, int, int> best;
  for (int h = 0; h < sc_.holder_instances(); ++h) {
    if (std::find(options.begin(), options.end(), h) != options.end()) continue;
    const topo::GpuId g = holders_.gpus[static_cast<std::size_t>(h) * tp];
    const auto key =
        std::make_tuple(static_cast<int>(sc_.topology->fabric_class(me, g)),
                        holders_.compute[static_cast<std::size_t>(holders_.index_of_gpu[g])]->running(), h);
    if (target < 0 || key < best) best = key, target = h;
  }
  if (target < 0) {
    replicas_->dropped(chunk);
    return;
  }
  const ModelSpec& m = sc_.model;
  const double layers = m.layers;
  const double tokens = m.tokens_per_rank(static_cast<double>(sc_.corpus.chunk_tokens), tp);
  auto left = std::make_shared<int>(tp);
  for (int k = 0; k < tp; ++k) {
    const topo::GpuId src = holders_.gpus[static_cast<std::size_t>(from) * tp + k];
    const topo::GpuId dst = holders_.gpus[static_cast<std::size_t>(target) * tp + k];
    const MovePrice x =
        price_move(m, sc_.profile, tokens, 1, net_->path_cost(src, dst), iteration::pricing_options(sc_));
    const double bytes = x.bytes.value() * layers, after_s = x.after_chunk.value() * layers;
    StreamPool* pool = holders_.streams[static_cast<std::size_t>(holders_.index_of_gpu[src])].get();
    pool->acquire([this, pool, src, dst, x, bytes, after_s, left, chunk, target] {
      net_->transfer(src, dst, bytes, x.chunk_flow, 0.0, [this, pool, after_s, left, chunk, target, bytes] {
        pool->release();
        after(after_s, [this, left, chunk, target, bytes] {
          if (--*left == 0) replicas_->landed(chunk, target, bytes);
        });
      });
    });
  }
}

} // namespace xattn::sim::engine
