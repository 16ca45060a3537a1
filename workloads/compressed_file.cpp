#include "workloads/compressed_file.hpp"

#include "sim/core/error.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace xattn::workloads
{
namespace
{
constexpr std::size_t kInputBuffer = 1 << 16;

bool starts_with(std::string_view head, std::string_view magic)
{
  return head.substr(0, magic.size()) == magic;
}
} // namespace

std::string_view compression_name(Compression c)
{
  switch (c) {
  case Compression::kNone:
    return "none";
  case Compression::kGzip:
    return "gzip";
  case Compression::kXz:
    return "xz";
  case Compression::kZstd:
    return "zstd";
  }
  return "?";
}

Compression sniff_compression(std::string_view head, const std::string& path)
{
  using namespace std::string_view_literals;
  if (starts_with(head, "\x1f\x8b"sv)) return Compression::kGzip;
  if (starts_with(head, "\xfd"
                        "7zXZ\0"sv))
    return Compression::kXz;
  if (starts_with(head, "\x28\xb5\x2f\xfd"sv)) return Compression::kZstd;
  // Archives we recognise but do not read: say so rather than parse their bytes as text.
  if (head.size() >= 4 && starts_with(head, "BZh"sv) && head[3] >= '1' && head[3] <= '9')
    core::fail(path, 0, 0, "", "bzip2-compressed file: xattn reads gzip, xz and zstd (recompress it, e.g. `zstd`)");
  if (starts_with(head, "PK\x03\x04"sv))
    core::fail(path, 0, 0, "", "zip archive: xattn reads single files compressed with gzip, xz or zstd (unzip it)");
  return Compression::kNone;
}

CompressedFile::CompressedFile(const std::string& path)
    : path_(path), file_(std::fopen(path.c_str(), "rb")), in_(kInputBuffer)
{
  if (!file_) core::fail(path, 0, 0, "", std::string("cannot open file: ") + std::strerror(errno));
  while (in_end_ < 6 && !in_eof_)
    refill();
  compression_ = sniff_compression(
      std::string_view(reinterpret_cast<const char*>(in_.data()), std::min<std::size_t>(in_end_, 6)), path_);
  if (compression_ != Compression::kNone) decoder_ = make_decoder(compression_);
}

CompressedFile::~CompressedFile() = default;

// Keeps the unread input at the front and reads more behind it; sets in_eof_ at the end of the file.
bool CompressedFile::refill()
{
  if (in_pos_ > 0) {
    std::memmove(in_.data(), in_.data() + in_pos_, in_end_ - in_pos_);
    in_end_ -= in_pos_;
    in_pos_ = 0;
  }
  const std::size_t got = std::fread(in_.data() + in_end_, 1, in_.size() - in_end_, file_.get());
  if (got < in_.size() - in_end_) {
    if (std::ferror(file_.get())) core::fail(path_, 0, 0, "", std::string("read error: ") + std::strerror(errno));
    in_eof_ = true;
  }
  in_end_ += got;
  compressed_read_ += got;
  return got > 0;
}

void CompressedFile::bad_archive(const std::string& what) const
{
  core::fail(path_, 0, 0, "", what);
}

std::size_t CompressedFile::read(char* out, std::size_t size)
{
  if (done_ || size == 0) return 0;
  auto* dst = reinterpret_cast<unsigned char*>(out);
  if (!decoder_) { // plain: what the sniffing read first, then straight from the file
    if (in_pos_ == in_end_ && !in_eof_) refill();
    const std::size_t n = std::min(size, in_end_ - in_pos_);
    std::memcpy(dst, in_.data() + in_pos_, n);
    in_pos_ += n;
    if (n == 0) done_ = true;
    return n;
  }
  for (;;) {
    if (in_pos_ == in_end_ && !in_eof_) refill();
    const unsigned char* next = in_.data() + in_pos_;
    std::size_t left = in_end_ - in_pos_;
    const std::size_t before = left;
    std::size_t got = 0;
    try {
      got = decoder_->decode(next, left, dst, size, in_eof_);
    } catch (const DecodeError& e) {
      bad_archive("corrupt " + std::string(compression_name(compression_)) + " archive: " + e.why);
    }
    in_pos_ = in_end_ - left;
    if (got > 0) return got;
    if (left < before) continue; // consumed input (headers, a frame's end): go on
    if (!in_eof_) {
      if (!refill() && !in_eof_) // a full buffer the decoder will not take
        bad_archive("corrupt " + std::string(compression_name(compression_)) +
                    " archive: the decoder makes no progress");
      continue;
    }
    if (!decoder_->at_end_of_stream())
      bad_archive("truncated " + std::string(compression_name(compression_)) +
                  " archive: the file ends inside the compressed data (after " + std::to_string(compressed_read_) +
                  " bytes)");
    done_ = true;
    return 0;
  }
}

std::string read_whole_file(const std::string& path)
{
  CompressedFile file(path);
  std::string text;
  std::vector<char> buf(1 << 16);
  while (std::size_t n = file.read(buf.data(), buf.size()))
    text.append(buf.data(), n);
  return text;
}

} // namespace xattn::workloads
