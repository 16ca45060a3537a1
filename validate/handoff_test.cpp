// The KV hand-off validation (`xattn validate --handoff`) on rows worked by hand from the profile
// h800-roce-mooncake and the topology h800-roce-2: Qwen3-8B keeps 8 KV heads of 128 values, K
// and V, in BF16, over 36 layers; at tp 8 each rank holds one head, 36 x 2 x 128 x 2 B = 18 KiB a
// token, and sends it from its own GPU to its peer on the other node over its own NIC.
#include "validate/handoff.hpp"

#include "sim/core/error.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

using namespace xattn;
using namespace xattn::validate;

namespace
{
std::string table(const std::string& rows)
{
  const auto path = std::filesystem::temp_directory_path() / "xattn_handoff_test.csv";
  std::ofstream(path) << "# hand-off rows\nprompt_tokens,kv_size,transfer_ms\n" << rows;
  return path.string();
}
} // namespace

TEST_CASE("validate: the hand-off's sizes read in Mooncake's binary units, to the last printed digit")
{
  const auto rows = read_handoff_measurements(table("128,20MB,0.54\n8192,1.13GB,8.84\n"));
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].kv_bytes == 20.0 * 1024 * 1024);
  CHECK(rows[0].kv_ulp == 1024.0 * 1024);
  CHECK(rows[1].kv_bytes == Approx(1.13 * 1024 * 1024 * 1024));
  CHECK(rows[1].kv_ulp == Approx(0.01 * 1024 * 1024 * 1024));
  CHECK(rows[1].transfer_s == Approx(8.84e-3));
  CHECK(rows[1].line == 4);
}

TEST_CASE("validate: a hand-off moves whole blocks at the NIC's rate after its per-transfer costs")
{
  // 1,024 tokens and the first decoded token's slot: 65 blocks of 16, 1,040 tokens; 130 tokens:
  // 9 blocks, 144 tokens. A rank's share crosses its NIC at the profile's 21.75 GB/s (87% of
  // 200 Gb/s), then the CPU proxy's 26.22 us probe, the path's 4.0 us over the profile's 3.53 us of
  // wire, and the transfer engine's 0.392 ms post.
  const auto rows = read_handoff_measurements(table("1024,146MB,1.50\n130,,0.54\n"));
  const HandoffValidation v = validate_handoff(rows, kHandoffProfile, kHandoffTopology);
  REQUIRE(v.points.size() == 2);
  CHECK(v.invariants_ok);
  const double per_token = 36 * 2 * 128 * 2.0, fixed = 26.22e-6 + (4.0e-6 - 3.53e-6) + 0.392e-3;
  for (const auto& [point, tokens] : {std::pair{&v.points[0], 1040.0}, std::pair{&v.points[1], 144.0}}) {
    INFO(point->measured.prompt_tokens);
    CHECK(point->bytes == Approx(8 * tokens * per_token));
    CHECK(point->transfer_s == Approx(tokens * per_token / 21.75e9 + fixed).epsilon(1e-6));
  }
  // 146.25 MiB prints as "146MB": the table's figure.
  CHECK(v.points[0].size_matches());
  CHECK(v.points[0].size_error() == Approx(146.25 / 146 - 1));
  CHECK(v.points[1].size_matches()); // no size given: nothing to match
}
