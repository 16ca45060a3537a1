#include "sim/core/units.hpp"

#include <catch2/catch.hpp>

using namespace xattn::core;
using Catch::Matchers::Contains;

TEST_CASE("units: decimal and binary prefixes on bytes")
{
  CHECK(parse_bytes("1B").value() == 1.0);
  CHECK(parse_bytes("1kB").value() == 1e3);
  CHECK(parse_bytes("1MB").value() == 1e6);
  CHECK(parse_bytes("1GB").value() == 1e9);
  CHECK(parse_bytes("1TB").value() == 1e12);
  CHECK(parse_bytes("1PB").value() == 1e15);
  CHECK(parse_bytes("1KiB").value() == 1024.0);
  CHECK(parse_bytes("1.5MiB").value() == 1.5 * 1048576.0);
  CHECK(parse_bytes("2GiB").value() == 2.0 * 1073741824.0);
  CHECK(parse_bytes("1TiB").value() == 1099511627776.0);
  CHECK(parse_bytes("1PiB").value() == 1125899906842624.0);
}

TEST_CASE("units: bits versus bytes")
{
  CHECK(parse_bytes("8b").value() == 1.0);
  CHECK(parse_bytes("800Gb").value() == 100e9);
  CHECK(parse_rate("200Gbps").value() == 25e9);
  CHECK(parse_rate("25GBps").value() == 25e9);
  CHECK(parse_rate("400Gb/s").value() == 50e9);
  CHECK(parse_rate("1KiBps").value() == 1024.0);
}

TEST_CASE("units: times")
{
  CHECK(parse_seconds("2s").value() == 2.0);
  CHECK(parse_seconds("3ms").value() == Approx(3e-3));
  CHECK(parse_seconds("16us").value() == Approx(16e-6));
  CHECK(parse_seconds("16\xC2\xB5s").value() == Approx(16e-6));
  CHECK(parse_seconds("900ns").value() == Approx(900e-9));
  CHECK(parse_seconds("5ps").value() == Approx(5e-12));
  CHECK(parse_seconds("1.5min").value() == 90.0);
  CHECK(parse_seconds("1h").value() == 3600.0);
  CHECK(parse_seconds("1e-3s").value() == Approx(1e-3));
  CHECK(parse_seconds("16 us").value() == Approx(16e-6));
}

TEST_CASE("units: compute rates and counts")
{
  CHECK(parse_flops("989Tflops").value() == 989e12);
  CHECK(parse_quantity("256", Dimension::kCount) == 256.0);
  CHECK(parse_quantity("0.5", Dimension::kCount) == 0.5);
}

TEST_CASE("units: every error says what is wrong")
{
  CHECK_THROWS_WITH(parse_seconds("16"), Contains("missing unit") && Contains("a time"));
  CHECK_THROWS_WITH(parse_rate("25GBs"), Contains("unknown unit 'GBs'"));
  CHECK_THROWS_WITH(parse_bytes("1KB"), Contains("unknown unit 'KB'")); // K is ambiguous: k or Ki
  CHECK_THROWS_WITH(parse_seconds("-3ms"), Contains("negative"));
  CHECK_THROWS_WITH(parse_seconds("inf"), Contains("expected a number"));
  CHECK_THROWS_WITH(parse_seconds("nan s"), Contains("expected a number"));
  CHECK_THROWS_WITH(parse_seconds("1e999s"), Contains("out of range") || Contains("expected a number"));
  CHECK_THROWS_WITH(parse_seconds(""), Contains("empty"));
  CHECK_THROWS_WITH(parse_seconds("ms"), Contains("expected a number"));
  CHECK_THROWS_WITH(parse_quantity("256us", Dimension::kCount), Contains("takes no unit"));
  CHECK_THROWS_WITH(parse_bytes("3ms"), Contains("unknown unit 'ms'"));
  CHECK_THROWS_WITH(parse_rate("25GB"), Contains("unknown unit 'GB'") && Contains("bandwidth"));
  CHECK_THROWS_WITH(parse_flops("989T"), Contains("unknown unit"));
  CHECK_THROWS_WITH(parse_seconds("1.2.3s"), Contains("unknown unit"));
}

TEST_CASE("units: cross-dimension arithmetic")
{
  // 2,359,296 B (one 2048-token chunk of bf16 latent) at 25 GB/s is 94.37 µs.
  Seconds t = Bytes(2359296.0) / BytesPerSec(25e9);
  CHECK(t.value() == Approx(94.37184e-6));
  CHECK((BytesPerSec(25e9) * Seconds(1e-3)).value() == Approx(25e6));
  CHECK((Bytes(1e6) / Seconds(1e-3)).value() == Approx(1e9));
  CHECK((Seconds(1.0) + Seconds(2.0) * 2.0).value() == 5.0);
  CHECK(Seconds(1.0) < Seconds(2.0));
}

TEST_CASE("units: formatting picks a readable prefix")
{
  CHECK(format_seconds(Seconds(38.3e-6)) == "38.3us");
  CHECK(format_seconds(Seconds(3e-3)) == "3ms");
  CHECK(format_bytes(Bytes(2359296)) == "2.359MB");
  CHECK(format_rate(BytesPerSec(25e9)) == "25GBps");
}
