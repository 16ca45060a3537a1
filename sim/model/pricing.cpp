#include "sim/model/pricing.hpp"

#include <algorithm>

namespace xattn::sim
{
namespace
{

// The curve segment a message of `size` bytes falls in: the one-line curve when none was fitted.
calibrate::CurveSegment segment(const calibrate::FabricCosts& f, core::Transport t, Bytes size)
{
  if (f.curve.empty()) return {Bytes(0), f.probe(t), f.bandwidth};
  auto it = std::upper_bound(f.curve.begin(), f.curve.end(), size,
                             [](Bytes s, const calibrate::CurveSegment& k) { return s < k.from; });
  const calibrate::CurveSegment& k = *(it == f.curve.begin() ? it : it - 1);
  return {k.from, f.probe(t) + (k.latency - f.curve.front().latency), k.bandwidth};
}

} // namespace

PathCost nominal_path(const Profile& p, core::FabricClass f)
{
  return {f, p.fabric(f).nominal(), p.fabric(f).wire_latency};
}

Flow flow(const Profile& p, const PathCost& path, Bytes size, int blocks)
{
  const calibrate::FabricCosts& f = p.fabric(path.fabric);
  const double e = segment(f, core::Transport::kGpu, size).bandwidth / f.nominal();
  const BytesPerSec by_blocks = f.block_rate * static_cast<double>(blocks);
  const BytesPerSec by_link = path.bottleneck * e;
  // The curve was measured with bulk transfers: blocks that sustain the bulk rate move a message as
  // the curve says at every size (a latency-bound segment may fit a rate no dispatch reaches); fewer
  // blocks cap it. Without a fitted curve this is just the smaller of the two rates.
  const bool bulk = by_blocks >= path.bottleneck * (f.bandwidth / f.nominal());
  Flow out;
  out.blocks = blocks;
  out.link_bound = bulk || by_link <= by_blocks;
  out.rate = out.link_bound ? by_link : by_blocks;
  out.factor = out.link_bound ? e : 1.0;
  return out;
}

Seconds probe(const Profile& p, core::FabricClass fabric, core::Transport transport, Bytes size)
{
  return segment(p.fabric(fabric), transport, size).latency;
}

Seconds leg_latency(const Profile& p, const PathCost& path)
{
  // A path shorter than the probe's own is priced like it: the probe cannot be taken apart.
  return std::max(Seconds(0), path.latency - p.fabric(path.fabric).wire_latency);
}

Seconds parallel_transfer(Bytes bytes_each, int holders, const Flow& f, const PathCost& path, Seconds latency)
{
  if (path.fabric == core::FabricClass::kSameGpu || bytes_each.value() == 0) return Seconds(0);
  // Holders share the requester's lanes evenly (a holder per lane first). Shares are of link
  // capacity; a flow turns its share into progress at its factor.
  const int lanes = std::max(1, path.lanes);
  const int sharing = (std::max(1, holders) + lanes - 1) / lanes;
  const BytesPerSec capacity = std::min(f.rate / f.factor, path.bottleneck / static_cast<double>(sharing));
  return latency + bytes_each / (capacity * f.factor);
}

Seconds kernel_time(const Profile& p, double tokens, double rows)
{
  return exchange_kernel_time(p, 1, tokens, tokens * rows);
}

Seconds exchange_kernel_time(const Profile& p, double fixed_launches, double tokens, double token_rows)
{
  return p.kernel_fixed * fixed_launches + p.kernel_per_token * tokens + p.kernel_per_token_row * token_rows;
}

Seconds merge_time(const Profile& p, double partials, double rows)
{
  return p.merge_fixed + merge_rows_time(p, partials, rows);
}

Seconds merge_rows_time(const Profile& p, double partials, double rows)
{
  return p.merge_per_row * (partials * rows);
}

Seconds splice_time(const Profile& p, double runs, double tokens)
{
  return p.splice_fixed * runs + p.splice_per_token * tokens;
}

Seconds prefill_time(const Profile& p, double tokens)
{
  return Seconds(tokens / p.prefill_tokens_per_s);
}

Seconds local_attention(const Profile& p, double tokens, double rows)
{
  return exchange_kernel_time(p, 0, tokens, tokens * rows);
}

Seconds ExchangePrice::idle() const
{
  return query / query_flow.rate + after_query + compute + answer / answer_flow.rate + after_answer;
}

ExchangePrice price_exchange(const ModelSpec& m, const Profile& p, const ExchangeShape& s, const PathCost& out,
                             const PathCost& back, const Options& o)
{
  ExchangePrice e;
  // Under selection the indexer runs where the keys are: the query carries the indexer query of
  // each decoded token along with the query rows.
  e.query = m.query_row() * s.rows + (s.sparse ? m.index_query_per_token() * s.decoded : Bytes(0));
  e.answer = m.output_row() * s.rows;
  e.query_flow = flow(p, out, e.query, p.route_blocks);
  e.answer_flow = flow(p, back, e.answer, p.route_blocks);
  e.after_query = probe(p, out.fabric, o.transport, e.query) + leg_latency(p, out) + p.host_overhead;
  e.compute = exchange_kernel_time(p, s.launches, s.tokens, s.token_rows);
  e.after_answer =
      leg_latency(p, back) + (o.collapsed_response ? Seconds(0) : probe(p, back.fabric, o.transport, e.answer));
  return e;
}

Seconds MovePrice::idle() const
{
  Seconds t = bytes / chunk_flow.rate + after_chunk + splice;
  if (index) t += index_query / index_query_flow.rate + after_index_query + ids / ids_flow.rate + after_ids;
  return t;
}

MovePrice price_move(const ModelSpec& m, const Profile& p, double tokens, int runs, bool sparse, double decoded,
                     const PathCost& in, const PathCost& out, const Options& o)
{
  MovePrice mv;
  mv.bytes = m.latent_per_token() * tokens;
  mv.chunk_flow = flow(p, in, mv.bytes, p.fetch_blocks);
  mv.after_chunk = probe(p, in.fabric, o.transport, mv.bytes) + leg_latency(p, in) + p.host_overhead;
  mv.splice = splice_time(p, runs, tokens);
  mv.index = sparse;
  if (sparse) {
    // One extra round trip for block ids: the indexer query out, the top-k ids (4 B each) back.
    mv.index_query = m.index_query_per_token() * decoded;
    mv.ids = Bytes(4.0 * tokens);
    mv.index_query_flow = flow(p, out, mv.index_query, p.route_blocks);
    mv.ids_flow = flow(p, in, mv.ids, p.route_blocks);
    mv.after_index_query = probe(p, out.fabric, o.transport, mv.index_query) + leg_latency(p, out);
    mv.after_ids = leg_latency(p, in);
  }
  return mv;
}

} // namespace xattn::sim
