#include "validate/measured.hpp"

#include "sim/core/error.hpp"

#include <catch2/catch.hpp>

using namespace xattn;
using namespace xattn::validate;

TEST_CASE("validate: measured CSV rows with units, defaults and groups")
{
  const std::string text = "# a comment\n"
                           "primitive,fabric,mq,ct,holders,concurrency,latency,wire_bytes\n"
                           "route,ib-spine,256,2048,1,1,45.1us,558080\n"
                           "fetch,nvlink,,4096,2,3,3.1ms,\n"
                           "\n"
                           "local,pcie,128,1024,1,1,0.2s,\n";
  MeasuredData d = parse_measured(text, "m.csv");
  REQUIRE(d.format == "xattn-csv");
  REQUIRE(d.rows.size() == 3);
  CHECK(d.rows[0].op == Op::kRoute);
  CHECK(d.rows[0].latency_s == Approx(45.1e-6));
  CHECK(*d.rows[0].wire_bytes == 558080);
  CHECK(d.rows[0].group == "route/ib-spine");
  CHECK(d.rows[0].line == 3);
  CHECK(d.rows[1].mq == 256); // default
  CHECK(d.rows[1].holders == 2);
  CHECK(d.rows[1].concurrency == 3);
  CHECK_FALSE(d.rows[1].wire_bytes);
  CHECK(d.rows[2].line == 6);
}

TEST_CASE("validate: measured JSONL rows, transfer sizes with units")
{
  const std::string text =
      R"({"primitive": "transfer", "fabric": "ib-same-leaf", "bytes": "2KiB", "latency": "24us", "group": "g"}
{"primitive": "transfer", "fabric": "nvlink", "bytes": 4096, "latency_s": 8e-6, "transport": "proxy"}
)";
  MeasuredData d = parse_measured(text, "m.jsonl");
  REQUIRE(d.format == "xattn-jsonl");
  REQUIRE(d.rows.size() == 2);
  CHECK(d.rows[0].bytes == 2048);
  CHECK(d.rows[0].group == "g");
  CHECK(d.rows[1].latency_s == Approx(8e-6));
  CHECK(d.rows[1].transport == core::Transport::kProxy);
}

TEST_CASE("validate: bad measured rows name the file, line and column, all at once")
{
  const std::string text = "primitive,fabric,latency,colour\n"
                           "route,ib-spine,45us,red\n";
  REQUIRE_THROWS_WITH(parse_measured_csv(text, "m.csv"), Catch::Contains("m.csv:1: error: colour: unknown column"));
  const std::string bad = "primitive,fabric,ct,holders,latency\n"
                          "teleport,warp,2048,3,45\n";
  try {
    parse_measured_csv(bad, "b.csv");
    FAIL("no error");
  } catch (const core::InputError& e) {
    const std::string w = e.what();
    CHECK_THAT(w, Catch::Contains("b.csv:2:1: error: primitive: unknown primitive 'teleport'"));
    CHECK_THAT(w, Catch::Contains("b.csv:2:10: error: fabric: unknown fabric class 'warp'"));
    CHECK_THAT(w, Catch::Contains("b.csv:2:15: error: ct: ct = 2048 does not split evenly over 3 holders"));
    CHECK_THAT(w, Catch::Contains("b.csv:2:22: error: latency:"));
    CHECK_THAT(w, !Catch::Contains("give a fabric class")); // the unknown one is the problem
  }
  REQUIRE_THROWS_WITH(parse_measured_csv("primitive,fabric,bytes,latency\ntransfer,nvlink,,8us\n", "t.csv"),
                      Catch::Contains("t.csv:2:17: error: bytes: a transfer needs its size"));
}

TEST_CASE("validate: the calibration harness's probe JSON imports as transfer rows")
{
  MeasuredData d = read_measured(XATTN_SOURCE_DIR "/calibrate/testdata/probe.json");
  CHECK(d.format == "probe");
  REQUIRE(d.rows.size() == 6);
  for (const MeasuredRow& r : d.rows) {
    CHECK(r.op == Op::kTransfer);
    CHECK(*r.fabric == core::FabricClass::kNvlink);
    CHECK(r.blocks == 1); // single-block dispatch
    CHECK(r.group == "peer_sm_put_1block");
  }
  bool noted_kernel = false;
  for (const std::string& n : d.notes)
    noted_kernel = noted_kernel || n.find("mla_partial") != std::string::npos;
  CHECK(noted_kernel);
}

TEST_CASE("validate: measured rows written as CSV read back the same")
{
  MeasuredData d =
      parse_measured("primitive,fabric,mq,ct,holders,latency,wire_bytes\nroute,pcie,512,4096,2,61us,1000\n", "a");
  MeasuredData e = parse_measured(to_csv(d.rows), "b");
  REQUIRE(e.rows.size() == 1);
  CHECK(e.rows[0].mq == 512);
  CHECK(e.rows[0].ct == 4096);
  CHECK(e.rows[0].holders == 2);
  CHECK(e.rows[0].latency_s == Approx(61e-6));
  CHECK(*e.rows[0].wire_bytes == 1000);
  CHECK(*e.rows[0].fabric == core::FabricClass::kPcie);
}
