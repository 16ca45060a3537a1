#include "calibrate/fitter.hpp"
#include "calibrate/importers.hpp"
#include "calibrate/profile.hpp"
#include "sim/core/atomic_file.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

using namespace xattn;
using namespace xattn::calibrate;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace
{
const std::string kData = XATTN_SOURCE_DIR "/calibrate/testdata/";

const FittedSeries& find(const std::vector<FittedSeries>& fits, const std::string& name)
{
  for (const FittedSeries& f : fits)
    if (f.name == name) return f;
  FAIL("no fit " << name);
  throw;
}
} // namespace

TEST_CASE("calibrate: a fitted probe file round-trips through load_profile")
{
  Measurements m = import_file(kData + "probe.json");
  std::vector<FittedSeries> fits = fit_measurements(m);
  std::string text = render_profile(fits, {"fixture-fit", "h100-ndr200-ibgda", "fitted from a fixture"});
  fs::path dir = fs::temp_directory_path() / "xattn_fitter_test";
  fs::create_directories(dir);
  fs::path out = dir / "fitted.yaml";
  core::write_file_atomically(out, text);
  for (const auto& entry : fs::directory_iterator(dir)) // no temporary left beside it
    CHECK(entry.path().filename().string().find(".tmp") == std::string::npos);

  Profile p = load_profile(out.string());
  CHECK(p.name == "fixture-fit");
  // The fixture was generated from known parameters (testdata/probe.json, noise-free).
  const FabricCosts& nv = p.fabric(core::FabricClass::kNvlink);
  CHECK(nv.probe_gpu.value() == Approx(8e-6).epsilon(1e-5));
  CHECK(nv.block_rate.value() == Approx(25e9).epsilon(1e-5));
  CHECK(nv.probe_proxy.value() == Approx(15e-6)); // not measured: from the base
  CHECK(nv.bandwidth.value() == Approx(376e9));   // not measured: from the base
  CHECK(p.kernel_fixed.value() == Approx(2e-6).epsilon(1e-4));
  CHECK(p.kernel_per_token.value() == Approx(0.4e-9).epsilon(1e-4));
  CHECK(p.kernel_per_token_row.value() == Approx(5e-12).epsilon(1e-4));
  CHECK(p.merge_fixed.value() == Approx(1e-6).epsilon(1e-4));
  CHECK(p.merge_per_row.value() == Approx(0.5e-9).epsilon(1e-4));
  CHECK(p.splice_fixed.value() == Approx(3e-3).epsilon(1e-4));
  CHECK(p.splice_per_token.value() == Approx(0.2e-9).epsilon(1e-3));
  CHECK(p.copy_streams == 8);
  CHECK(p.compute_concurrency == 6);
  CHECK(p.fabric(core::FabricClass::kIbSpine).probe_gpu.value() == Approx(16e-6)); // base

  REQUIRE(p.fits.size() == 6);
  for (const FitRecord& r : p.fits) {
    CHECK(r.r2 == Approx(1.0).margin(1e-6));
    CHECK(r.mape < 1e-4);
    CHECK(r.loo_mape < 1e-3);
    CHECK(r.points > 0);
  }
  CHECK(p.fits[0].name == "peer_sm_put_1block");
  CHECK(p.fits[0].sets == std::vector<std::string>{"fabrics.nvlink.probe_gpu", "fabrics.nvlink.block_rate"});
}

TEST_CASE("calibrate: a piecewise transfer fit records its breakpoints in the profile")
{
  // Two protocols: a latency-bound one up to 64 KiB, a bandwidth-bound one above.
  std::string csv = "fabric,bytes,latency,transport\n";
  for (int i = 0; i < 32; ++i) {
    double s = 1024.0 * std::pow(2.0, i / 2.0);
    double t = s < 65536 ? 6e-6 + s / 5e9 : 25e-6 + s / 45e9;
    csv += "ib-same-leaf," + std::to_string(static_cast<long long>(s)) + "," + std::to_string(t * 1e6) + "us,proxy\n";
  }
  Measurements m = import_text(csv, "two.csv");
  std::vector<FittedSeries> fits = fit_measurements(m);
  const FittedSeries& f = find(fits, "ib-same-leaf/proxy");
  REQUIRE(f.line->breakpoints.size() == 1);
  CHECK(f.line->breakpoints[0] > 46341); // between the measured sizes around 64 KiB
  CHECK(f.line->breakpoints[0] < 65536);
  fs::path out = fs::temp_directory_path() / "xattn_fitter_two.yaml";
  core::write_file_atomically(out, render_profile(fits, {"two", "h100-ndr200-ibgda", ""}));
  Profile p = load_profile(out.string());
  CHECK(p.fabric(core::FabricClass::kIbSameLeaf).probe_proxy.value() == Approx(6e-6).epsilon(1e-3));
  CHECK(p.fabric(core::FabricClass::kIbSameLeaf).bandwidth.value() == Approx(45e9).epsilon(1e-3));
  REQUIRE(p.fits.size() == 1);
  REQUIRE(p.fits[0].breakpoints_B.size() == 1);
  CHECK(p.fits[0].breakpoints_B[0] == Approx(f.line->breakpoints[0]).margin(1));
  // Both protocols are kept as the fabric's transfer curve: 6 us + s / 5 GB/s, then 25 us + s / 45 GB/s.
  const auto& curve = p.fabric(core::FabricClass::kIbSameLeaf).curve;
  REQUIRE(curve.size() == 2);
  CHECK(curve[0].from.value() == 0);
  CHECK(curve[0].latency.value() == Approx(6e-6).epsilon(1e-4));
  CHECK(curve[0].bandwidth.value() == Approx(5e9).epsilon(1e-4));
  CHECK(curve[1].from.value() == Approx(std::round(f.line->breakpoints[0])));
  CHECK(curve[1].latency.value() == Approx(25e-6).epsilon(1e-4));
  CHECK(curve[1].bandwidth.value() == Approx(45e9).epsilon(1e-4));
  CHECK(p.fabric(core::FabricClass::kIbSameLeaf).nominal().value() == Approx(45e9).epsilon(1e-4));
}

TEST_CASE("calibrate: two series setting one key is an error")
{
  std::string csv = "fabric,bytes,latency,transport\n";
  for (int i = 0; i < 8; ++i)
    csv += "nvlink," + std::to_string(1024 << i) + "," + std::to_string(10 + i) + "us,gpu\n";
  for (int i = 0; i < 8; ++i)
    csv += "nvlink," + std::to_string(1024 << i) + "," + std::to_string(11 + i) + "us,\n";
  // Different series (one with a transport, one without) both set fabrics.nvlink.bandwidth.
  CHECK_THROWS_WITH(fit_measurements(import_text(csv, "dup.csv")),
                    Contains("sets fabrics.nvlink.bandwidth, which series 'nvlink/gpu' sets already"));
}

TEST_CASE("calibrate: a series with too few sizes names itself in the error")
{
  std::string csv = "fabric,bytes,latency\npcie,1024,5us\n";
  CHECK_THROWS_WITH(fit_measurements(import_text(csv, "few.csv")), Contains("few.csv:2: error: pcie: cannot fit"));
}

TEST_CASE("calibrate: quantities are written in units the profile parser reads back")
{
  CHECK(seconds_text(16e-6) == "16us");
  CHECK(seconds_text(3.5e-3) == "3.5ms");
  CHECK(seconds_text(0.384e-9) == "384ps");
  CHECK(rate_text(25e9) == "25GBps");
  CHECK(rate_text(450.5e6) == "450.5MBps");
}
