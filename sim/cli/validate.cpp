// `xattn validate`: how far the simulator is from measurements, and whether it reproduces the paper.
//   xattn validate MEASURED [--profile P] [--topology T] [--max-mape PCT] [--out DIR]
//   xattn validate --paper [--reference FILE] [--profile P] [--topology T] [--details]
//   xattn validate --regression EXPECTED.yaml
//   xattn validate --expert-parallel DEEPEP.csv [--profile P] [--topology T] [--max-error PCT]
//   xattn validate --handoff MOONCAKE_PD.csv [--profile P] [--topology T] [--max-error PCT]
//   xattn validate --serving DEEPSEEK_PROFILE.csv [--deepep DEEPEP.csv] [--profile P] [--topology T]
//                  [--max-error PCT] [--out DIR] [--shared-corpus TOKENS [--ensemble N]]
// A thin layer over validate/ (xattn_validate). Exit 1 when a check fails (a claim, --max-mape, an
// expected value), 2 on bad input.
#include "calibrate/importers.hpp"
#include "sim/cli/command.hpp"
#include "sim/core/error.hpp"
#include "sim/core/fabric.hpp"
#include "sim/core/failure.hpp"
#include "validate/expert_parallel.hpp"
#include "validate/handoff.hpp"
#include "validate/measured.hpp"
#include "validate/paper.hpp"
#include "validate/regression.hpp"
#include "validate/serving.hpp"
#include "validate/validator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

namespace xattn::cli
{
namespace
{
struct ValidateOptions {
  std::string measured;
  std::string profile; ///< "": the default profile, or the paper's prototype with --paper
  std::string topology;
  double max_mape = -1;
  std::string out;
  std::string format = "auto";
  std::string fabric;
  std::string inter_node = "ib-same-leaf";
  bool paper = false;
  std::string reference;
  bool details = false;
  std::string regression;
  std::string expert_parallel;
  std::string handoff;
  std::string serving;
  std::string deepep;
  std::int64_t shared_corpus = 0;
  int ensemble = 0;
  double max_error = 15;
  std::size_t worst = 10;
};

int run_measured(const ValidateOptions& o)
{
  calibrate::ImportOptions imp;
  imp.format = *calibrate::parse_format(o.format);
  if (!o.fabric.empty()) imp.fabric = core::parse_fabric(o.fabric);
  imp.inter_node_fabric = *core::parse_fabric(o.inter_node);
  validate::MeasuredData data = validate::read_measured(o.measured, imp);
  validate::MicroRunner runner(o.profile.empty() ? std::string(calibrate::kDefaultProfile) : o.profile, o.topology);
  validate::ValidationReport r = validate::validate_measured(data, runner, true);
  r.topology = o.topology;
  const std::string out = o.out.empty() ? "out/validate/" + std::filesystem::path(o.measured).stem().string() : o.out;
  std::cout << validate::report_table(r, o.worst);
  std::cout << validate::write_report(r, out, o.worst) << "\nreport: " << out << "/report.md\n";
  if (o.max_mape >= 0 && 100 * r.overall.mape > o.max_mape) {
    std::cout << fmt::format("FAIL: overall MAPE {:.2f}% is above --max-mape {}%\n", 100 * r.overall.mape, o.max_mape);
    return core::code(core::ExitCode::kCheckFailed);
  }
  return core::code(r.invariants_ok ? core::ExitCode::kOk : core::ExitCode::kCheckFailed);
}

int run_paper(const ValidateOptions& o)
{
  validate::Reference ref = validate::load_reference(o.reference);
  validate::MicroRunner runner(o.profile.empty() ? std::string(calibrate::kPaperProfile) : o.profile, o.topology);
  auto results = validate::check_paper(ref, runner);
  std::cout << "xattn validate --paper: " << ref.source << "\nprofile " << runner.profile_path() << ", "
            << (o.topology.empty() ? "nominal topologies from the profile" : "topology " + o.topology) << "; "
            << runner.runs() << " engine runs\n\n";
  std::cout << validate::paper_table(results, o.details);
  for (const auto& r : results)
    if (!r.holds) return core::code(core::ExitCode::kCheckFailed);
  return 0;
}

int run_regression(const ValidateOptions& o)
{
  validate::RegressionSpec spec = validate::load_regression(o.regression);
  validate::RegressionOutcome r = validate::run_regression(spec);
  if (r.skipped) {
    std::cout << spec.scenario << ": " << r.report;
    return 77; // ctest SKIP_RETURN_CODE
  }
  std::cout << spec.scenario << ":\n" << r.report << (r.ok ? "all expected values hold\n" : "FAIL\n");
  return r.ok ? 0 : 1;
}
// Prints the judgement of a published-table validation and returns its exit code.
int judged(bool ok, const std::string& held, const std::string& failed)
{
  std::cout << (ok ? "\n" + held + "\n" : "\nFAIL: " + failed + "\n");
  return core::code(ok ? core::ExitCode::kOk : core::ExitCode::kCheckFailed);
}

int run_expert_parallel(const ValidateOptions& o)
{
  const auto data = validate::read_ep_measurements(o.expert_parallel);
  const validate::EpValidation v =
      validate::validate_expert_parallel(data, o.profile.empty() ? validate::kEpProfile : o.profile,
                                         o.topology.empty() ? validate::kEpTopology : o.topology);
  const double bound = o.max_error / 100;
  std::cout << validate::ep_report(v, bound);
  const bool ok = v.invariants_ok && std::all_of(v.points.begin(), v.points.end(), [bound](const auto& p) {
                    return std::abs(p.error()) <= bound && std::abs(p.drawn_error()) <= bound;
                  });
  return judged(ok, fmt::format("every point within {}%", o.max_error),
                fmt::format("a point off by more than {}% (or an engine invariant)", o.max_error));
}

int run_handoff(const ValidateOptions& o)
{
  const auto data = validate::read_handoff_measurements(o.handoff);
  const validate::HandoffValidation v =
      validate::validate_handoff(data, o.profile.empty() ? validate::kHandoffProfile : o.profile,
                                 o.topology.empty() ? validate::kHandoffTopology : o.topology);
  const double bound = o.max_error / 100;
  std::cout << validate::handoff_report(v, bound);
  const bool ok = v.invariants_ok && std::all_of(v.points.begin(), v.points.end(), [bound](const auto& p) {
                    return std::abs(p.error()) <= bound && p.size_matches();
                  });
  return judged(
      ok, fmt::format("every time within {}% and every size as printed", o.max_error),
      fmt::format("a time off by more than {}%, a size not the table's, or an engine invariant", o.max_error));
}

int run_serving(const ValidateOptions& o)
{
  const auto data = validate::read_serving_measurements(o.serving);
  const auto deepep =
      o.deepep.empty() ? std::vector<validate::EpMeasurement>{} : validate::read_ep_measurements(o.deepep);
  const validate::ServingValidation v = validate::validate_serving(
      data, o.profile.empty() ? validate::kServingProfile : o.profile,
      o.topology.empty() ? validate::kServingTopology : o.topology, deepep, o.out, o.shared_corpus, o.ensemble);
  const double bound = o.max_error / 100;
  std::cout << validate::serving_report(v, bound);
  const bool ok = v.invariants_ok && std::all_of(v.points.begin(), v.points.end(), [bound](const auto& p) {
                    return std::abs(p.error()) <= bound &&
                           (p.deepep_dispatch_s <= 0 || std::abs(p.dispatch_error()) <= validate::kDispatchBound);
                  });
  return judged(ok, fmt::format("every point within {}%", o.max_error),
                fmt::format("a point off by more than {}%, a decode dispatch more than {:.0f}% from DeepEP's, or an "
                            "engine invariant",
                            o.max_error, 100 * validate::kDispatchBound));
}
} // namespace

void add_validate(CLI::App& app, Action& action)
{
  auto o = std::make_shared<ValidateOptions>();
  auto* sub = app.add_subcommand("validate", "Compare the engine with measured data, the paper's figures, or a "
                                             "scenario's expected outputs");
  sub->add_option("MEASURED", o->measured,
                  "Measured data: xattn CSV/JSONL (validate/README.md) or any `calibrate fit` input format");
  sub->add_option("--profile", o->profile,
                  "Calibration profile preset name or file (default: " + std::string(calibrate::kDefaultProfile) +
                      "; with --paper, the paper's own prototype, " + std::string(calibrate::kPaperProfile) + ")");
  sub->add_option("--topology", o->topology, "Topology preset or file (default: nominal paths from the profile)");
  sub->add_option("--max-mape", o->max_mape, "Fail (exit 1) when the overall MAPE is above this many percent")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--out", o->out,
                  "Report folder (default out/validate/<MEASURED stem>); with --serving, a folder that keeps each "
                  "run's trace, scenario and results");
  sub->add_option("--format", o->format, "Measured-data format of a calibrate input (auto|probe|nccl-tests|...)")
      ->check(CLI::IsMember(calibrate::format_names()))
      ->capture_default_str();
  sub->add_option("--fabric", o->fabric, "Fabric class for formats that do not say")
      ->check(CLI::IsMember(core::fabric_names(core::FabricScope::kInNode)));
  sub->add_option("--inter-node-fabric", o->inter_node, "vidur: class of a one-rank-per-node pair")
      ->check(CLI::IsMember(core::fabric_names(core::FabricScope::kInterNode)))
      ->capture_default_str();
  sub->add_option("--worst", o->worst, "Worst points listed")->capture_default_str();
  sub->add_flag("--paper", o->paper, "Reproduce the paper's published figures (validate/reference/paper.yaml)");
  sub->add_option("--reference", o->reference, "With --paper: another reference file");
  sub->add_flag("--details", o->details, "With --paper: how each figure was obtained and the accepted range");
  sub->add_option("--regression", o->regression, "Run a scenario and check validate/regression/<name>.yaml");
  sub->add_option("--expert-parallel", o->expert_parallel,
                  "MoE dispatch and combine against DeepEP's low-latency table (table,op,ep,latency_us); profile "
                  "default " +
                      std::string(validate::kEpProfile) + ", topology default " + validate::kEpTopology);
  sub->add_option(
      "--handoff", o->handoff,
      "The prefill-to-decode KV hand-off against Mooncake's vLLM table (prompt_tokens,kv_size,transfer_ms); "
      "profile default " +
          std::string(validate::kHandoffProfile) + ", topology default " + validate::kHandoffTopology);
  sub->add_option("--serving", o->serving,
                  "The whole serving step against DeepSeek's published tokens/s per H800 GPU (phase,ep,tp,gpus,"
                  "tokens_per_gpu,requests_per_gpu,context_tokens,tokens_per_s_per_gpu); profile default " +
                      std::string(validate::kServingProfile) + ", topology default " + validate::kServingTopology);
  sub->add_option("--deepep", o->deepep,
                  "With --serving: DeepEP's low-latency table (as --expert-parallel reads it), whose pure-RDMA "
                  "dispatch and combine each decode point's are set beside");
  sub->add_option("--shared-corpus", o->shared_corpus,
                  "With --serving: each decode point again over a shared corpus of this many tokens (its contexts "
                  "drawn from it, popularity 1 / rank), under route, fetch, local and predicate")
      ->check(CLI::PositiveNumber);
  sub->add_option("--ensemble", o->ensemble,
                  "With --shared-corpus: the study and its baseline each as this many members, each a draw of the "
                  "profile's uncertainty, every policy's throughput and its share of the baseline's with a range")
      ->check(CLI::PositiveNumber);
  sub->add_option("--max-error", o->max_error,
                  "With --expert-parallel, --handoff or --serving: fail (exit 1) past this error, percent")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  on_run(sub, action, [o] {
    const int modes = !o->measured.empty() + o->paper + !o->regression.empty() + !o->expert_parallel.empty() +
                      !o->handoff.empty() + !o->serving.empty();
    if (modes != 1)
      core::fail("command line", 0, 0, "validate",
                 "give exactly one of MEASURED, --paper, --regression FILE, --expert-parallel FILE, --handoff FILE, "
                 "--serving FILE");
    if (o->serving.empty() && (!o->deepep.empty() || o->shared_corpus > 0))
      core::fail("command line", 0, 0, !o->deepep.empty() ? "--deepep" : "--shared-corpus",
                 "goes with --serving, which sets the decode points it reads against");
    if (o->ensemble > 0 && o->shared_corpus <= 0)
      core::fail("command line", 0, 0, "--ensemble", "goes with --shared-corpus: the study it gives ranges to");
    if (o->paper) return run_paper(*o);
    if (!o->expert_parallel.empty()) return run_expert_parallel(*o);
    if (!o->handoff.empty()) return run_handoff(*o);
    if (!o->serving.empty()) return run_serving(*o);
    if (!o->regression.empty()) return run_regression(*o);
    return run_measured(*o);
  });
}

} // namespace xattn::cli
