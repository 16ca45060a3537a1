// Reading text traces line by line in constant memory, and the bookkeeping of `--skip-bad`.
#pragma once

#include "sim/core/error.hpp"
#include "workloads/compressed_file.hpp"
#include "workloads/request.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace xattn::workloads
{

/// Buffered reader of a text file, one line at a time (no trailing '\n' or '\r'). The file may be
/// compressed (gzip, xz, zstd: see CompressedFile); line numbers are those of the decompressed
/// text. Memory is one buffer, grown only to the longest line, and the decoder's state.
class LineReader
{
public:
  /// Opens `path`; throws core::InputError ("cannot open file") when it cannot. A corrupt or
  /// truncated archive is an InputError naming the file when next() reaches it.
  explicit LineReader(const std::string& path);
  /// The next line, valid until the next call; false at end of file.
  bool next(std::string_view& line);
  /// 1-based number of the line last returned.
  std::int64_t line_number() const { return line_no_; }
  const std::string& path() const { return path_; }
  Compression compression() const { return file_.compression(); }

private:
  bool fill();
  std::string path_;
  CompressedFile file_;
  std::vector<char> buf_;
  std::size_t begin_ = 0, end_ = 0;
  bool eof_ = false;
  std::int64_t line_no_ = 0;
};

/// What an importer skipped under `--skip-bad`: a count and the first few diagnostics.
class SkipLog
{
public:
  explicit SkipLog(bool skip_bad) : skip_bad_(skip_bad) {}
  /// Throws `d` as an InputError unless skipping; then records it.
  void bad(core::Diagnostic d);
  std::uint64_t count() const { return count_; }
  const std::vector<std::string>& messages() const { return messages_; }

private:
  static constexpr std::size_t kKeep = 20;
  bool skip_bad_;
  std::uint64_t count_ = 0;
  std::vector<std::string> messages_;
};

/// A request source with one request per text line (Mooncake JSONL, Azure CSV): blank lines are
/// skipped, unreadable lines are errors or, under `--skip-bad`, counted skips, and a trace that
/// yields no request at all is an error.
class LineRequestSource : public RequestSource
{
public:
  bool next(Request& out) final;
  std::uint64_t skipped() const override { return skips_.count(); }
  std::vector<std::string> skip_messages() const override { return skips_.messages(); }

protected:
  LineRequestSource(const std::string& path, ImportOptions options) : lines_(path), skips_(options.skip_bad) {}
  /// Fills `out` from one non-blank line; returns false (after recording a skip) when the line is
  /// bad and `--skip-bad` is on. Sets `out.id` from next_id_.
  virtual bool read_line(std::string_view line, Request& out) = 0;

  LineReader lines_;
  SkipLog skips_;
  std::uint64_t next_id_ = 0;
};

} // namespace xattn::workloads
