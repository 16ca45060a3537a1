// The one home of every cost formula. A message's time on a path (the fabric's calibrated transfer
// curve, the dispatch rate of its thread blocks, the path's latency), and the pieces an attention
// call is made of: a routed exchange with one holder (query out, the holder's kernel, the partials
// back), DSA's selection (indexer queries out, the holder's scan, candidates back), a moved chunk
// (the bytes, the splice), a re-prefill, the
// requester's own attention and merge. The closed form (cost_model.hpp) adds these pieces up for
// one call; the engine runs the same pieces on the simulated network, holders and clocks, and asks
// nothing else about cost. docs/cost-path.md says which module owns what.
#pragma once

#include "calibrate/profile.hpp"
#include "sim/core/fabric.hpp"
#include "sim/model/model.hpp"
#include "sim/model/path.hpp"
#include "sim/model/serving.hpp"

#include <string>

namespace xattn::sim
{

using calibrate::Profile;
using core::BytesPerSec;
using core::Seconds;

/// The profile's nominal path for a fabric class (predict without --topology): the link at its
/// nominal rate, the probe's own wire latency.
PathCost nominal_path(const Profile& p, core::FabricClass f);

Flow flow(const Profile& p, const PathCost& path, Bytes size, int blocks);

/// Fixed time of a message of `size` bytes by `transport` on `fabric`: the probe, plus what the
/// transfer curve's segment for that size adds over its first segment.
Seconds probe(const Profile& p, core::FabricClass fabric, core::Transport transport, Bytes size);
/// Latency a leg adds to the probe on `path`: the path's beyond the probe's own measured path
/// (never negative: a shorter path is priced like the measured one).
Seconds leg_latency(const Profile& p, const PathCost& path);
/// Time for `holders` equal parallel messages of `bytes_each` through the requester's link (the
/// shared first hop), each of flow `f`: max-min gives each min(its cap, bottleneck / sharing) of
/// capacity, where the holders share the requester's lanes evenly. `latency` is the leg's.
Seconds parallel_transfer(Bytes bytes_each, int holders, const Flow& f, const PathCost& path, Seconds latency);

/// A kernel as one GPU runs it (docs/cost-path.md, "Kernels"). Each kernel is priced by the
/// roofline, max(bytes / (HBM x memory_efficiency), FLOPs / (peak x efficiency)), from the model's
/// dimensions and the profile's gpu section, unless the profile gives that kernel's measured cost
/// (Profile::measured), which then replaces it.
struct Kernel {
  Seconds launch;   ///< launch and tail: other kernels' work overlaps it
  Seconds work;     ///< alone on its GPU, at its share of it
  double share = 1; ///< the part of the GPU it occupies: concurrent kernels share the whole
  Seconds time() const { return launch + work; }
};
/// The partial-attention kernel (absorbed MLA decode, or GQA decode) of one exchange, one layer:
/// `launches` launches, `rows` query rows, over `tokens` cached tokens (summed over requests) and
/// `token_rows` (the sum over requests of tokens x query rows). A roofline kernel reads the KV its
/// rows need (ModelSpec::kv_read_per_token), occupies the SMs its tiles fill (MLA: 64 query rows x
/// 64 tokens per thread block, FlashMLA's tile, a request's rows filling whole 64-row tiles; GQA:
/// a KV head's group x 64 tokens) and does the whole GPU's roofline work in 1 / share of the time;
/// a measured one takes 1 / compute_concurrency of the GPU at its measured time.
Kernel attention_kernel(const ModelSpec& m, const Profile& p, double launches, double rows, double tokens,
                        double token_rows);
/// `attention_kernel` for `rows` rows over `tokens` tokens, one launch, alone: its time.
Seconds kernel_time(const ModelSpec& m, const Profile& p, double tokens, double rows);
/// The online-softmax merge of `partials` partial results of `rows` rows each: one launch plus
/// merge_rows_time (the per-row part, which a batched merge sums over requests).
Seconds merge_time(const ModelSpec& m, const Profile& p, double partials, double rows);
Seconds merge_rows_time(const ModelSpec& m, const Profile& p, double partials, double rows);
/// The splice of `runs` contiguous runs totalling `tokens` tokens, one layer: re-rotate the RoPE
/// dimensions of each token (read and written at HBM speed, one launch per layer) and insert each
/// run into the block table (the profile's host-side `splice.insert`, spread over the layers).
/// A run that keeps its positions (`aligned`: prefix-chained reuse) has nothing to re-rotate.
/// A measured splice (the paper's prototype) is fixed x runs + per_token x tokens, every layer.
Seconds splice_time(const ModelSpec& m, const Profile& p, double runs, double tokens, bool aligned);
/// A re-prefill of `tokens` tokens after `before` tokens of the same run (all layers) on one GPU
/// of layout `l`: prefill_price's compute (prefill.hpp), no output head (the tokens are context,
/// not a prompt's end). A measured rate (prefill.tokens_per_s, one instance) replaces it.
Seconds prefill_time(const ModelSpec& m, const Profile& p, double tokens, double before, const Layout& l);

/// What `m` lacks for `p` to price it: "" when nothing (a roofline re-prefill needs the serving
/// step's dimensions, missing_serving_keys), else the problem, for the caller to report.
std::string missing_dimensions(const ModelSpec& m, const Profile& p);
/// The same for a sparse model's selection: the indexer's scan needs the profile's gpu section.
std::string missing_for_selection(const ModelSpec& m, const Profile& p);
/// The same for the profile's route protocol: the compressed query needs the model's q_lora_rank,
/// qk_nope_head_dim and v_head_dim, and the gpu section to price the holder's expansion.
std::string missing_for_protocol(const ModelSpec& m, const Profile& p);

/// A routed exchange's query and answer for `rows` query rows (heads per decoded token), by the
/// profile's route protocol (calibrate::RouteProtocol), selected tokens' ids not included. The
/// compressed protocol is MLA's: a GQA model routes each head's query (ModelSpec::query_row) and
/// gets its output back (output_row) under either.
Bytes routed_query(const ModelSpec& m, const Profile& p, double rows);
Bytes routed_answer(const ModelSpec& m, const Profile& p, double rows);
/// Under the compressed protocol, what `rows` query rows of one layer add to the holder's GEMMs:
/// c_Q up to the heads' queries (q_b_proj), absorbed into the latent (W_UK), and the latent
/// outputs up to values (W_UV), their BF16 activations and FP8 FLOPs by the roofline, over the
/// whole GPU. The weights are not counted: the holder serves the same model and reads them for
/// its own batch every step, which the routed rows join. Nothing under the absorbed protocol.
Kernel expansion_kernel(const ModelSpec& m, const Profile& p, double rows);
/// `a` then `b` on one GPU as one kernel: both launches, both works, the time-weighted share.
Kernel then(const Kernel& a, const Kernel& b);

struct Options {
  core::Transport transport = core::Transport::kGpu;
  bool collapsed_response = true; ///< the holder's kernel sends the answer: no second probe
  bool aligned = false;           ///< moved runs keep their positions: the splice re-rotates nothing
};

/// The DSA indexer's scan on one GPU, one layer: `decoded` tokens' indexer queries against the
/// index keys of `tokens` cached tokens (summed over the queries), FP8 logits by the roofline
/// (DeepGEMM's MQA-logits kernel: keys read at HBM speed, heads x head_dim multiply-adds per
/// key and query at FP8 x gemm_efficiency), one launch, occupying the SMs its 64-token tiles
/// fill. The top-k pass over the logits is not priced.
Kernel index_scan_kernel(const ModelSpec& m, const Profile& p, double decoded, double tokens);

/// The selection's first phase with one holder, one layer, under DSA (the index keys live with
/// the KV, on the holders): each decoded token's indexer query out, the holder's scan of the keys
/// it holds of that request's context, each query's top-k candidates there (an fp32 score and a
/// 4 B id each) back; the requester merges them into the global top-k. The attention calls (the
/// second phase) follow once every holder answered.
struct SelectShape {
  double decoded = 0;    ///< indexer queries sent (one per decoded token)
  double tokens = 0;     ///< context tokens the holder scans, summed over the queries
  double candidates = 0; ///< candidates returned, summed over the queries (each min(topk, its tokens))
};

/// What travels in one routed exchange with one holder, one layer.
struct ExchangeShape {
  double rows = 0;       ///< query rows sent
  double tokens = 0;     ///< tokens the holder attends, summed over requests
  double token_rows = 0; ///< sum over requests of tokens x rows
  double launches = 1;   ///< holder kernel launches
  bool sparse = false;   ///< the selected tokens' ids (4 B each) ride along with the query
};

/// One routed exchange, one layer: query out, kernel, answer back.
struct ExchangePrice {
  Bytes query, answer;
  Flow query_flow, answer_flow;
  Seconds after_query;  ///< probe + the out leg's latency + host overhead, once the query arrived
  Kernel kernel;        ///< the holder's kernel
  Seconds after_answer; ///< the back leg's latency (and a second probe without collapsed response)
  /// Alone on an idle path: both transfers, the fixed delays and the kernel.
  Seconds idle() const;
};
ExchangePrice price_exchange(const ModelSpec& m, const Profile& p, const ExchangeShape& s, const PathCost& out,
                             const PathCost& back, const Options& o);
/// The selection's first phase with one holder, as the same round trip: its query is the
/// indexer queries, its kernel the scan, its answer the candidates (no host overhead: the
/// requester's engine sends it with the step's calls).
ExchangePrice price_select(const ModelSpec& m, const Profile& p, const SelectShape& s, const PathCost& out,
                           const PathCost& back, const Options& o);

/// One fetched piece (a chunk, or one holder's selected blocks), one layer. Under selection the
/// blocks' ids are known from the selection's first phase (price_select).
struct MovePrice {
  Bytes bytes; ///< the moved latent
  Flow chunk_flow;
  Seconds after_chunk; ///< probe + leg latency + host overhead, once the bytes arrived
  Seconds splice;      ///< re-adapting it on the requester
  /// Alone on an idle path, splice included.
  Seconds idle() const;
};
/// `tokens` moved in `runs` contiguous runs from the holder at the far end of `in` (holder to
/// requester).
MovePrice price_move(const ModelSpec& m, const Profile& p, double tokens, int runs, const PathCost& in,
                     const Options& o);

/// One expert-parallel message between two GPUs of an instance, one MoE layer: its dispatch (the
/// tokens for that GPU's experts) or its combine (their outputs back), sent by the device with
/// many thread blocks, as DeepEP's low-latency kernels do. The bytes come from sim/model/serving.hpp.
struct EpPrice {
  Flow flow;
  Seconds after; ///< probe + the leg's latency, once the last byte arrived
};
enum class EpOp { kDispatch, kCombine };
/// Over NVLink the kernel moves a GPU's bytes at the profile's expert_parallel rate (its flows
/// turn link capacity into progress at that rate over the link's nominal one); elsewhere as a
/// bulk transfer of the fabric. Device-initiated (DeepEP's kernels) whatever the scenario's KV transport.
EpPrice price_ep(const Profile& p, const PathCost& path, Bytes bytes, EpOp op);

} // namespace xattn::sim
