#include "calibrate/fitter.hpp"
#include "calibrate/importers.hpp"
#include "calibrate/profile.hpp"
#include "sim/core/atomic_file.hpp"

#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
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
  // The copy engine's bulk sweep (12 us + s / 380 GB/s): its rate and its one-segment curve.
  CHECK(nv.bandwidth.value() == Approx(380e9).epsilon(1e-5));
  REQUIRE(nv.curve.size() == 1);
  CHECK(nv.curve[0].latency.value() == Approx(12e-6).epsilon(1e-4));
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

  REQUIRE(p.fits.size() == 7);
  for (const FitRecord& r : p.fits) {
    CHECK(r.r2 == Approx(1.0).margin(1e-6));
    CHECK(r.mape < 1e-4);
    CHECK(r.loo_mape < 1e-3);
    CHECK(r.points > 0);
  }
  CHECK(p.fits[0].name == "peer_sm_put_1block");
  CHECK(p.fits[0].sets == std::vector<std::string>{"fabrics.nvlink.probe_gpu", "fabrics.nvlink.block_rate"});
}

TEST_CASE("calibrate: a table in each supported format writes its fabric's transfer curve")
{
  const std::string vidur = ",time_stats.send_recv.min,time_stats.send_recv.max,time_stats.send_recv.mean,"
                            "time_stats.send_recv.median,time_stats.send_recv.std,rank,num_workers,size,collective,"
                            "devices_per_node,max_devices_per_node\n"
                            // 10 us + s / 400 GB/s, in ms
                            "0,0,0,0,0.010003,0,0,2,1024,send_recv,2,8\n1,0,0,0,0.010164,0,0,2,65536,send_recv,2,8\n"
                            "2,0,0,0,0.012621,0,0,2,1048576,send_recv,2,8\n3,0,0,0,0.051943,0,0,2,16777216,send_recv,2,"
                            "8\n";
  const fs::path dir = fs::temp_directory_path() / "xattn_fitter_formats";
  fs::create_directories(dir);
  std::ofstream(dir / "vidur.csv") << vidur;
  struct Case {
    std::string file;
    core::FabricClass fabric; // the fabric whose curve the file measures in bulk
  };
  for (const Case& c :
       {Case{kData + "probe.json", core::FabricClass::kNvlink},
        Case{kData + "nccl_tests.json", core::FabricClass::kIbSpine},
        Case{kData + "nvbandwidth.json", core::FabricClass::kIbSpine},
        Case{kData + "nvshmem.txt", core::FabricClass::kIbSpine}, Case{kData + "plain.csv", core::FabricClass::kNvlink},
        Case{(dir / "vidur.csv").string(), core::FabricClass::kNvlink}}) {
    INFO(c.file);
    ImportOptions opt;
    opt.fabric = core::FabricClass::kIbSpine; // for the formats that do not say
    const auto fits = fit_measurements(import_file(c.file, opt));
    const fs::path out = dir / "fitted.yaml";
    core::write_file_atomically(out, render_profile(fits, {"formats", "h100-ndr200-ibgda", "each format"}));
    const Profile p = load_profile(out.string()); // the fitter's profile reads back
    const FabricCosts& f = p.fabric(c.fabric);
    REQUIRE_FALSE(f.curve.empty());
    CHECK(f.curve.front().from.value() == 0);
    // The curve gives back what was measured: each bulk point of the file, priced on its segment
    // (latency + size / rate, as written), within 6% (the plain fixture's worst point is 5.5% off).
    std::size_t priced = 0;
    for (const Series& s : import_file(c.file, opt).series) {
      if (s.measured != Measured::kTransfer || s.single_block || s.fabric != c.fabric) continue;
      for (const Point& pt : s.points) {
        const double size = pt.x[0];
        const auto seg = std::prev(std::upper_bound(
            f.curve.begin(), f.curve.end(), size, [](double x, const CurveSegment& k) { return x < k.from.value(); }));
        const double t = seg->latency.value() + size / seg->bandwidth.value();
        INFO(s.name << " at " << size << " B");
        CHECK(t == Approx(pt.t_s).epsilon(0.06));
        ++priced;
      }
    }
    CHECK(priced >= 2);
  }
  fs::remove_all(dir);
}

TEST_CASE("calibrate: one table gives one profile, byte for byte, in the plain CSV and in vidur's layout")
{
  // A protocol switch at 64 KiB with a dip, 1 us timer steps, times in ms (vidur) and us (plain).
  std::string vidur = ",time_stats.send_recv.min,time_stats.send_recv.max,time_stats.send_recv.mean,"
                      "time_stats.send_recv.median,time_stats.send_recv.std,rank,num_workers,size,collective,"
                      "devices_per_node,max_devices_per_node\n";
  std::string plain = "fabric,bytes,latency\n";
  for (int i = 0; i < 40; ++i) {
    const double size = 2048.0 * (i + 1) * (i + 1);
    const double us = std::round(size < 65536 ? 8 + size / 4e3 : 20 + size / 40e3);
    for (int dpn : {1, 2}) {
      vidur += fmt::format("{},0,0,0,{},0,0,2,{},send_recv,{},8\n", i, us / 1e3, size, dpn);
      plain += fmt::format("{},{},{}us\n", dpn == 2 ? "nvlink" : "ib-same-leaf", size, us);
    }
  }
  const ProfileHeader header{"layouts", "h100-ndr200-ibgda", "fitted by xattn calibrate fit from even.csv"};
  const std::string a = render_profile(fit_measurements(import_text(vidur, "even.csv")), header);
  const std::string b = render_profile(fit_measurements(import_text(plain, "even.csv")), header);
  CHECK(a == b);
  CHECK_THAT(a, Contains("transfer:"));
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

TEST_CASE("calibrate: the plain CSV fixture fits into a profile that reads back")
{
  // Its single-block IB rows set the one IB dispatch rate the profile keeps, for both IB classes.
  const auto fits = fit_measurements(import_file(kData + "plain.csv"));
  const fs::path out = fs::temp_directory_path() / "xattn_fitter_plain.yaml";
  core::write_file_atomically(out, render_profile(fits, {"plain", "h100-ndr200-ibgda", "fixture"}));
  const Profile p = load_profile(out.string());
  CHECK(p.fabric(core::FabricClass::kIbSpine).block_rate.value() ==
        p.fabric(core::FabricClass::kIbSameLeaf).block_rate.value());
  // The fixture's single-block rows span 1 KiB (16.04 us) to 256 KiB (26.49 us): 24.99 GB/s.
  CHECK(p.fabric(core::FabricClass::kIbSpine).block_rate.value() ==
        Approx((262144.0 - 1024) / (26.49e-6 - 16.04e-6)).epsilon(0.01));
  fs::remove(out);
}

TEST_CASE("calibrate: a series with too few sizes names itself in the error")
{
  std::string csv = "fabric,bytes,latency\npcie,1024,5us\n";
  CHECK_THROWS_WITH(fit_measurements(import_text(csv, "few.csv")),
                    Contains("few.csv: error: no series to fit (pcie/proxy: not fitted: one size measured"));
}

TEST_CASE("calibrate: quantities are written in units the profile parser reads back")
{
  CHECK(seconds_text(16e-6) == "16us");
  CHECK(seconds_text(3.5e-3) == "3.5ms");
  CHECK(seconds_text(0.384e-9) == "384ps");
  CHECK(rate_text(25e9) == "25GBps");
  CHECK(rate_text(450.5e6) == "450.5MBps");
}
