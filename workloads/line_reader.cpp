#include "workloads/line_reader.hpp"

#include <cstring>

namespace xattn::workloads
{

LineReader::LineReader(const std::string& path) : path_(path), file_(path), buf_(1 << 20) {}

bool LineReader::fill()
{
  // Keep the unread tail, grow when one line fills the whole buffer.
  if (begin_ > 0) {
    std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == buf_.size()) buf_.resize(buf_.size() * 2);
  std::size_t got = file_.read(buf_.data() + end_, buf_.size() - end_);
  if (got == 0) eof_ = true;
  end_ += got;
  return got > 0;
}

bool LineReader::next(std::string_view& line)
{
  std::size_t scanned = begin_;
  for (;;) {
    const char* base = buf_.data();
    if (const void* nl = std::memchr(base + scanned, '\n', end_ - scanned)) {
      std::size_t pos = static_cast<const char*>(nl) - base;
      std::size_t len = pos - begin_;
      if (len > 0 && base[begin_ + len - 1] == '\r') --len;
      line = std::string_view(base + begin_, len);
      begin_ = pos + 1;
      ++line_no_;
      return true;
    }
    std::size_t offset = scanned - begin_;
    if (eof_ || !fill()) {
      if (begin_ == end_) return false;
      std::size_t len = end_ - begin_; // a last line without '\n'
      if (buf_[begin_ + len - 1] == '\r') --len;
      line = std::string_view(buf_.data() + begin_, len);
      begin_ = end_;
      ++line_no_;
      return true;
    }
    scanned = begin_ + offset;
  }
}

void SkipLog::bad(core::Diagnostic d)
{
  if (!skip_bad_) throw core::InputError(std::move(d));
  ++count_;
  if (messages_.size() < kKeep) messages_.push_back(d.str());
}

bool LineRequestSource::next(Request& out)
{
  std::string_view line;
  while (lines_.next(line)) {
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    if (read_line(line, out)) return true;
  }
  if (next_id_ == 0 && skips_.count() == 0) core::fail(lines_.path(), 0, 0, "", "the trace holds no requests");
  return false;
}

} // namespace xattn::workloads
