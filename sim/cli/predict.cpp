// `xattn predict`: prices one attention call shape in closed form (docs/cost-path.md).
#include "sim/cli/command.hpp"
#include "sim/core/fabric.hpp"
#include "sim/core/resources.hpp"
#include "sim/model/confidence.hpp"
#include "sim/model/pricing.hpp"
#include "sim/model/sweep.hpp"
#include "topologies/topology.hpp"

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

namespace xattn::cli
{
namespace
{
struct PredictOptions {
  std::string model = "deepseek-v3";
  std::string profile = std::string(calibrate::kDefaultProfile);
  std::string fabric = "ib-spine";
  std::string transport = "gpu";
  std::string sweep;
  std::string topology;
  int blocks = 0;
  int draws = 2000;
  bool json = false;
  sim::PredictRequest req;
};
} // namespace

void add_predict(CLI::App& app, Action& action)
{
  auto o = std::make_shared<PredictOptions>();
  auto* sub = app.add_subcommand("predict", "Price route, fetch and local for one attention call in closed form");
  sub->add_option("--model", o->model, "Model preset name or file")->capture_default_str();
  sub->add_option("--profile", o->profile, "Calibration profile preset name or file")->capture_default_str();
  sub->add_option("--fabric", o->fabric, "Fabric class between requester and holder")
      ->check(CLI::IsMember(core::fabric_names()))
      ->capture_default_str();
  sub->add_option("--mq", o->req.mq, "Query rows M_q (heads x query tokens)")->capture_default_str();
  sub->add_option("--ct", o->req.ct, "Chunk size c_t in tokens")->capture_default_str();
  sub->add_option("--layers", o->req.layers, "Layers priced (1: one attention call; the model's count: a step)")
      ->capture_default_str();
  sub->add_option("--reuse", o->req.reuse, "Expected later calls that attend the same tokens")->capture_default_str();
  sub->add_option("--holders", o->req.holders, "Holders concerned (one chunk each, in parallel)")
      ->capture_default_str();
  sub->add_option("--ep", o->req.ep,
                  "Expert-parallel GPUs of the requester's group: a re-prefill's routed experts spread over them")
      ->capture_default_str();
  sub->add_option("--rails", o->req.rails,
                  "NICs of its node the requester stripes holders over, rail-matched (InfiniBand; as "
                  "engine.requester_nics: node)")
      ->capture_default_str();
  sub->add_option("--blocks", o->blocks, "Sparse selection: top-k tokens in this many contiguous runs");
  sub->add_flag("--index-on-requester", o->req.index_on_requester,
                "Sparse selection: the requester scans its own copy of the index keys (as selection.index_keys: "
                "requester), no exchange with the holders");
  sub->add_option("--transport", o->transport, "Dispatch: gpu (device-initiated) or proxy (CPU proxy)")
      ->check(CLI::IsMember({"gpu", "proxy"}))
      ->capture_default_str();
  sub->add_option("--sweep", o->sweep,
                  "Sweep one variable and print the crossover: VAR=FROM:TO, VAR in mq ct holders reuse");
  sub->add_option("--topology", o->topology,
                  "Price the first GPU pair of this fabric class in a topology (its path's bottleneck and latency)");
  sub->add_option("--draws", o->draws,
                  "Profiles drawn from the profile's uncertainty for the intervals, 0 (none) to 1000000")
      ->check(CLI::Range(0, 1000000).description(""))
      ->capture_default_str();
  sub->add_flag("--json", o->json, "Print JSON instead of a table");
  on_run(sub, action, [o, sub] {
    sim::ModelSpec model = sim::load_model(o->model);
    calibrate::Profile profile = calibrate::load_profile(o->profile);
    if (std::string missing = sim::missing_dimensions(model, profile); !missing.empty())
      core::fail("command line", 0, 0, "--model", missing);
    if (std::string missing = sim::missing_for_protocol(model, profile); !missing.empty())
      core::fail("command line", 0, 0, "--model", missing);
    sim::PredictRequest req = o->req;
    req.fabric = *core::parse_fabric(o->fabric);
    req.transport = o->transport == "gpu" ? core::Transport::kGpu : core::Transport::kProxy;
    if (sub->count("--blocks") > 0) req.blocks = o->blocks;
    if (std::string missing = sim::missing_for_selection(model, profile); req.blocks > 0 && !missing.empty())
      core::fail("command line", 0, 0, "--blocks", missing);
    std::optional<sim::PathCost> path;
    if (!o->topology.empty()) {
      auto file = core::resolve_preset(o->topology, "topologies");
      if (!file)
        core::fail("command line", 0, 0, "--topology", core::no_preset_message("topology", o->topology, "topologies"));
      topo::Topology t = topo::load_topology(*file);
      for (topo::GpuId b = 0; b < t.gpu_count() && !path; ++b)
        if (t.fabric_class(0, b) == req.fabric) {
          topo::Path p = t.path(0, b);
          path = sim::PathCost{p.fabric, p.bottleneck, p.latency};
        }
      if (!path)
        core::fail("command line", 0, 0, "--fabric",
                   "topology '" + t.name() + "' has no GPU pair of class " + o->fabric);
    }
    if (!o->sweep.empty()) {
      sim::SweepResult r = sim::sweep(model, profile, req, sim::parse_sweep(o->sweep), path);
      std::cout << (o->json ? sim::to_json(r).dump(2) + "\n" : sim::to_table(r));
      return 0;
    }
    sim::Prediction p = sim::predict(model, profile, req, path);
    const sim::PredictionSpread s = sim::predict_spread(model, profile, req, path, o->draws);
    if (o->json) {
      nlohmann::json j = sim::to_json(p, model, profile);
      sim::add_spread(j, s);
      std::cout << j.dump(2) << "\n";
    } else {
      std::cout << sim::to_table(p, model, profile) << sim::spread_table(s, p);
    }
    return 0;
  });
}

} // namespace xattn::cli
