// `xattn calibrate fit MEASUREMENTS... --out PROFILE.yaml`: reads probe or tool outputs, fits the
// cost model's constants, writes a profile that extends a base for what was not measured
// (calibrate/README.md). A thin layer over calibrate/fitter.hpp.
// `xattn calibrate check MEASURED`: fits half of a file, runs the other half through the engine and
// sets the error beside the data's own noise floor (validate/check.hpp); exit 1 above the limit.
#include "calibrate/fitter.hpp"
#include "calibrate/importers.hpp"
#include "calibrate/profile.hpp"
#include "sim/cli/command.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/error.hpp"
#include "sim/core/fabric.hpp"
#include "sim/core/failure.hpp"
#include "validate/check.hpp"
#include "workloads/compressed_file.hpp"

#include <cstdio>
#include <iostream>
#include <memory>

namespace xattn::cli
{
namespace
{
struct CalibrateOptions {
  // check
  std::string measured;
  std::string split = "parity";
  std::uint64_t seed = 1;
  double max_over_floor = validate::CheckOptions{}.max_over_floor;
  std::size_t worst = 10;
  // fit and check
  std::vector<std::string> inputs;
  std::string out;
  std::string base = std::string(calibrate::kDefaultProfile);
  std::string name;
  std::string format = "auto";
  std::string fabric;
  std::string inter_node = "ib-same-leaf";
  int max_segments = calibrate::PiecewiseOptions{}.max_segments;
};

calibrate::ImportOptions import_options(const CalibrateOptions& o)
{
  calibrate::ImportOptions imp;
  imp.format = *calibrate::parse_format(o.format);
  if (!o.fabric.empty()) imp.fabric = core::parse_fabric(o.fabric);
  imp.inter_node_fabric = *core::parse_fabric(o.inter_node);
  return imp;
}

// A measurement file, compressed (gzip, xz, zstd) or not.
calibrate::Measurements import(const std::string& path, const calibrate::ImportOptions& opt)
{
  if (std::filesystem::is_directory(path)) core::fail(path, 0, 0, "", "cannot open measurement file");
  return calibrate::import_text(workloads::read_whole_file(path), path, opt);
}

int run_check(const CalibrateOptions& o)
{
  const calibrate::Measurements m = import(o.measured, import_options(o));
  for (const std::string& note : m.notes)
    std::cerr << o.measured << ": note: " << note << "\n";
  validate::CheckOptions opt;
  opt.split = o.split == "random" ? validate::Split::kRandom : validate::Split::kParity;
  opt.seed = o.seed;
  opt.max_over_floor = o.max_over_floor;
  opt.base = o.base;
  opt.fit.piecewise.max_segments = o.max_segments;
  const std::string out = o.out.empty() ? "out/check/" + std::filesystem::path(o.measured).stem().string() : o.out;
  std::filesystem::create_directories(out);
  // The fitted half's profile, under a temporary name while the engine reads it.
  const std::filesystem::path tmp = std::filesystem::path(out) / ".profile.check.yaml";
  validate::CheckReport r;
  try {
    r = validate::check_calibration(m, opt, tmp.string(), true);
  } catch (...) {
    std::filesystem::remove(tmp);
    throw;
  }
  std::filesystem::rename(tmp, std::filesystem::path(out) / "profile.yaml");
  const std::string table = validate::check_table(r, o.max_over_floor, o.worst);
  std::cout << table;
  std::cout << validate::write_report(r.validation, out, o.worst, table) << "\nreport: " << out
            << "/report.md, the fitted half's profile: " << out << "/profile.yaml\n";
  if (!r.validation.invariants_ok) std::cout << "FAIL: an engine invariant failed in a micro-scenario\n";
  return core::code(r.ok ? core::ExitCode::kOk : core::ExitCode::kCheckFailed);
}

int run_fit(const CalibrateOptions& o)
{
  const calibrate::ImportOptions imp = import_options(o);
  calibrate::FitOptions fit;
  fit.piecewise.max_segments = o.max_segments;

  std::vector<calibrate::FittedSeries> fits;
  std::string sources;
  for (const std::string& in : o.inputs) {
    calibrate::Measurements m = import(in, imp);
    for (const std::string& note : m.notes)
      std::cerr << in << ": note: " << note << "\n";
    std::vector<std::string> skipped;
    for (calibrate::FittedSeries& f : calibrate::fit_measurements(m, fit, &skipped))
      fits.push_back(std::move(f));
    for (const std::string& note : skipped)
      std::cerr << in << ": note: " << note << "\n";
    // The file's name only: the profile depends on the data, not on where or in which layout it lay.
    sources += (sources.empty() ? "" : ", ") + std::filesystem::path(in).filename().string();
  }
  // Keys set by series of different files must not collide either.
  for (std::size_t i = 0; i < fits.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      for (const auto& a : fits[i].sets)
        for (const auto& b : fits[j].sets)
          if (a.first == b.first)
            core::fail("command line", 0, 0, "MEASUREMENTS",
                       "series '" + fits[i].name + "' and '" + fits[j].name + "' both set " + a.first);

  std::string name = o.name.empty() ? std::filesystem::path(o.out).stem().string() : o.name;
  std::string text = calibrate::render_profile(fits, {name, o.base, "fitted by xattn calibrate fit from " + sources});
  // Check what we are about to write reads back (and that the base resolves) before touching --out.
  std::filesystem::path tmp = o.out + ".check.yaml";
  core::write_file_atomically(tmp, text, "--out");
  try {
    (void)calibrate::load_profile(tmp.string());
  } catch (const core::InputError& e) {
    // A profile the fitter wrote and its own reader refuses is xattn's fault, not the input's: say
    // so, and name the file the user asked for, not the temporary one.
    std::filesystem::remove(tmp);
    std::string what = e.what();
    for (auto at = what.find(tmp.string()); at != std::string::npos; at = what.find(tmp.string(), at))
      what.replace(at, tmp.string().size(), o.out);
    throw core::InternalError("the fitted profile does not read back, so " + o.out + " was not written: " + what);
  } catch (...) {
    std::filesystem::remove(tmp);
    throw;
  }
  std::filesystem::remove(tmp);
  core::write_file_atomically(o.out, text, "--out");

  for (const calibrate::FittedSeries& f : fits) {
    std::fprintf(stdout, "%-32s %-14s n=%-4zu R2=%.4f MAPE=%.2f%% max=%.2f%% LOO-MAPE=%.2f%%  %s\n", f.name.c_str(),
                 std::string(calibrate::to_string(f.measured)).c_str(), f.quality.points, f.quality.r2,
                 100 * f.quality.mape, 100 * f.quality.max_error, 100 * f.quality.loo_mape, f.model.c_str());
    for (const auto& [key, value] : f.sets)
      std::fprintf(stdout, "    %s = %s\n", key.c_str(), value.c_str());
    for (const std::string& note : f.notes)
      std::fprintf(stdout, "    note: %s\n", note.c_str());
  }
  std::fprintf(stdout, "wrote %s\n", o.out.c_str());
  return 0;
}
} // namespace

namespace
{
// How a measurement file is read and fitted: the options `fit` and `check` share.
void add_reading(CLI::App* sub, CalibrateOptions& o)
{
  sub->add_option("--format", o.format, "Input format")
      ->check(CLI::IsMember(calibrate::format_names()))
      ->capture_default_str();
  sub->add_option("--fabric", o.fabric, "Fabric class for formats that do not record it")
      ->check(CLI::IsMember(core::fabric_names()));
  sub->add_option("--inter-node-fabric", o.inter_node, "vidur: class of one-rank-per-node pairs")
      ->check(CLI::IsMember(core::fabric_names(core::FabricScope::kInterNode)))
      ->capture_default_str();
  sub->add_option("--max-segments", o.max_segments, "Most segments of a piecewise transfer fit, 1 to 64")
      ->check(CLI::Range(1, 64).description(""))
      ->capture_default_str();
}
} // namespace

void add_calibrate(CLI::App& app, Action& action)
{
  auto o = std::make_shared<CalibrateOptions>();
  auto* cal = app.add_subcommand("calibrate", "Fit calibration profiles from measurements");
  cal->require_subcommand(1);
  auto* fit = cal->add_subcommand("fit", "Fit a calibration profile from probe or tool outputs");
  fit->add_option("MEASUREMENTS", o->inputs,
                  "xattn_probe JSON, nccl-tests -J JSON, nvbandwidth -j JSON, NVSHMEM perftest output, "
                  "fabric,bytes,latency CSV or vidur send_recv CSV")
      ->required()
      ->check(CLI::ExistingFile);
  fit->add_option("--out", o->out, "Profile YAML to write (atomically)")->required();
  fit->add_option("--base", o->base, "Profile the result extends for what was not measured")->capture_default_str();
  fit->add_option("--name", o->name, "Profile name (default: the --out file's stem)");
  add_reading(fit, *o);
  on_run(fit, action, [o] { return run_fit(*o); });

  auto* check = cal->add_subcommand("check", "Fit half of a measured table, run the other half through the engine, "
                                             "and compare the error with the data's own noise floor");
  check->add_option("MEASURED", o->measured, "A measurement file in any format `calibrate fit` reads")
      ->required()
      ->check(CLI::ExistingFile);
  check->add_option("--split", o->split, "Which half is fitted: parity (alternate sizes) or random (a seeded half)")
      ->check(CLI::IsMember({"parity", "random"}))
      ->capture_default_str();
  check->add_option("--seed", o->seed, "Seed of --split random")->capture_default_str();
  check
      ->add_option("--max-over-floor", o->max_over_floor,
                   "Fail (exit 1) when a group's MAPE is above this many times its noise floor")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  check->add_option("--out", o->out, "Report folder (default out/check/<MEASURED stem>)");
  check->add_option("--base", o->base, "Profile the fitted half extends")->capture_default_str();
  add_reading(check, *o);
  check->add_option("--worst", o->worst, "Worst points listed")->capture_default_str();
  on_run(check, action, [o] { return run_check(*o); });
}

} // namespace xattn::cli
