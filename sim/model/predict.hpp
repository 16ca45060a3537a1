// `xattn predict`: the closed form for one call shape, as a library call the CLI, the validator
// and the engine's tests share.
#pragma once

#include "sim/model/cost_model.hpp"

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>

namespace xattn::sim
{

/// Inputs of one prediction, as the command line gives them (README.md, the `xattn predict` row).
struct PredictRequest {
  double mq = 256;
  double ct = 2048;
  int layers = 1;
  double reuse = 0;
  int holders = 1;
  int rails = 1;                   ///< NICs of its node the requester stripes holders over (InfiniBand)
  int ep = 1;                      ///< the requester's expert-parallel group (a re-prefill's experts spread over it)
  std::optional<int> blocks;       ///< selected contiguous runs (sparse selection); unset: dense
  bool index_on_requester = false; ///< sparse: the requester scans its own copy of the index keys
  core::Transport transport = core::Transport::kGpu;
  core::FabricClass fabric = core::FabricClass::kIbSpine;
};

struct Prediction {
  PredictRequest request;
  PathCost path;
  CallShape shape;
  CallCost per_call;
  Breakdown route, fetch, local; ///< per_call scaled by layers
  Decision decision;             ///< over 1 + reuse uses, at `layers` scale
};

/// Checks the request against the model (throws core::InputError naming the flag) and prices it.
/// `path` overrides the profile's nominal path (a topology's pair of GPUs).
Prediction predict(const ModelSpec& m, const Profile& p, const PredictRequest& r,
                   std::optional<PathCost> path = std::nullopt);

/// The `--json` document (docs/file-formats.md, "Outputs"): decision, cost_s, breakdown_s, wire_bytes,
/// break_even_reuse (null when fetch never breaks even), and the inputs.
nlohmann::json to_json(const Prediction& p, const ModelSpec& m, const Profile& prof);

/// The human table.
std::string to_table(const Prediction& p, const ModelSpec& m, const Profile& prof);

} // namespace xattn::sim
