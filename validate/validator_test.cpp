// Calibrate-then-validate round trips through the engine, and the failure of a deliberately wrong
// profile (exit 1 from `xattn validate --max-mape`).
#include "sim/core/atomic_file.hpp"
#include "validate/validator.hpp"

#include "calibrate/fitter.hpp"
#include "calibrate/importers.hpp"

#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sys/wait.h>
#include <unistd.h>

using namespace xattn;
using namespace xattn::validate;
namespace fs = std::filesystem;

namespace
{
fs::path temp(const std::string& name)
{
  fs::path d = fs::temp_directory_path() / ("xattn-validator-test-" + std::to_string(getpid()));
  fs::create_directories(d);
  return d / name;
}

/// Fits `m` and writes a profile extending the default one.
std::string fitted_profile(const calibrate::Measurements& m, const std::string& name,
                           int max_segments = calibrate::PiecewiseOptions{}.max_segments)
{
  calibrate::FitOptions opt;
  opt.piecewise.max_segments = max_segments;
  auto fits = calibrate::fit_measurements(m, opt);
  const fs::path p = temp(name + ".yaml");
  core::write_file_atomically(p, calibrate::render_profile(fits, {name, "h100-ndr200-ibgda", "test fit"}));
  return p.string();
}

/// A profile extending `base` with every probe latency multiplied by 10: deliberately wrong.
std::string wrong_profile(const std::string& base)
{
  const calibrate::Profile p = calibrate::load_profile(base);
  std::string text = "name: wrong\nextends: " + base + "\nfabrics:\n";
  for (const char* f : {"nvlink", "pcie", "ib-same-leaf", "ib-spine"}) {
    const auto& c = p.fabric(*core::parse_fabric(f));
    text += fmt::format("  {}:\n    probe_gpu: {}\n    probe_proxy: {}\n", f,
                        calibrate::seconds_text(10 * c.probe_gpu.value()),
                        calibrate::seconds_text(10 * c.probe_proxy.value()));
  }
  const fs::path out = temp("wrong.yaml");
  std::ofstream(out) << text;
  return out.string();
}

int cli(const std::string& args)
{
  const std::string cmd = std::string(XATTN_BINARY) + " validate " + args + " >/dev/null 2>&1";
  const int s = std::system(cmd.c_str());
  return WIFEXITED(s) ? WEXITSTATUS(s) : -1;
}

calibrate::Measurements every_other(const calibrate::Measurements& m, int parity, int stride = 1)
{
  calibrate::Measurements out = m;
  for (calibrate::Series& s : out.series) {
    s.points.clear();
    for (std::size_t i = 0; i < m.series[&s - &out.series[0]].points.size(); ++i)
      if (static_cast<int>(i % 2) == parity && (i / 2) % stride == 0)
        s.points.push_back(m.series[&s - &out.series[0]].points[i]);
  }
  return out;
}
} // namespace

TEST_CASE("validate: a profile fitted to the harness's JSON passes --max-mape, a 10x-probe profile exits 1",
          "[integration]")
{
  const std::string probe = XATTN_SOURCE_DIR "/calibrate/testdata/probe.json";
  const std::string good = fitted_profile(calibrate::import_file(probe), "fixture-fit");
  MicroRunner run(good);
  ValidationReport r = validate_measured(read_measured(probe), run);
  REQUIRE(r.points.size() == 6);
  CAPTURE(r.overall.mape);
  CHECK(r.overall.mape < 0.10);
  const std::string bad = wrong_profile(good);
  MicroRunner wrong(bad);
  CHECK(validate_measured(read_measured(probe), wrong).overall.mape > 1.0);
  const std::string out = temp("report").string();
  CHECK(cli(probe + " --profile " + good + " --max-mape 10 --out " + out) == 0);
  CHECK(fs::exists(out + "/report.md"));
  CHECK(fs::exists(out + "/points.csv"));
  CHECK(cli(probe + " --profile " + bad + " --max-mape 10 --out " + out) == 1);
  CHECK(cli(probe + " --profile no-such-profile --out " + out) == 2);
  fs::remove_all(temp("").parent_path());
}

TEST_CASE("validate: NCCL send/recv on an A100 DGX, calibrated on half, validated through the engine on the rest",
          "[long]")
{
  const fs::path file = XATTN_SHARED_DIR "/measurements/a100_dgx_nccl_send_recv.csv";
  if (!fs::exists(file)) {
    WARN("skipped: " << file << " is absent");
    return;
  }
  const calibrate::Measurements all = calibrate::import_file(file);
  const std::string profile = fitted_profile(every_other(all, 0), "nccl-even");
  // Every held-out odd size, 497 per fabric, each a run of the engine.
  MeasuredData held = from_measurements(every_other(all, 1));
  MicroRunner run(profile);
  ValidationReport r = validate_measured(held, run);
  std::cout << report_table(r, 5);
  REQUIRE(r.groups.size() == 2);
  CHECK(r.invariants_ok);
  // The profile keeps the fitted protocol segments (fabrics.<class>.transfer) and the engine
  // prices every message on them: held-out error near the data's own noise floor (predicting each
  // odd size by interpolating its measured even neighbours: 0.90% on NVLink, 1.26% on IB).
  for (const ErrorStats& g : r.groups) {
    INFO(g.group);
    CHECK(g.mape <= (g.group == "nvlink/proxy" ? 0.012 : 0.015));
  }
  // The same data with 10x probe latencies is far off, and --max-mape says so with exit 1.
  MicroRunner wrong(wrong_profile(profile));
  CHECK(validate_measured(held, wrong).overall.mape > 3 * r.overall.mape);
  // `calibrate fit --max-segments 1`: one least-relative-error line per fabric cannot follow the
  // protocol changes; it is several times further off.
  MicroRunner single(fitted_profile(every_other(all, 0), "nccl-even-1", 1));
  ValidationReport one = validate_measured(held, single);
  std::cout << "one line per fabric:\n" << report_table(one, 0);
  CHECK(one.overall.mape > 3 * r.overall.mape);
  fs::remove_all(temp("").parent_path());
}
