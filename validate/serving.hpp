// `xattn validate --serving FILE`: the whole serving step against DeepSeek's published throughput
// per H800 GPU at its own profile points (validate/README.md, "--serving"). Each row runs its
// phase's shipped scenario (scenarios/deepseek-profile-{decode,prefill}.yaml) with the row's sizes:
// DeepSeek-V3 on its EP group with data-parallel attention (tp 1), every request's
// context its own and resident on its GPU (no cross-instance attention: the baseline the rest of
// the product starts from), expert shares as expected (balanced routing):
//   decode:  requests_per_gpu requests of context_tokens each on every GPU, decoding together;
//            simulated tokens/s per GPU = requests_per_gpu / mean TPOT.
//   prefill: prompts of context_tokens, tokens_per_gpu of them in each iteration's token budget,
//            as many iterations' worth on every GPU as the shipped scenario holds (three);
//            simulated tokens/s per GPU = the prompt tokens of one GPU over the simulated time.
// Each point runs twice: with one micro-batch, and with two pipelined layer by layer as the
// measured points ran (instances.micro_batches, engine.granularity layer); the second is the one
// checked. The report gives each run's time per layer by part (attention, GEMMs, MoE layers, and
// of these the dispatch and the combine), so that a reader sees where the time goes.
#pragma once

#include "sim/model/confidence.hpp"
#include "validate/expert_parallel.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace xattn::validate
{

struct ServingMeasurement {
  std::string phase; ///< decode | prefill
  int ep = 0, gpus = 0;
  int tokens_per_gpu = 0;   ///< prefill: an iteration's prompt tokens on each GPU
  int requests_per_gpu = 0; ///< decode: the batch on each GPU
  int context_tokens = 0;   ///< prefill: each prompt's length; decode: each request's context
  double tokens_per_s_per_gpu = 0;
  int line = 0;
};
/// Reads the table (`#` comments; header with phase, ep, tp, gpus, tokens_per_gpu,
/// requests_per_gpu, context_tokens, tokens_per_s_per_gpu). Throws core::InputError at the file,
/// line and column of a bad row.
std::vector<ServingMeasurement> read_serving_measurements(const std::string& path);

/// Where a step's time went, per layer (the MoE parts per MoE layer), s.
struct ServingSplit {
  double step = 0;      ///< an iteration (decode: a step of every request)
  double attention = 0; ///< attention and the rest of the step outside GEMMs and MoE layers
  double gemm = 0;      ///< the model's GEMMs (prefill chunks' own compute included)
  double moe = 0;       ///< reaching the MoE layers to their results back, the group's wait included
  double dispatch = 0, combine = 0;
};

/// One run of a point: its throughput and where its time went.
struct ServingRun {
  double tokens_per_s_per_gpu = 0;
  ServingSplit per_layer;
  std::vector<double> member_tpot_s; ///< with an ensemble: each member's mean TPOT, in member order
};

/// One policy's run of a decode point whose contexts are chunks of a shared corpus.
struct SharedRun {
  std::string policy;
  double tokens_per_s_per_gpu = 0, tpot_s = 0;
  std::uint64_t route = 0, fetch = 0, local = 0, cached = 0; ///< calls off the requester's GPU, by primitive
  double wire_bytes = 0;
  /// With an ensemble: the 5-95% ranges over its members of the throughput and of its share of the
  /// baseline's, each member against the baseline's member with the same profile draw.
  sim::Quantiles tokens, share;
};

struct ServingPoint {
  ServingMeasurement measured;
  ServingRun one; ///< one micro-batch: compute, then the all-to-all
  ServingRun two; ///< two micro-batches pipelined, as the measured points ran (instances.micro_batches)
  int layers = 0, moe_layers = 0;
  /// decode, with DeepEP's table given: its pure-RDMA low-latency dispatch and combine at this EP
  /// (128 tokens a GPU, as the decode point's batch), s; 0: none.
  double deepep_dispatch_s = 0, deepep_combine_s = 0;
  /// decode, with a shared corpus asked for: its chunks, and each policy's run over it (one
  /// micro-batch, as the baseline `one`): route, fetch, local, predicate.
  std::int64_t shared_chunks = 0;
  int shared_output_tokens = 0; ///< the tokens each request of the study makes
  int shared_members = 0;       ///< the study's ensemble members (0: none)
  std::vector<SharedRun> shared;
  double dispatch_error() const { return one.per_layer.dispatch / deepep_dispatch_s - 1; }
  double combine_error() const { return one.per_layer.combine / deepep_combine_s - 1; }
  double error() const { return two.tokens_per_s_per_gpu / measured.tokens_per_s_per_gpu - 1; }
  double one_error() const { return one.tokens_per_s_per_gpu / measured.tokens_per_s_per_gpu - 1; }
};

/// The machine of DeepSeek's profile, the validation's defaults.
inline constexpr const char* kServingProfile = "h800-cx7-ibgda";
inline constexpr const char* kServingTopology = "h800-cx7-256";
struct ServingValidation {
  std::vector<ServingPoint> points;
  std::string profile, topology;
  bool invariants_ok = true;
};
/// How far a decode point's dispatch per MoE layer may be from DeepEP's at the same EP.
inline constexpr double kDispatchBound = 0.25;
/// `deepep`: DeepEP's low-latency table (read_ep_measurements), whose pure-RDMA rows each decode
/// point's dispatch and combine per MoE layer are set beside; empty: none. `keep`: a folder that
/// keeps each run's scenario as run (PHASE-epEP-mbN.yaml, to run again with `xattn run`) and
/// results (out-PHASE-epEP-mbN/); empty: a scratch folder, removed. `shared_tokens` > 0: each
/// decode point runs scenarios/deepseek-profile-shared.yaml with its sizes and a shared corpus of
/// that many tokens (whole contexts), under that scenario's policies (a study on top of the
/// baseline, not a check); with
/// `shared_members`, that study and its baseline each run an ensemble of as many profile draws.
ServingValidation validate_serving(const std::vector<ServingMeasurement>& data, const std::string& profile,
                                   const std::string& topology, const std::vector<EpMeasurement>& deepep = {},
                                   const std::string& keep = "", std::int64_t shared_tokens = 0,
                                   int shared_members = 0);
/// Every point against its measurement, then its time per layer by part, then each decode point's
/// dispatch and combine beside DeepEP's.
std::string serving_report(const ServingValidation& v, double max_error);

} // namespace xattn::validate
