#include "sim/model/cost_model.hpp"
#include "sim/model/pricing.hpp"

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

  CallCost c;
  // Under selection, first the top-k: each holder scans its share of the context and returns its
  // candidates. Every primitive waits for it, and so does a later call attending moved KV (the
  // index keys stay with the holder). Keys copied to the requester: it scans them all itself.
  Seconds select(0);
  Bytes select_wire(0);
  const double scanned_all = s.scanned > 0 ? s.scanned : s.tokens;
  if (s.sparse && s.index_on_requester) {
    select = index_scan_kernel(m, p, decoded, scanned_all * decoded).time();
  } else if (s.sparse) {
    const double scanned = scanned_all / h;
    const ExchangePrice x = price_select(
        m, p, {decoded, scanned * decoded, std::min<double>(m.index.topk, scanned) * decoded}, path, path, o);
    select = probe(p, path.fabric, s.transport, x.query) + parallel_transfer(x.query, h, x.query_flow, path, lat) +
             x.kernel.time() + parallel_transfer(x.answer, h, x.answer_flow, path, lat);
    select_wire = (x.query + x.answer) * static_cast<double>(h);
  }
  // Route: the same exchange with each holder, in parallel through the requester's link.
  const ExchangePrice e = price_exchange(m, p, {s.rows, per_holder, per_holder * s.rows, 1, s.sparse}, path, path, o);
  c.route.probe = probe(p, path.fabric, s.transport, e.query);
  c.route.transfer = parallel_transfer(e.query, h, e.query_flow, path, lat);
  c.route.compute = e.kernel.time();
  c.route.ret = parallel_transfer(e.answer, h, e.answer_flow, path, lat);
  c.route.merge = merge_time(m, p, h, s.rows);
  c.route.host = p.host_overhead;
  c.route.index = select;
  c.route_wire = (e.query + e.answer) * static_cast<double>(h) + select_wire;

  // Fetch: each holder's share moved in parallel, then every run spliced, then local attention.
  // Over several GPUs (tensor parallelism) under MLA each fetches a g-th of it on its own path,
  // then forwards it to the others over NVLink: every rank attends the whole latent. Under GQA
  // each fetches its own KV heads' share of every token (priced as that share of the tokens) and
  // needs nothing from the others.
  const double moved = s.moved > 0 ? s.moved : s.tokens;
  const int g = std::max(1, s.gpus);
  const MovePrice mv = price_move(m, p, m.tokens_per_rank(moved, g) / h, s.runs, path, o);
  c.fetch.probe = probe(p, path.fabric, s.transport, mv.bytes);
  c.fetch.index = select;
  c.fetch_wire = select_wire;
  c.fetch.transfer = parallel_transfer(mv.bytes, h, mv.chunk_flow, path, lat);
  if (g > 1 && m.mla()) {
    const PathCost nvlink = nominal_path(p, core::FabricClass::kNvlink);
    c.fetch.transfer += probe(p, nvlink.fabric, s.transport, mv.bytes) +
                        parallel_transfer(mv.bytes, h * (g - 1), flow(p, nvlink, mv.bytes, p.fetch_blocks), nvlink,
                                          leg_latency(p, nvlink));
  }
  c.fetch.splice = splice_time(m, p, s.runs, m.mla() ? moved : m.tokens_per_rank(moved, g), s.aligned);
  c.fetch.compute = attend;
  c.fetch.host = p.host_overhead;
  c.fetch_wire += mv.bytes * static_cast<double>(h * g);

  const double prefilled = s.prefill_tokens > 0 ? s.prefill_tokens : s.tokens;
  c.local.prefill = prefill_time(m, p, prefilled, 0, Layout{.tp = s.gpus, .dp_attention = 1, .ep = s.ep}) /
                    static_cast<double>(m.layers);
  c.local.compute = attend;
  c.local.index = select;

  c.reuse = attend + select;
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
