// `xattn predict`: prices one attention call shape in closed form (DESIGN.md §4).
#include "sim/cli/command.hpp"
#include "sim/model/sweep.hpp"

#include <iostream>
#include <memory>

namespace xattn::cli {
namespace {
struct PredictOptions {
  std::string model   = "deepseek-v3";
  std::string profile = std::string(calibrate::kDefaultProfile);
  std::string fabric  = "ib-spine";
  std::string transport = "gpu";
  std::string sweep;
  int blocks = 0;
  bool json  = false;
  sim::PredictRequest req;
};
} // namespace

void add_predict(CLI::App& app, Action& action)
{
  auto o   = std::make_shared<PredictOptions>();
  auto* sub = app.add_subcommand("predict", "Price route, fetch and local for one attention call in closed form");
  sub->add_option("--model", o->model, "Model preset name or file")->capture_default_str();
  sub->add_option("--profile", o->profile, "Calibration profile preset name or file")->capture_default_str();
  sub->add_option("--fabric", o->fabric, "Fabric class between requester and holder")
      ->check(CLI::IsMember({"same-gpu", "nvlink", "pcie", "ib-same-leaf", "ib-spine"}))
      ->capture_default_str();
  sub->add_option("--mq", o->req.mq, "Query rows M_q (heads x query tokens)")->capture_default_str();
  sub->add_option("--ct", o->req.ct, "Chunk size c_t in tokens")->capture_default_str();
  sub->add_option("--layers", o->req.layers, "Layers priced (1: one attention call; the model's count: a step)")
      ->capture_default_str();
  sub->add_option("--reuse", o->req.reuse, "Expected later calls that attend the same tokens")->capture_default_str();
  sub->add_option("--holders", o->req.holders, "Holders concerned (one chunk each, in parallel)")->capture_default_str();
  sub->add_option("--blocks", o->blocks, "Sparse selection: top-k tokens in this many contiguous runs");
  sub->add_option("--transport", o->transport, "Dispatch: gpu (device-initiated) or proxy (CPU proxy)")
      ->check(CLI::IsMember({"gpu", "proxy"}))
      ->capture_default_str();
  sub->add_option("--sweep", o->sweep, "Sweep one variable and print the crossover: VAR=FROM:TO, VAR in mq ct holders reuse");
  sub->add_flag("--json", o->json, "Print JSON instead of a table");
  on_run(sub, action, [o, sub] {
    sim::ModelSpec model       = sim::load_model(o->model);
    calibrate::Profile profile = calibrate::load_profile(o->profile);
    sim::PredictRequest req    = o->req;
    req.fabric                 = *core::parse_fabric(o->fabric);
    req.transport              = o->transport == "gpu" ? core::Transport::kGpu : core::Transport::kProxy;
    if (sub->count("--blocks") > 0)
      req.blocks = o->blocks;
    if (!o->sweep.empty()) {
      sim::SweepResult r = sim::sweep(model, profile, req, sim::parse_sweep(o->sweep));
      std::cout << (o->json ? sim::to_json(r).dump(2) + "\n" : sim::to_table(r));
      return 0;
    }
    sim::Prediction p = sim::predict(model, profile, req);
    std::cout << (o->json ? sim::to_json(p, model, profile).dump(2) + "\n" : sim::to_table(p, model, profile));
    return 0;
  });
}

} // namespace xattn::cli
