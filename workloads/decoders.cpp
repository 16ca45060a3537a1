// The three stream decoders behind CompressedFile, over Debian's zlib, liblzma and libzstd.
// Each accepts concatenated streams (gzip members, xz streams, zstd frames), as their tools do.
#include "workloads/compressed_file.hpp"

#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <climits>
#include <stdexcept>

namespace xattn::workloads
{
namespace
{
class GzipDecoder : public Decoder
{
public:
  GzipDecoder()
  {
    if (inflateInit2(&z_, 15 + 16) != Z_OK) // 15: the largest window; +16: a gzip header, not zlib's
      throw std::runtime_error("zlib: inflateInit2 failed");
  }
  ~GzipDecoder() override { inflateEnd(&z_); }

  std::size_t decode(const unsigned char*& in, std::size_t& in_left, unsigned char* out, std::size_t out_size,
                     bool /*last*/) override
  {
    z_.next_in = const_cast<Bytef*>(in);
    z_.avail_in = static_cast<uInt>(std::min<std::size_t>(in_left, UINT_MAX));
    z_.next_out = out;
    z_.avail_out = static_cast<uInt>(std::min<std::size_t>(out_size, UINT_MAX));
    const uInt offered = z_.avail_in;
    const uInt room = z_.avail_out;
    while (z_.avail_out > 0 && z_.avail_in > 0) {
      member_open_ = true;
      const int r = inflate(&z_, Z_NO_FLUSH);
      if (r == Z_STREAM_END) { // a member ends; another may follow
        member_open_ = false;
        inflateReset(&z_);
      } else if (r == Z_BUF_ERROR) {
        break;
      } else if (r != Z_OK) {
        throw DecodeError{z_.msg ? z_.msg : "inflate error " + std::to_string(r)};
      }
    }
    const std::size_t used = offered - z_.avail_in;
    in += used;
    in_left -= used;
    return room - z_.avail_out;
  }
  bool at_end_of_stream() const override { return !member_open_; }

private:
  z_stream z_{};
  bool member_open_ = false;
};

class XzDecoder : public Decoder
{
public:
  XzDecoder()
  {
    if (lzma_stream_decoder(&s_, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK)
      throw std::runtime_error("liblzma: lzma_stream_decoder failed");
  }
  ~XzDecoder() override { lzma_end(&s_); }

  std::size_t decode(const unsigned char*& in, std::size_t& in_left, unsigned char* out, std::size_t out_size,
                     bool last) override
  {
    if (ended_) return 0;
    s_.next_in = in;
    s_.avail_in = in_left;
    s_.next_out = out;
    s_.avail_out = out_size;
    const lzma_ret r = lzma_code(&s_, last ? LZMA_FINISH : LZMA_RUN);
    const std::size_t used = in_left - s_.avail_in;
    in += used;
    in_left -= used;
    if (r == LZMA_STREAM_END)
      ended_ = true;
    else if (r != LZMA_OK && r != LZMA_BUF_ERROR) // BUF_ERROR: no progress; at the end, a truncation
      throw DecodeError{why(r)};
    return out_size - s_.avail_out;
  }
  bool at_end_of_stream() const override { return ended_; }

private:
  static std::string why(lzma_ret r)
  {
    switch (r) {
    case LZMA_FORMAT_ERROR:
      return "not in the .xz format";
    case LZMA_OPTIONS_ERROR:
      return "unsupported compression options";
    case LZMA_DATA_ERROR:
      return "compressed data is corrupt";
    case LZMA_MEM_ERROR:
      return "out of memory";
    default:
      return "liblzma error " + std::to_string(static_cast<int>(r));
    }
  }
  lzma_stream s_ = LZMA_STREAM_INIT;
  bool ended_ = false;
};

class ZstdDecoder : public Decoder
{
public:
  ZstdDecoder() : ds_(ZSTD_createDStream())
  {
    if (!ds_) throw std::runtime_error("libzstd: ZSTD_createDStream failed");
  }
  ~ZstdDecoder() override { ZSTD_freeDStream(ds_); }

  std::size_t decode(const unsigned char*& in, std::size_t& in_left, unsigned char* out, std::size_t out_size,
                     bool /*last*/) override
  {
    ZSTD_inBuffer src{in, in_left, 0};
    ZSTD_outBuffer dst{out, out_size, 0};
    while (dst.pos < dst.size) {
      const std::size_t in_before = src.pos, out_before = dst.pos;
      const std::size_t r = ZSTD_decompressStream(ds_, &dst, &src);
      if (ZSTD_isError(r)) throw DecodeError{ZSTD_getErrorName(r)};
      if (src.pos == in_before && dst.pos == out_before) break; // needs input (r: a size hint, not the state)
      frame_left_ = r;                                          // 0: a frame is whole and flushed
    }
    in += src.pos;
    in_left -= src.pos;
    return dst.pos;
  }
  bool at_end_of_stream() const override { return frame_left_ == 0; }

private:
  ZSTD_DStream* ds_;
  std::size_t frame_left_ = 0;
};
} // namespace

std::unique_ptr<Decoder> make_decoder(Compression c)
{
  switch (c) {
  case Compression::kGzip:
    return std::make_unique<GzipDecoder>();
  case Compression::kXz:
    return std::make_unique<XzDecoder>();
  case Compression::kZstd:
    return std::make_unique<ZstdDecoder>();
  case Compression::kNone:
    break;
  }
  throw std::logic_error("make_decoder: no decoder for uncompressed data");
}

} // namespace xattn::workloads
