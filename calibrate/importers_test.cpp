#include "calibrate/importers.hpp"
#include "sim/core/error.hpp"

#include <catch2/catch.hpp>

using namespace xattn;
using namespace xattn::calibrate;
using Catch::Matchers::Contains;

namespace
{
const std::string kData = XATTN_SOURCE_DIR "/calibrate/testdata/";

const Series& find(const Measurements& m, const std::string& name)
{
  for (const Series& s : m.series)
    if (s.name == name) return s;
  FAIL("no series " << name);
  throw;
}

std::string error_of(const std::string& text, const std::string& name, ImportOptions opt = {})
{
  try {
    import_text(text, name, opt);
  } catch (const xattn::core::InputError& e) {
    return e.what();
  }
  return "";
}
} // namespace

TEST_CASE("calibrate: formats are detected from the content")
{
  ImportOptions nv;
  nv.fabric = core::FabricClass::kNvlink;
  CHECK(import_file(kData + "probe.json").format == "probe");
  CHECK(import_file(kData + "nccl_tests.json", nv).format == "nccl-tests");
  CHECK(import_file(kData + "nvbandwidth.json", nv).format == "nvbandwidth");
  CHECK(import_file(kData + "nvshmem.txt", nv).format == "nvshmem");
  CHECK(import_file(kData + "plain.csv").format == "csv");
  CHECK(*detect_format(",time_stats.send_recv.min,size\n") == Format::kVidur);
  CHECK_THROWS_WITH(import_text("hello\n", "x.txt"), Contains("x.txt: error: cannot tell the measurement format"));
}

TEST_CASE("calibrate: the plain CSV groups by fabric, transport and dispatch, units in cells")
{
  Measurements m = import_file(kData + "plain.csv");
  REQUIRE(m.series.size() == 2);
  const Series& ib = find(m, "ib-spine/gpu/single-block");
  CHECK(ib.fabric == core::FabricClass::kIbSpine);
  CHECK(ib.transport == core::Transport::kGpu);
  CHECK(ib.single_block);
  REQUIRE(ib.points.size() == 5);
  CHECK(ib.points[0].x[0] == 1024);
  CHECK(ib.points[0].t_s == Approx(16.04e-6));
  CHECK(ib.points[2].line == 4);
  // Empty transport cells read as host-launched, and the importer says so.
  const Series& nv = find(m, "nvlink/proxy");
  CHECK(nv.transport == core::Transport::kProxy);
  CHECK(nv.points[3].x[0] == 64.0 * 1024 * 1024);
  REQUIRE(m.notes.size() == 1);
  CHECK_THAT(m.notes[0], Contains("read as host-launched (proxy)"));
}

TEST_CASE("calibrate: vidur rows and the same rows as a plain CSV are one series")
{
  // One table, two layouts (milliseconds in vidur's, units in the plain one's): the same series,
  // name, transport and times, so that the fitter cannot tell them apart.
  const std::string vidur = ",time_stats.send_recv.min,time_stats.send_recv.max,time_stats.send_recv.mean,"
                            "time_stats.send_recv.median,time_stats.send_recv.std,rank,num_workers,size,collective,"
                            "devices_per_node,max_devices_per_node\n"
                            "0,0.01,0.02,0.015,0.078,0.001,0,2,2048,send_recv,2,8\n"
                            "1,0.01,0.02,0.015,0.097,0.001,0,2,4096,send_recv,2,8\n";
  const std::string plain = "fabric,bytes,latency\nnvlink,2048,78us\nnvlink,4KiB,0.097ms\n";
  const Measurements a = import_text(vidur, "a.csv"), b = import_text(plain, "b.csv");
  REQUIRE(a.series.size() == 1);
  REQUIRE(b.series.size() == 1);
  CHECK(a.series[0].name == "nvlink/proxy");
  CHECK(b.series[0].name == a.series[0].name);
  CHECK(b.series[0].transport == a.series[0].transport);
  CHECK(b.series[0].single_block == a.series[0].single_block);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(b.series[0].points[i].x == a.series[0].points[i].x);
    CHECK(b.series[0].points[i].t_s == Approx(a.series[0].points[i].t_s).epsilon(1e-12));
  }
}

TEST_CASE("calibrate: the plain CSV reports every bad row with its line")
{
  std::string what = error_of("fabric,bytes,latency\nnvlink,1KiB,16\nnvlnk,2KiB,3us\nnvlink,4KiB\n", "bad.csv");
  CHECK_THAT(what, Contains("bad.csv:2:13: error: latency: missing unit in '16'"));
  CHECK_THAT(what, Contains("bad.csv:3: error: fabric: unknown fabric class 'nvlnk'"));
  CHECK_THAT(what, Contains("bad.csv:4: error: expected 3 cells, got 2"));
}

TEST_CASE("calibrate: a plain CSV cell's problem names its column and key")
{
  CHECK_THAT(error_of("fabric,bytes,latency\nib-spine, -5,20us\n", "neg.csv"),
             Contains("neg.csv:2:11: error: bytes: negative value '-5'"));
  CHECK_THAT(error_of("fabric,bytes,latency\nib-spine,0,20us\n", "zero.csv"),
             Contains("zero.csv:2:10: error: bytes: must be greater than zero, got '0'"));
  CHECK_THAT(error_of("fabric,bytes,latency\nib-spine,4KiB,0s\n", "zero.csv"),
             Contains("zero.csv:2:15: error: latency: must be greater than zero, got '0s'"));
}

TEST_CASE("calibrate: nccl-tests JSON gives one series per program, times in microseconds")
{
  ImportOptions opt;
  opt.fabric = core::FabricClass::kIbSpine;
  Measurements m = import_file(kData + "nccl_tests.json", opt);
  REQUIRE(m.series.size() == 1);
  const Series& s = m.series[0];
  CHECK(s.name == "sendrecv_perf/ib-spine");
  CHECK(s.transport == core::Transport::kProxy);
  REQUIRE(s.points.size() == 6);
  CHECK(s.points[1].x[0] == 4096);
  CHECK(s.points[1].t_s == Approx(10.33e-6));
  ImportOptions none;
  none.format = Format::kNcclTests;
  CHECK_THROWS_WITH(import_file(kData + "nccl_tests.json", none), Contains("--fabric"));
}

TEST_CASE("calibrate: nvbandwidth JSON documents form a size sweep per testcase")
{
  ImportOptions opt;
  opt.fabric = core::FabricClass::kNvlink;
  Measurements m = import_file(kData + "nvbandwidth.json", opt);
  const Series& d2d = find(m, "device_to_device_memcpy_write_ce");
  CHECK(d2d.fabric == core::FabricClass::kNvlink);
  REQUIRE(d2d.points.size() == 2);
  // The median of the two measured pairs (389.5, 390.1) is the upper one: 390.1 GB/s at 64 MiB.
  CHECK(d2d.points[0].t_s == Approx(67108864 / 390.1e9));
  CHECK(d2d.points[1].t_s == Approx(1048576 / 182.0e9));
  CHECK(find(m, "host_to_device_memcpy_ce").fabric == core::FabricClass::kPcie);
  CHECK(m.notes.size() == 1); // the waived testcase
}

TEST_CASE("calibrate: NVSHMEM perftest tables and machine-readable lines")
{
  ImportOptions opt;
  opt.fabric = core::FabricClass::kIbSpine;
  Measurements m = import_file(kData + "nvshmem.txt", opt);
  const Series& lat = find(m, "shmem_put_latency/thread");
  CHECK(lat.transport == core::Transport::kGpu);
  CHECK(lat.single_block);
  REQUIRE(lat.points.size() == 5);
  CHECK(lat.points[4].t_s == Approx(5.3e-6));
  CHECK(lat.points[4].line == 9);
  const Series& bw = find(m, "shmem_put_bw/block");
  CHECK_FALSE(bw.single_block);
  CHECK(bw.points[0].t_s == Approx(1048576 / 20.5e9));
}

TEST_CASE("calibrate: the probe JSON keeps skipped probes as notes")
{
  Measurements m = import_file(kData + "probe.json");
  CHECK(m.series.size() == 7);
  REQUIRE(m.notes.size() == 1);
  CHECK_THAT(m.notes[0], Contains("gin_put_proxy: skipped by the probe: one process"));
  const Series& k = find(m, "mla_partial");
  CHECK(k.measured == Measured::kKernel);
  CHECK(k.features == std::vector<std::string>{"tokens", "rows"});
  CHECK(find(m, "peer_sm_put_1block").single_block);
}

TEST_CASE("calibrate: broken JSON points at its line")
{
  CHECK_THROWS_WITH(import_text("{\"schema\": \"xattn-probe/1\",\n \"probes\": [,]}", "p.json"),
                    Contains("p.json:2: error: invalid JSON"));
  CHECK_THROWS_WITH(import_text("{\"schema\": \"xattn-probe/1\"}", "p.json"), Contains("probes: missing required key"));
}

TEST_CASE("calibrate: vidur CSV splits intra-node and inter-node pairs")
{
  std::string csv = ",time_stats.send_recv.min,time_stats.send_recv.max,time_stats.send_recv.mean,"
                    "time_stats.send_recv.median,time_stats.send_recv.std,rank,num_workers,size,collective,"
                    "devices_per_node,max_devices_per_node\n"
                    "0,0.01,0.02,0.015,0.024,0.001,0,2,2048,send_recv,1,8\n"
                    "1,0.01,0.02,0.015,0.008,0.001,0,2,2048,send_recv,2,8\n";
  Measurements m = import_text(csv, "v.csv");
  REQUIRE(m.series.size() == 2);
  CHECK(find(m, "ib-same-leaf/proxy").points[0].t_s == Approx(24e-6));
  CHECK(find(m, "nvlink/proxy").points[0].t_s == Approx(8e-6));
  std::string bad = csv + "2,0.01,0.02,0.015,0.008,0.001,0,2,2048,all_reduce,2,8\n";
  CHECK_THROWS_WITH(import_text(bad, "v.csv"), Contains("v.csv:4: error: collective: only send_recv rows"));
}
