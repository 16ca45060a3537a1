// xattn's own trace format, version 1 (documented in workloads/README.md): JSON Lines, a header
// line {"xattn_trace": 1, ...} then one request per line. Reader and writer both stream.
#pragma once

#include "workloads/json_line.hpp"
#include "workloads/line_reader.hpp"
#include "workloads/request.hpp"

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

namespace xattn::workloads
{

inline constexpr int kTraceVersion = 1;

/// Streams an xattn trace. Strict: the header must come first and name version 1, every request
/// line must carry every required key and no unknown key, ids must count up from 0 and arrivals
/// must not decrease. Errors name the file, line and key.
class XattnTraceReader : public RequestSource
{
public:
  explicit XattnTraceReader(const std::string& path);
  bool next(Request& out) override;
  /// The header's "source" text (what the trace was made from), empty when absent.
  const std::string& source() const { return source_; }

private:
  void read_header();
  LineReader lines_;
  FlatJsonParser parser_;
  std::string source_;
  std::uint64_t next_id_ = 0;
  double last_t_ = 0.0;
};

/// Writes an xattn trace atomically: lines go to "<path>.tmp-<pid>", commit() renames it onto
/// `path`; a writer destroyed without commit() removes the temporary file, leaving `path` as it was.
class XattnTraceWriter
{
public:
  /// `source` is a free text recorded in the header (the file or generator it came from).
  XattnTraceWriter(std::filesystem::path path, const std::string& source);
  ~XattnTraceWriter();
  XattnTraceWriter(const XattnTraceWriter&) = delete;
  XattnTraceWriter& operator=(const XattnTraceWriter&) = delete;

  void write(const Request& r);
  std::uint64_t written() const { return written_; }
  /// Flushes, closes and renames into place. Throws core::InputError on an I/O failure.
  void commit();

private:
  struct Closer {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::filesystem::path path_, tmp_;
  std::unique_ptr<std::FILE, Closer> file_;
  std::string line_;
  std::uint64_t written_ = 0;
  bool committed_ = false;
};

/// One request as its JSONL line (no newline), appended to `out`.
void append_request_json(const Request& r, std::string& out);

} // namespace xattn::workloads
