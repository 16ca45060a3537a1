#include "calibrate/profile.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

using namespace xattn;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace
{
fs::path write_tmp(const std::string& name, const std::string& text)
{
  fs::path dir = fs::temp_directory_path() / "xattn_profile_test";
  fs::create_directories(dir);
  fs::path p = dir / name;
  std::ofstream(p) << text;
  return p;
}
} // namespace

TEST_CASE("profile: the default preset loads and carries the paper's constants")
{
  calibrate::Profile p = calibrate::load_profile(calibrate::kDefaultProfile);
  CHECK(p.name == "h100-ndr200-ibgda");
  const auto& ib = p.fabric(core::FabricClass::kIbSpine);
  CHECK(ib.probe_gpu.value() == Approx(16e-6));
  CHECK(ib.block_rate.value() == Approx(25e9));
  // NVLink 4.0: 450 GB/s each way on the datasheet, 376 GB/s measured one way (p2pBandwidthLatencyTest
  // on HGX H100): the effective rate prices transfers, the nominal one is the link.
  CHECK(p.fabric(core::FabricClass::kNvlink).bandwidth.value() == Approx(376e9));
  CHECK(p.fabric(core::FabricClass::kNvlink).nominal().value() == Approx(450e9));
  CHECK(p.fabric(core::FabricClass::kNvlink).curve.empty());
  // Production: every kernel by the roofline of an H100 SXM5, none measured.
  CHECK(p.gpu.sm_count == 132);
  CHECK(p.gpu.hbm.value() == Approx(3.35e12));
  CHECK(p.gpu.bf16.value() == Approx(989e12));
  CHECK(p.gpu.memory_efficiency == Approx(3000.0 / 3350).epsilon(1e-3));  // FlashMLA's 3000 GB/s
  CHECK(p.gpu.attention_efficiency == Approx(580.0 / 989).epsilon(1e-3)); // FlashMLA's 580 TFLOPS
  CHECK(p.gpu.gemm_efficiency == Approx(1520.0 / 1979).epsilon(1e-3));    // DeepGEMM's 1520 TFLOPS
  CHECK_FALSE(p.measured.kernel);
  CHECK_FALSE(p.measured.splice);
  CHECK_FALSE(p.measured.prefill);
  CHECK_FALSE(p.measured.concurrency);
  CHECK(p.copy_streams == 8);
  // The proxy probe is derived so that a 2 KB fetch is 40% faster device-initiated.
  double gpu = ib.probe_gpu.value() + 2048 / 25e9;
  double proxy = ib.probe_proxy.value() + 2048 / 25e9;
  CHECK(1.0 - gpu / proxy == Approx(0.40).margin(0.005));
}

TEST_CASE("profile: the paper's prototype is the default profile's fabric with its own measured costs")
{
  calibrate::Profile p = calibrate::load_profile(calibrate::kPaperProfile);
  CHECK(p.name == "paper-prototype");
  CHECK(p.fabric(core::FabricClass::kIbSpine).probe_gpu.value() == Approx(16e-6));
  CHECK(p.measured.kernel);
  CHECK(p.measured.merge);
  CHECK(p.measured.splice);
  CHECK(p.measured.prefill);
  CHECK(p.measured.concurrency);
  CHECK(p.splice_fixed.value() == Approx(3e-3));
  CHECK(p.compute_concurrency == 8);
  CHECK(p.prefill_tokens_per_s == Approx(5000));
}

TEST_CASE("profile: the Blackwell presets carry NVLink 5, HBM3e and NDR-400 datasheet rates and their deratings")
{
  for (const char* name : {"b200-ndr400-ibgda", "gb200-nvl72-ibgda"}) {
    INFO(name);
    calibrate::Profile p = calibrate::load_profile(name);
    CHECK(p.name == name);
    // NVLink 5: 18 links x 50 GB/s each way = 900 GB/s; effective at NVLink 4's measured 376/450.
    const auto& nv = p.fabric(core::FabricClass::kNvlink);
    CHECK(nv.nominal().value() == Approx(18 * 50e9));
    CHECK(nv.bandwidth.value() == Approx(900e9 * 376.0 / 450.0).epsilon(1e-3));
    // NDR-400: 400 Gb/s = 50 GB/s per port, 92% effective.
    for (core::FabricClass f : {core::FabricClass::kIbSpine, core::FabricClass::kIbSameLeaf}) {
      CHECK(p.fabric(f).nominal().value() == Approx(400e9 / 8));
      CHECK(p.fabric(f).bandwidth.value() == Approx(0.92 * 50e9));
    }
    // HBM3e at 8 TB/s, 148 SMs; the efficiencies and the launch are the H100's.
    CHECK(p.gpu.hbm.value() == Approx(8e12));
    CHECK(p.gpu.sm_count == 148);
    CHECK(p.gpu.memory_efficiency == Approx(0.895));
    // Inherited from the H100 profile: the paper's probe and one thread block's rate.
    CHECK(p.fabric(core::FabricClass::kIbSpine).probe_gpu.value() == Approx(16e-6));
    CHECK(p.fabric(core::FabricClass::kNvlink).block_rate.value() == Approx(25e9));
    CHECK_FALSE(p.measured.splice);
  }
  // Dense tensor peaks: 2.25 PFLOP/s BF16 and 4.5 FP8 (B200), 2.5 and 5 (GB200).
  calibrate::Profile b200 = calibrate::load_profile("b200-ndr400-ibgda");
  CHECK(b200.gpu.bf16.value() == Approx(2.25e15));
  CHECK(b200.gpu.fp8.value() == Approx(4.5e15));
  calibrate::Profile gb200 = calibrate::load_profile("gb200-nvl72-ibgda");
  CHECK(gb200.gpu.bf16.value() == Approx(2.5e15));
  CHECK(gb200.gpu.fp8.value() == Approx(5e15));
}

TEST_CASE("profile: extends overrides only what the child sets")
{
  fs::path child = write_tmp("child.yaml", "name: mine\nextends: paper-prototype\nsplice:\n  fixed: 1ms\n");
  calibrate::Profile p = calibrate::load_profile(child.string());
  CHECK(p.name == "mine");
  CHECK(p.splice_fixed.value() == Approx(1e-3));
  CHECK(p.splice_per_token.value() == Approx(0.17e-9));
  CHECK(p.fabric(core::FabricClass::kIbSpine).probe_gpu.value() == Approx(16e-6));
}

TEST_CASE("profile: a transfer curve must start at 0 B and ascend; an effective rate above nominal is an error")
{
  const std::string head = "name: c\nextends: h100-ndr200-ibgda\nfabrics:\n  nvlink:\n";
  auto load = [&](const std::string& name, const std::string& body) {
    return calibrate::load_profile(write_tmp(name, head + body).string());
  };
  calibrate::Profile ok = load("curve-ok.yaml", "    transfer:\n      - {from: 0B, latency: 8us, bandwidth: 5GBps}\n"
                                                "      - {from: 64KiB, latency: 14us, bandwidth: 300GBps}\n");
  REQUIRE(ok.fabric(core::FabricClass::kNvlink).curve.size() == 2);
  CHECK(ok.fabric(core::FabricClass::kNvlink).curve[1].from.value() == 65536);
  CHECK_THROWS_WITH(load("curve-start.yaml", "    transfer:\n      - {from: 1KiB, latency: 8us, bandwidth: 5GBps}\n"),
                    Catch::Contains("curve-start.yaml:5:15: error: fabrics.nvlink.transfer[0].from: the first segment "
                                    "must start at 0B"));
  CHECK_THROWS_WITH(load("curve-order.yaml", "    transfer:\n      - {from: 0B, latency: 8us, bandwidth: 5GBps}\n"
                                             "      - {from: 0B, latency: 9us, bandwidth: 9GBps}\n"),
                    Catch::Contains("fabrics.nvlink.transfer[1].from: segments must be in ascending order of size"));
  CHECK_THROWS_WITH(load("over.yaml", "    bandwidth: 500GBps\n"),
                    Catch::Contains("over.yaml:5:16: error: fabrics.nvlink.bandwidth: the effective rate exceeds "
                                    "nominal_bandwidth (450GBps)"));
}

TEST_CASE("profile: an extends cycle is an error")
{
  write_tmp("a.yaml", "name: a\nextends: b.yaml\n");
  fs::path b = write_tmp("b.yaml", "name: b\nextends: a.yaml\n");
  CHECK_THROWS_WITH(calibrate::load_profile(b.string()), Contains("extends: profiles extend each other in a cycle"));
}

TEST_CASE("profile: bad values point at the child's line and column")
{
  fs::path child = write_tmp("bad.yaml", "name: bad\nextends: h100-ndr200-ibgda\nholder:\n  kernel_fixd: 2us\n"
                                         "fabrics:\n  nvlink:\n    block_rate: 25GBs\n");
  std::string what;
  try {
    calibrate::load_profile(child.string());
  } catch (const core::InputError& e) {
    what = e.what();
  }
  CHECK_THAT(
      what,
      Contains("bad.yaml:4:3: error: holder.kernel_fixd: unknown key 'kernel_fixd' (did you mean 'kernel_fixed'?)"));
  CHECK_THAT(what, Contains("bad.yaml:7:17: error: fabrics.nvlink.block_rate: unknown unit 'GBs'"));
}

TEST_CASE("profile: a profile without a base must give every cost")
{
  fs::path p = write_tmp("thin.yaml", "name: thin\nprefill: {tokens_per_s: 0}\nholder: {kernel_fixed: 2us}\n");
  std::string what;
  try {
    calibrate::load_profile(p.string());
  } catch (const core::InputError& e) {
    what = e.what();
  }
  CHECK_THAT(what, Contains("fabrics.nvlink.probe_gpu: missing required key"));
  CHECK_THAT(what, Contains("prefill.tokens_per_s: must be greater than zero"));
  // Without a gpu section every kernel must be measured; a measured kernel is given whole.
  CHECK_THAT(what, Contains("splice.fixed: missing: without a gpu section (the roofline) the splice must be given"));
  CHECK_THAT(what, Contains("holder.kernel_per_token: missing: the measured attention kernel is given whole"));
  CHECK_THAT(what, Contains("merge.fixed: missing: without a gpu section"));
}

TEST_CASE("profile: a spread on a value that prices nothing, or an efficiency above 1, is an error")
{
  fs::path a = write_tmp("spread.yaml", "name: s\nextends: h100-ndr200-ibgda\nuncertainty:\n"
                                        "  splice.fixed: {relative: 0.1, source: x}\n");
  CHECK_THROWS_WITH(calibrate::load_profile(a.string()),
                    Contains("'splice.fixed' prices nothing in this profile (the roofline prices that kernel)"));
  fs::path b = write_tmp("eff.yaml", "name: e\nextends: h100-ndr200-ibgda\ngpu: {memory_efficiency: 1.2}\n");
  CHECK_THROWS_WITH(calibrate::load_profile(b.string()),
                    Contains("gpu.memory_efficiency: an efficiency is a share of the peak: at most 1"));
}

TEST_CASE("profile: unknown preset names list the known ones")
{
  CHECK_THROWS_WITH(calibrate::load_profile("h100-nope"),
                    Contains("no profile file or preset named 'h100-nope'") && Contains("h100-ndr200-ibgda"));
}
