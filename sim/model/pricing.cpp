#include "sim/model/pricing.hpp"
#include "sim/model/prefill.hpp"

#include <algorithm>
#include <cmath>

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

// FlashMLA's decode tile: a thread block takes 64 query rows against 64 cached tokens at a time
// (deepseek-ai/FlashMLA, block_size_m and the page block size).
constexpr double kTileRows = 64, kTileTokens = 64;

// Thread blocks of a decode kernel for a request of `rows` query rows over `tokens` tokens. MLA:
// the rows fill 64-row tiles (heads padded, as FlashMLA pads them), each over 64-token tiles. GQA:
// one tile per KV head the rows read (its group's query heads packed in it, as FlashInfer's and
// FlashAttention's decode kernels pack them), each over 64-token tiles.
double decode_tiles(const ModelSpec& m, double rows, double tokens)
{
  const double token_tiles = std::ceil(tokens / kTileTokens);
  if (m.mla()) return std::ceil(rows / kTileRows) * token_tiles;
  const double group = static_cast<double>(m.heads) / m.kv_heads;
  return std::ceil(rows / group) * std::ceil(std::min(rows, group) / kTileRows) * token_tiles;
}

// The compressed protocol is MLA's (its low-rank c_Q); a GQA query has one form, each head's
// query out and its output back, whatever the profile routes an MLA model's in.
bool compressed(const ModelSpec& m, const Profile& p)
{
  return m.mla() && p.route_protocol == calibrate::RouteProtocol::kCompressed;
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

Kernel attention_kernel(const ModelSpec& m, const Profile& p, double launches, double rows, double tokens,
                        double token_rows)
{
  Kernel k;
  if (p.measured.kernel) {
    k.work = p.kernel_fixed * launches + p.kernel_per_token * tokens + p.kernel_per_token_row * token_rows;
  } else {
    const calibrate::GpuSpec& g = p.gpu;
    k.launch = g.launch * launches;
    // Every request of a kernel has the same rows (the model's heads over tp), so the mean stands
    // for each: it sets the KV each cached token gives them and the thread blocks (decode_tiles:
    // under MLA a request of 16 rows, 128 heads over tp 8, takes as many as one of 64). The padded
    // rows' FLOPs are not counted.
    const double rows_each = tokens > 0 ? token_rows / tokens : rows;
    const Bytes bytes = m.kv_read_per_token(rows_each) * tokens + (m.query_row() + m.output_row()) * rows;
    const Seconds whole =
        roofline(g, bytes, m.attention_flops_per_token_row() * token_rows, g.bf16, g.attention_efficiency);
    k.share = std::clamp(decode_tiles(m, rows_each, tokens) / g.sm_count, 1.0 / g.sm_count, 1.0);
    k.work = whole / k.share;
  }
  if (p.measured.concurrency) k.share = 1.0 / p.compute_concurrency;
  return k;
}

Seconds kernel_time(const ModelSpec& m, const Profile& p, double tokens, double rows)
{
  return attention_kernel(m, p, 1, rows, tokens, tokens * rows).time();
}

Seconds merge_time(const ModelSpec& m, const Profile& p, double partials, double rows)
{
  return (p.measured.merge ? p.merge_fixed : p.gpu.launch) + merge_rows_time(m, p, partials, rows);
}

Seconds merge_rows_time(const ModelSpec& m, const Profile& p, double partials, double rows)
{
  if (p.measured.merge) return p.merge_per_row * (partials * rows);
  // Memory-bound: every partial row read, the merged row written.
  if (partials <= 0) return Seconds(0);
  return m.output_row() * ((partials + 1) * rows) / (p.gpu.hbm * p.gpu.memory_efficiency);
}

Seconds splice_time(const ModelSpec& m, const Profile& p, double runs, double tokens, bool aligned)
{
  if (p.measured.splice) return p.splice_fixed * runs + p.splice_per_token * tokens;
  const Seconds insert = p.splice_insert * (runs / m.layers);
  if (aligned || tokens <= 0) return insert;
  // What RoPE rotated of each token (MLA's rope part, GQA's keys): read, rotated, written.
  const Bytes rotated = m.rotated_per_token() * (2.0 * tokens);
  return p.gpu.launch + rotated / (p.gpu.hbm * p.gpu.memory_efficiency) + insert;
}

Seconds prefill_time(const ModelSpec& m, const Profile& p, double tokens, double before, const Layout& l)
{
  if (p.measured.prefill) return Seconds(tokens / p.prefill_tokens_per_s);
  return prefill_price(m, p, l, {.tokens = tokens, .before = before, .group_tokens = 0, .ends_prompt = false}).total();
}

std::string missing_for_selection(const ModelSpec& m, const Profile& p)
{
  if (!m.index.sparse() || p.gpu.given()) return "";
  return "model '" + m.name + "' selects with a DSA indexer, whose scan profile '" + p.name +
         "' cannot price without a gpu section (the roofline)";
}

std::string missing_dimensions(const ModelSpec& m, const Profile& p)
{
  if (p.measured.prefill) return "";
  const std::string keys = missing_serving_keys(m);
  if (keys.empty()) return "";
  return "model '" + m.name + "' lacks " + keys + ", which profile '" + p.name +
         "' needs to price a re-prefill by its roofline, layer by layer (or give the profile a measured "
         "prefill.tokens_per_s)";
}

Kernel index_scan_kernel(const ModelSpec& m, const Profile& p, double decoded, double tokens)
{
  Kernel k;
  if (!m.index.sparse() || tokens <= 0) return k;
  const calibrate::GpuSpec& g = p.gpu;
  k.launch = g.launch;
  const Bytes bytes = m.index_key_per_token() * tokens + m.index_query_per_token() * decoded;
  const double flops = 2.0 * m.index.heads * m.index.head_dim * tokens;
  const Seconds whole = roofline(g, bytes, flops, g.fp8, g.gemm_efficiency);
  k.share = std::clamp(std::ceil(tokens / kTileTokens) / g.sm_count, 1.0 / g.sm_count, 1.0);
  k.work = whole / k.share;
  return k;
}

Seconds ExchangePrice::idle() const
{
  return query / query_flow.rate + after_query + kernel.time() + answer / answer_flow.rate + after_answer;
}

Bytes routed_query(const ModelSpec& m, const Profile& p, double rows)
{
  if (!compressed(m, p)) return m.query_row() * rows;
  return Bytes((rows / m.heads) * (m.q_lora_rank * 2.0 + 4.0)); // c_Q in BF16 and an int32 position per token
}

Bytes routed_answer(const ModelSpec& m, const Profile& p, double rows)
{
  if (!compressed(m, p)) return m.output_row() * rows;
  return Bytes(rows * (m.v_head_dim * 2.0 + 4.0)); // per head: the values in BF16 and an fp32 log-sum-exp
}

Kernel expansion_kernel(const ModelSpec& m, const Profile& p, double rows)
{
  Kernel k;
  if (!compressed(m, p) || rows <= 0) return k;
  // The serving step's own GEMMs for the exchange's decoded tokens: c_Q up to every head's query
  // (q_b_proj), each head's no-RoPE part absorbed into the latent (W_UK), and after the attention
  // each head's latent output up to its values (W_UV). The holder serves the same model and runs
  // these GEMMs for its own batch every step: the routed rows join them, so what they add is
  // their activations (BF16, read and written) and their FLOPs; the weights are read anyway.
  const double tokens = rows / m.heads, nope = m.qk_nope_head_dim, rank = m.kv_lora_rank;
  double bytes = 0, flops = 0;
  const auto gemm = [&](double r, double k_dim, double n_dim) {
    bytes += r * (k_dim + n_dim) * 2.0;
    flops += 2.0 * r * k_dim * n_dim;
  };
  gemm(tokens, m.q_lora_rank, m.heads * (nope + m.rope_dim));
  gemm(rows, nope, rank);
  gemm(rows, rank, m.v_head_dim);
  k.work = roofline(p.gpu, Bytes(bytes), flops, p.gpu.fp8, p.gpu.gemm_efficiency);
  return k;
}

Kernel then(const Kernel& a, const Kernel& b)
{
  Kernel k;
  k.launch = a.launch + b.launch;
  k.work = a.work + b.work;
  // Alone it takes both kernels' times; its share of the GPU is their time-weighted share.
  k.share = k.work.value() > 0 ? (a.work.value() * a.share + b.work.value() * b.share) / k.work.value() : a.share;
  return k;
}

std::string missing_for_protocol(const ModelSpec& m, const Profile& p)
{
  if (!compressed(m, p)) return "";
  const std::string keys = missing_keys({{m.q_lora_rank > 0, "q_lora_rank"},
                                         {m.qk_nope_head_dim > 0, "qk_nope_head_dim"},
                                         {m.v_head_dim > 0, "v_head_dim"}});
  if (keys.empty() && p.gpu.given()) return "";
  return "profile '" + p.name + "' routes the compressed query (dispatch.route_protocol: compressed), which needs " +
         (keys.empty() ? "the profile's gpu section (the holder's expansion GEMMs by the roofline)"
                       : "the model's " + keys + " (model '" + m.name + "' lacks them)") +
         "; give them, or route the absorbed query (engine.route_protocol: absorbed)";
}

ExchangePrice price_exchange(const ModelSpec& m, const Profile& p, const ExchangeShape& s, const PathCost& out,
                             const PathCost& back, const Options& o)
{
  ExchangePrice e;
  // Under selection the ids of the selected tokens (known from the first phase) ride along.
  e.query = routed_query(m, p, s.rows) + Bytes(s.sparse ? 4.0 * s.tokens : 0.0);
  e.answer = routed_answer(m, p, s.rows);
  e.query_flow = flow(p, out, e.query, p.route_blocks);
  e.answer_flow = flow(p, back, e.answer, p.route_blocks);
  e.after_query = probe(p, out.fabric, o.transport, e.query) + leg_latency(p, out) + p.host_overhead;
  e.kernel = then(attention_kernel(m, p, s.launches, s.rows, s.tokens, s.token_rows), expansion_kernel(m, p, s.rows));
  e.after_answer =
      leg_latency(p, back) + (o.collapsed_response ? Seconds(0) : probe(p, back.fabric, o.transport, e.answer));
  return e;
}

Seconds MovePrice::idle() const
{
  return bytes / chunk_flow.rate + after_chunk + splice;
}

ExchangePrice price_select(const ModelSpec& m, const Profile& p, const SelectShape& s, const PathCost& out,
                           const PathCost& back, const Options& o)
{
  ExchangePrice x;
  x.query = m.index_query_per_token() * s.decoded;
  x.answer = Bytes(8.0 * s.candidates); // an fp32 score and a 4 B id per candidate
  x.query_flow = flow(p, out, x.query, p.route_blocks);
  x.answer_flow = flow(p, back, x.answer, p.route_blocks);
  x.after_query = probe(p, out.fabric, o.transport, x.query) + leg_latency(p, out);
  x.kernel = index_scan_kernel(m, p, s.decoded, s.tokens);
  x.after_answer = leg_latency(p, back);
  return x;
}

MovePrice price_move(const ModelSpec& m, const Profile& p, double tokens, int runs, const PathCost& in,
                     const Options& o)
{
  MovePrice mv;
  mv.bytes = m.kv_per_token() * tokens;
  mv.chunk_flow = flow(p, in, mv.bytes, p.fetch_blocks);
  mv.after_chunk = probe(p, in.fabric, o.transport, mv.bytes) + leg_latency(p, in) + p.host_overhead;
  mv.splice = splice_time(m, p, runs, tokens, o.aligned);
  return mv;
}

EpPrice price_ep(const Profile& p, const PathCost& path, Bytes bytes, EpOp op)
{
  EpPrice e{flow(p, path, bytes, p.fetch_blocks),
            probe(p, path.fabric, core::Transport::kGpu, bytes) + leg_latency(p, path)};
  const BytesPerSec kernel = op == EpOp::kDispatch ? p.ep_nvlink_dispatch : p.ep_nvlink_combine;
  if (path.fabric == core::FabricClass::kNvlink && kernel.value() > 0) {
    e.flow.link_bound = true;
    e.flow.factor = kernel / p.fabric(path.fabric).nominal();
    e.flow.rate = path.bottleneck * e.flow.factor;
  }
  return e;
}

} // namespace xattn::sim
