// Reading an input file whether it is plain or compressed (gzip, xz, zstd): the compression is
// recognised by the file's first bytes, never by its name, and the content is decompressed on the
// fly in constant memory, so that every importer reads `trace.jsonl.zst` as it reads `trace.jsonl`
// (same line numbers: those of the decompressed text).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace xattn::workloads
{

enum class Compression { kNone, kGzip, kXz, kZstd };

/// "none", "gzip", "xz", "zstd".
std::string_view compression_name(Compression c);

/// The compression that a file starting with `head` uses, from its magic number (gzip 1f 8b,
/// xz fd '7zXZ' 00, zstd 28 b5 2f fd); kNone for anything else. Throws core::InputError, naming
/// `path`, for a recognised archive format that xattn does not read (bzip2, zip).
Compression sniff_compression(std::string_view head, const std::string& path);

/// One decoder of a compressed stream (gzip, xz or zstd); defined in decoders.cpp.
class Decoder
{
public:
  virtual ~Decoder() = default;
  /// Decodes from `in` (advanced past what was used) into `out`; returns the bytes written. `last`
  /// says that no input follows `in`. Throws DecodeError when the data is corrupt.
  virtual std::size_t decode(const unsigned char*& in, std::size_t& in_left, unsigned char* out, std::size_t out_size,
                             bool last) = 0;
  /// True when everything decoded so far ends on a whole stream (member, frame): the file may end here.
  virtual bool at_end_of_stream() const = 0;
};

/// What a decoder throws on corrupt data: the library's reason, in words.
struct DecodeError {
  std::string why;
};

/// A decoder for `c` (not kNone).
std::unique_ptr<Decoder> make_decoder(Compression c);

/// A file's content, decompressed while it is read when it is compressed. Memory: two fixed
/// buffers and the decoder's state (zstd's window at most 128 MiB, xz's dictionary).
class CompressedFile
{
public:
  /// Opens `path` and sniffs its compression; throws core::InputError "cannot open file" when it
  /// cannot be opened, or naming an archive format that is not read.
  explicit CompressedFile(const std::string& path);
  ~CompressedFile();
  CompressedFile(const CompressedFile&) = delete;
  CompressedFile& operator=(const CompressedFile&) = delete;

  /// Up to `size` bytes of content into `out`; 0 only at the end. Throws core::InputError naming
  /// the file when the archive is corrupt or truncated, or the file cannot be read.
  std::size_t read(char* out, std::size_t size);
  Compression compression() const { return compression_; }
  const std::string& path() const { return path_; }

private:
  struct Closer {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  bool refill();
  [[noreturn]] void bad_archive(const std::string& what) const;

  std::string path_;
  std::unique_ptr<std::FILE, Closer> file_;
  Compression compression_ = Compression::kNone;
  std::unique_ptr<Decoder> decoder_;
  std::vector<unsigned char> in_;
  std::size_t in_pos_ = 0, in_end_ = 0;
  bool in_eof_ = false, done_ = false;
  std::uint64_t compressed_read_ = 0; ///< bytes of the file read so far
};

/// The whole decompressed content of `path` (for formats parsed as one document). Throws like
/// CompressedFile.
std::string read_whole_file(const std::string& path);

} // namespace xattn::workloads
