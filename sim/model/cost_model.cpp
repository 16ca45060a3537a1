#include "sim/model/cost_model.hpp"

#include <algorithm>
#include <cmath>

namespace xattn::sim {

std::string_view to_string(Primitive p)
{
  switch (p) {
    case Primitive::kRoute:
      return "route";
    case Primitive::kFetch:
      return "fetch";
    case Primitive::kLocal:
      return "local";
  }
  return "?";
}

Breakdown Breakdown::scaled(double k) const
{
  return {probe * k, transfer * k, compute * k, ret * k, merge * k, splice * k, prefill * k, index * k, host * k};
}

PathCost nominal_path(const Profile& p, core::FabricClass f) { return {f, p.fabric(f).bandwidth, p.fabric(f).wire_latency}; }

Seconds leg_latency(const Profile& p, const PathCost& path)
{
  // A path shorter than the probe's own is priced like it: the probe cannot be taken apart.
  return std::max(Seconds(0), path.latency - p.fabric(path.fabric).wire_latency);
}

BytesPerSec dispatch_rate(const Profile& p, const PathCost& path, int blocks)
{
  return std::min(p.fabric(path.fabric).block_rate * static_cast<double>(blocks), path.bottleneck);
}

Seconds parallel_transfer(Bytes bytes_each, int holders, BytesPerSec cap, const PathCost& path, Seconds latency)
{
  if (path.fabric == core::FabricClass::kSameGpu || bytes_each.value() == 0)
    return Seconds(0);
  // Holders share the requester's lanes evenly (a holder per lane first).
  const int sharing = (holders + std::max(1, path.lanes) - 1) / std::max(1, path.lanes);
  BytesPerSec share = std::min(cap, path.bottleneck / static_cast<double>(sharing));
  return latency + bytes_each / share;
}

CallCost price_call(const ModelSpec& m, const Profile& p, const CallShape& s, const PathCost& path)
{
  const int h              = std::max(1, s.holders);
  const Seconds probe      = p.fabric(path.fabric).probe(s.transport);
  const double per_holder  = s.tokens / h;
  const BytesPerSec r_rate = dispatch_rate(p, path, p.route_blocks);
  const BytesPerSec f_rate = dispatch_rate(p, path, p.fetch_blocks);
  const Seconds attend     = p.kernel_time(s.tokens, s.rows);
  const Seconds lat        = leg_latency(p, path);
  // Under selection the indexer runs where the keys are: the query carries the indexer query of
  // each decoded token (rows / heads tokens) along with the query rows.
  const Bytes index_query = s.sparse ? m.index_query_per_token() * (s.rows / m.heads) : Bytes(0);
  const Bytes query_each  = m.query_row() * s.rows + index_query;
  const Bytes answer_each = m.output_row() * s.rows;

  CallCost c;
  c.route.probe    = probe;
  c.route.transfer = parallel_transfer(query_each, h, r_rate, path, lat);
  c.route.compute  = p.kernel_time(per_holder, s.rows);
  c.route.ret      = parallel_transfer(answer_each, h, r_rate, path, lat);
  c.route.merge    = p.merge_time(h, s.rows);
  c.route.host     = p.host_overhead;
  c.route_wire     = (query_each + answer_each) * static_cast<double>(h);

  const Bytes moved = m.latent_per_token() * s.tokens;
  c.fetch.probe     = probe;
  if (s.sparse) {
    // One extra round trip for block ids: the indexer query out, top-k ids (4 B each) back.
    const Bytes ids = Bytes(4.0 * s.tokens / h);
    c.fetch.index   = probe + parallel_transfer(index_query, h, r_rate, path, lat) + parallel_transfer(ids, h, r_rate, path, lat);
    c.fetch_wire    = (index_query + ids) * static_cast<double>(h);
  }
  c.fetch.transfer = parallel_transfer(moved / static_cast<double>(h), h, f_rate, path, lat);
  c.fetch.splice   = p.splice_time(s.runs, s.tokens);
  c.fetch.compute  = attend;
  c.fetch.host     = p.host_overhead;
  c.fetch_wire += moved;

  c.local.prefill = p.prefill_time(s.tokens) / static_cast<double>(m.layers);
  c.local.compute = attend;

  c.reuse = attend;
  return c;
}

Decision decide(const CallCost& c, double reuse)
{
  Decision d;
  const Seconds r = c.route.total(), f = c.fetch.total(), l = c.local.total();
  d.route_total   = r * (1.0 + reuse);
  d.fetch_total   = f + c.reuse * reuse;
  d.local_total   = l + c.reuse * reuse;
  // Ties go to the primitive that moves less: route, then fetch.
  d.choice = Primitive::kRoute;
  Seconds best = d.route_total;
  if (d.fetch_total < best) {
    d.choice = Primitive::kFetch;
    best     = d.fetch_total;
  }
  if (d.local_total < best)
    d.choice = Primitive::kLocal;
  // (1 + n) r = f + n a  =>  n = (f - r) / (r - a)
  if (f <= r)
    d.break_even_reuse = 0.0;
  else if (r > c.reuse)
    d.break_even_reuse = (f - r) / (r - c.reuse);
  return d;
}

} // namespace xattn::sim
