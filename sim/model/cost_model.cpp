#include "sim/model/cost_model.hpp"

#include <algorithm>
#include <cmath>

namespace xattn::sim
{

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

CallCost price_call(const ModelSpec& m, const Profile& p, const CallShape& s, const PathCost& path)
{
  const int h = std::max(1, s.holders);
  const double per_holder = s.tokens / h;
  const double decoded = s.rows / m.heads; // tokens decoded in this call
  const Seconds lat = leg_latency(p, path);
  const Seconds attend = kernel_time(m, p, s.tokens, s.rows);
  const Options o{s.transport, true, s.aligned};

  // Route: the same exchange with each holder, in parallel through the requester's link.
  const ExchangePrice e =
      price_exchange(m, p, {s.rows, decoded, per_holder, per_holder * s.rows, 1, s.sparse}, path, path, o);
  CallCost c;
  c.route.probe = probe(p, path.fabric, s.transport, e.query);
  c.route.transfer = parallel_transfer(e.query, h, e.query_flow, path, lat);
  c.route.compute = e.kernel.time();
  c.route.ret = parallel_transfer(e.answer, h, e.answer_flow, path, lat);
  c.route.merge = merge_time(m, p, h, s.rows);
  c.route.host = p.host_overhead;
  c.route_wire = (e.query + e.answer) * static_cast<double>(h);

  // Fetch: each holder's share moved in parallel, then every run spliced, then local attention.
  const MovePrice mv = price_move(m, p, per_holder, s.runs, s.sparse, decoded, path, path, o);
  c.fetch.probe = probe(p, path.fabric, s.transport, mv.bytes);
  if (mv.index) {
    c.fetch.index = probe(p, path.fabric, s.transport, mv.index_query) +
                    parallel_transfer(mv.index_query, h, mv.index_query_flow, path, lat) +
                    parallel_transfer(mv.ids, h, mv.ids_flow, path, lat);
    c.fetch_wire = (mv.index_query + mv.ids) * static_cast<double>(h);
  }
  c.fetch.transfer = parallel_transfer(mv.bytes, h, mv.chunk_flow, path, lat);
  c.fetch.splice = splice_time(m, p, s.runs, s.tokens, s.aligned);
  c.fetch.compute = attend;
  c.fetch.host = p.host_overhead;
  c.fetch_wire += mv.bytes * static_cast<double>(h);

  const double prefilled = s.prefill_tokens > 0 ? s.prefill_tokens : s.tokens;
  c.local.prefill = prefill_time(m, p, prefilled, 0, s.gpus) / static_cast<double>(m.layers);
  c.local.compute = attend;

  c.reuse = attend;
  return c;
}

Decision decide(const CallCost& c, double reuse)
{
  Decision d;
  const Seconds r = c.route.total(), f = c.fetch.total(), l = c.local.total();
  d.route_total = r * (1.0 + reuse);
  d.fetch_total = f + c.reuse * reuse;
  d.local_total = l + c.reuse * reuse;
  // Ties go to the primitive that moves less: route, then fetch.
  d.choice = Primitive::kRoute;
  Seconds best = d.route_total;
  if (d.fetch_total < best) {
    d.choice = Primitive::kFetch;
    best = d.fetch_total;
  }
  if (d.local_total < best) d.choice = Primitive::kLocal;
  // (1 + n) r = f + n a  =>  n = (f - r) / (r - a)
  if (f <= r)
    d.break_even_reuse = 0.0;
  else if (r > c.reuse)
    d.break_even_reuse = (f - r) / (r - c.reuse);
  return d;
}

} // namespace xattn::sim
