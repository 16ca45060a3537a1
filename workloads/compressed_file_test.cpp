// Compressed traces: every importer reads gzip, xz and zstd files (made by the gzip, xz and zstd
// tools: testdata/*.gz, *.xz, *.zst) as it reads the plain ones, with the same line numbers in its
// errors; the compression comes from the magic bytes; truncated and corrupt archives are
// InputErrors naming the file.
#include "workloads/compressed_file.hpp"
#include "workloads/line_reader.hpp"
#include "workloads/test_util.hpp"
#include "workloads/trace_format.hpp"

#include <catch2/catch.hpp>
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

using namespace xattn::workloads;
using namespace xattn::workloads::testing;
using Catch::Matchers::Contains;

namespace
{
std::string read_bytes(const std::string& path)
{
  return drain_text(path);
}

void check_same(const std::vector<Request>& a, const std::vector<Request>& b)
{
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].id == b[i].id);
    CHECK(a[i].arrival.value() == b[i].arrival.value());
    CHECK(a[i].session == b[i].session);
    CHECK(a[i].agent == b[i].agent);
    CHECK(a[i].parent_agent == b[i].parent_agent);
    CHECK(a[i].blocks == b[i].blocks);
    CHECK(a[i].input_tokens == b[i].input_tokens);
    CHECK(a[i].output_tokens == b[i].output_tokens);
  }
}

std::vector<Request> read_all(const std::string& path, TraceFormat f)
{
  auto src = open_trace(path, f);
  return drain(*src);
}

std::string error_of(const std::string& path, TraceFormat f)
{
  try {
    read_all(path, f);
  } catch (const xattn::core::InputError& e) {
    return e.what();
  }
  return "no error";
}

// One format: the Mooncake fixtures and one other importer's, compressed with the tool.
void check_format(const std::string& ext, Compression expected, const std::string& other, TraceFormat other_format)
{
  INFO(ext);
  CHECK(CompressedFile(fixture("mooncake_small.jsonl" + ext)).compression() == expected);
  check_same(read_all(fixture("mooncake_small.jsonl" + ext), format_named("mooncake")),
             read_all(fixture("mooncake_small.jsonl"), format_named("mooncake")));
  check_same(read_all(fixture(other + ext), other_format), read_all(fixture(other), other_format));
  CHECK(guess_format(fixture("mooncake_small.jsonl" + ext)) == format_named("mooncake"));
  // Errors point at the line of the decompressed text, as for the plain file.
  CHECK_THAT(error_of(fixture("mooncake_bad.jsonl"), format_named("mooncake")),
             Contains("mooncake_bad.jsonl:2:83: error: invalid JSON"));
  CHECK_THAT(error_of(fixture("mooncake_bad.jsonl" + ext), format_named("mooncake")),
             Contains("mooncake_bad.jsonl" + ext + ":2:83: error: invalid JSON"));
}

// A damaged copy of `name`: cut to `keep` bytes, or with bytes flipped from the middle on.
std::string damaged(const std::string& name, std::size_t keep, bool flip)
{
  std::string bytes = read_bytes(fixture(name));
  if (flip)
    for (std::size_t i = bytes.size() / 2; i < bytes.size() / 2 + 8 && i < bytes.size(); ++i)
      bytes[i] = static_cast<char>(bytes[i] ^ 0x5a);
  else
    bytes.resize(keep);
  return temp_file((flip ? "corrupt-" : "truncated-") + name, bytes);
}
} // namespace

TEST_CASE("workloads: gzip traces read like plain ones")
{
  check_format(".gz", Compression::kGzip, "azure_small.csv", format_named("azure"));
}

TEST_CASE("workloads: xz traces read like plain ones")
{
  check_format(".xz", Compression::kXz, "session_nested.json", format_named("claude-code"));
}

TEST_CASE("workloads: zstd traces read like plain ones")
{
  check_format(".zst", Compression::kZstd, "trace_v1.jsonl", format_named("xattn"));
}

TEST_CASE("workloads: the compression comes from the magic bytes, not the file name")
{
  const std::string zst_as_plain = temp_file("renamed.jsonl", read_bytes(fixture("mooncake_small.jsonl.zst")));
  const std::string plain_as_gz = temp_file("plain.jsonl.gz", read_bytes(fixture("mooncake_small.jsonl")));
  CHECK(CompressedFile(zst_as_plain).compression() == Compression::kZstd);
  CHECK(CompressedFile(plain_as_gz).compression() == Compression::kNone);
  check_same(read_all(zst_as_plain, format_named("mooncake")), read_all(plain_as_gz, format_named("mooncake")));
  CHECK(read_all(temp_file("tiny.jsonl", "{\"timestamp\":1,\"input_length\":1,\"output_length\":1,\"hash_ids\":[]}"),
                 format_named("mooncake"))
            .size() == 1); // a file shorter than the longest magic number
  CHECK_THROWS_WITH(CompressedFile(temp_file("t.jsonl.bz2", "BZh91AY&SY\x01\x02")),
                    Contains("t.jsonl.bz2: error: bzip2-compressed file"));
  CHECK_THROWS_WITH(CompressedFile(temp_file("t.zip", std::string("PK\x03\x04\x14\x00", 6))),
                    Contains("t.zip: error: zip archive"));
}

TEST_CASE("workloads: a truncated archive is an input error naming the file")
{
  for (const auto& [ext, name] : {std::pair{".gz", "gzip"}, std::pair{".xz", "xz"}, std::pair{".zst", "zstd"}}) {
    INFO(ext);
    const std::string full = read_bytes(fixture("mooncake_small.jsonl" + std::string(ext)));
    for (std::size_t keep : {std::size_t{6}, full.size() / 2, full.size() - 1}) {
      const std::string path = damaged("mooncake_small.jsonl" + std::string(ext), keep, false);
      CHECK_THAT(error_of(path, format_named("mooncake")),
                 Contains(path + ": error: truncated " + name + " archive: the file ends inside the compressed data"));
    }
  }
}

TEST_CASE("workloads: a corrupt archive is an input error naming the file")
{
  for (const auto& [ext, name] : {std::pair{".gz", "gzip"}, std::pair{".xz", "xz"}, std::pair{".zst", "zstd"}}) {
    INFO(ext);
    const std::string path = damaged("mooncake_small.jsonl" + std::string(ext), 0, true);
    CHECK_THAT(error_of(path, format_named("mooncake")), Contains(path + ": error: corrupt " + name + " archive: "));
  }
}

namespace
{
// Compressors (the libraries' one-shot calls) for streams larger than every buffer on the way.
std::string gzip_bytes(const std::string& text)
{
  z_stream z{};
  REQUIRE(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&z, text.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string xz_bytes(const std::string& text)
{
  std::string out(lzma_stream_buffer_bound(text.size()), '\0');
  std::size_t pos = 0;
  REQUIRE(lzma_easy_buffer_encode(1, LZMA_CHECK_CRC64, nullptr, reinterpret_cast<const uint8_t*>(text.data()),
                                  text.size(), reinterpret_cast<uint8_t*>(out.data()), &pos, out.size()) == LZMA_OK);
  out.resize(pos);
  return out;
}

std::string zstd_bytes(const std::string& text)
{
  std::string out(ZSTD_compressBound(text.size()), '\0');
  const std::size_t n = ZSTD_compress(out.data(), out.size(), text.data(), text.size(), 3);
  REQUIRE_FALSE(ZSTD_isError(n));
  out.resize(n);
  return out;
}
} // namespace

TEST_CASE("workloads: long compressed streams, and concatenated ones, read whole and in order")
{
  // 40,000 Mooncake lines (about 3.5 MB: many input buffers, several line buffers), the last one bad.
  std::string first, second;
  constexpr int kLines = 40000;
  for (int i = 0; i < kLines; ++i) {
    std::string line =
        "{\"timestamp\": " + std::to_string(i) + ", \"input_length\": " + std::to_string(512 * (i % 7 + 1)) +
        ", \"output_length\": " + std::to_string(i % 13 + 1) + ", \"hash_ids\": [" + std::to_string(i) + "]}\n";
    if (i == kLines - 1) line = "{\"timestamp\": 1e9, \"input_length\": -1}\n";
    (i < kLines / 2 ? first : second) += line;
  }
  using Pack = std::string (*)(const std::string&);
  for (const auto& [ext, pack] :
       {std::pair<const char*, Pack>{".gz", gzip_bytes}, std::pair<const char*, Pack>{".xz", xz_bytes},
        std::pair<const char*, Pack>{".zst", zstd_bytes}}) {
    INFO(ext);
    // Two streams back to back (gzip members, xz streams, zstd frames), as `cat a.gz b.gz` makes.
    const std::string path = temp_file(std::string("long.jsonl") + ext, pack(first) + pack(second));
    LineReader lines(path);
    std::string_view line;
    std::int64_t n = 0;
    std::string last;
    while (lines.next(line)) {
      ++n;
      last = std::string(line);
    }
    CHECK(n == kLines);
    CHECK(last == "{\"timestamp\": 1e9, \"input_length\": -1}");
    CHECK(lines.line_number() == kLines);
    CHECK_THAT(error_of(path, format_named("mooncake")),
               Contains(path + ":40000: error: input_length: expected a non-negative integer (tokens), got -1"));
  }
}
