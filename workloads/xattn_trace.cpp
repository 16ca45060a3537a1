#include "workloads/xattn_trace.hpp"
#include "workloads/trace_format.hpp"

#include "workloads/request_id.hpp"

#include <nlohmann/json.hpp>

#include <charconv>
#include <cstring>
#include <unistd.h>

namespace xattn::workloads
{
namespace
{
enum Key { kId, kT, kSession, kAgent, kParent, kBlockTokens, kBlocks, kIn, kOut, kThink, kKeys };
const char* const kNames[kKeys] = {"id",           "t",      "session", "agent", "parent",
                                   "block_tokens", "blocks", "in",      "out",   "think"};

void append_number(std::string& out, std::uint64_t v)
{
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void append_number(std::string& out, double v)
{
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v); // shortest text that reads back exactly
  out.append(buf, r.ptr);
}
} // namespace

XattnTraceReader::XattnTraceReader(const std::string& path) : lines_(path), parser_({kNames, kNames + kKeys}, "blocks")
{
  read_header();
}

void XattnTraceReader::read_header()
{
  std::string_view line;
  const std::string& file = lines_.path();
  if (!lines_.next(line)) core::fail(file, 0, 0, "", "empty file: expected the header line {\"xattn_trace\": 1}");
  nlohmann::json h;
  try {
    h = nlohmann::json::parse(line.begin(), line.end());
  } catch (const nlohmann::json::parse_error& e) {
    core::fail(file, 1, static_cast<int>(e.byte), "", "invalid JSON in the header line");
  } catch (const nlohmann::json::exception& e) { // a number beyond a double (found by xattn_trace_fuzz)
    core::fail(file, 1, 0, "", "invalid JSON in the header line: " + json_error_text(e.what()));
  }
  if (!h.is_object() || !h.contains("xattn_trace"))
    core::fail(file, 1, 0, "xattn_trace", "not an xattn trace: the first line must be {\"xattn_trace\": 1, ...}");
  if (!h["xattn_trace"].is_number_integer() || h["xattn_trace"].get<std::int64_t>() != kTraceVersion)
    core::fail(file, 1, 0, "xattn_trace",
               "unsupported version " + h["xattn_trace"].dump() + " (this build reads version 1)");
  for (auto& [k, v] : h.items()) {
    if (k == "source" && v.is_string())
      source_ = v.get<std::string>();
    else if (k != "xattn_trace" && k != "source")
      core::fail(file, 1, 0, k, "unknown header key (version 1 knows xattn_trace, source)");
  }
}

bool XattnTraceReader::next(Request& out)
{
  std::string_view line;
  const std::string& file = lines_.path();
  while (lines_.next(line)) {
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    const int n = static_cast<int>(lines_.line_number());
    if (!parser_.parse(line, out.blocks))
      core::fail(file, n, parser_.error_column(), "", "invalid JSON: " + parser_.error());
    if (!parser_.unknown_key().empty())
      core::fail(file, n, 0, parser_.unknown_key(), "unknown key in a version 1 request");
    const auto& v = parser_.values();
    auto need_int = [&](int k, bool optional) -> std::int64_t {
      if (v[k].kind == JsonValue::Kind::kMissing && optional) return 0;
      if (v[k].kind == JsonValue::Kind::kMissing) core::fail(file, n, 0, kNames[k], "missing field");
      if (v[k].kind != JsonValue::Kind::kInteger || v[k].integer < 0)
        core::fail(file, n, 0, kNames[k],
                   std::string("expected a non-negative integer, got ") + FlatJsonParser::describe(v[k]));
      return v[k].integer;
    };
    auto need_seconds = [&](int k, bool optional) -> double {
      if (v[k].kind == JsonValue::Kind::kMissing && optional) return 0.0;
      if (v[k].kind == JsonValue::Kind::kMissing) core::fail(file, n, 0, kNames[k], "missing field");
      if (!v[k].is_number() || !(v[k].number >= 0))
        core::fail(file, n, 0, kNames[k],
                   std::string("expected a non-negative number of seconds, got ") + FlatJsonParser::describe(v[k]));
      return v[k].number;
    };
    std::int64_t id = need_int(kId, false);
    if (static_cast<std::uint64_t>(id) != next_id_)
      core::fail(file, n, 0, "id", "expected id " + std::to_string(next_id_) + ", got " + std::to_string(id));
    double t = need_seconds(kT, false);
    if (t < last_t_) core::fail(file, n, 0, "t", "arrival times must not decrease");
    out.id = next_id_++;
    last_t_ = t;
    out.arrival = core::Seconds(t);
    out.session = static_cast<std::uint64_t>(need_int(kSession, false));
    out.agent = static_cast<std::uint64_t>(need_int(kAgent, false));
    if (v[kParent].kind == JsonValue::Kind::kMissing || v[kParent].kind == JsonValue::Kind::kNull)
      out.parent_agent = kNoAgent;
    else
      out.parent_agent = static_cast<std::uint64_t>(need_int(kParent, false));
    // Copies of the workload place these ids in their own ranges (workloads/request_id.hpp).
    if (!ids::session_fits(out.session))
      core::fail(file, n, 0, "session", "must be below 2^32 (the request-id layout, workloads/request_id.hpp)");
    if (!ids::agent_fits(out.agent))
      core::fail(file, n, 0, "agent", "must be below 2^48 (the request-id layout, workloads/request_id.hpp)");
    if (out.parent_agent != kNoAgent && !ids::agent_fits(out.parent_agent))
      core::fail(file, n, 0, "parent", "must be below 2^48 (the request-id layout, workloads/request_id.hpp)");
    out.block_tokens = need_int(kBlockTokens, false);
    if (v[kBlocks].kind != JsonValue::Kind::kArray)
      core::fail(file, n, 0, "blocks",
                 std::string("expected an array of block ids, got ") + FlatJsonParser::kind_name(v[kBlocks].kind));
    if (v[kBlocks].negative_in_array || v[kBlocks].non_integer_in_array)
      core::fail(file, n, 0, "blocks", "expected non-negative integer block ids");
    if (!out.blocks.empty() && out.block_tokens == 0)
      core::fail(file, n, 0, "block_tokens", "must be positive when blocks are given");
    out.input_tokens = need_int(kIn, false);
    out.output_tokens = need_int(kOut, false);
    out.think = core::Seconds(need_seconds(kThink, true));
    return true;
  }
  if (next_id_ == 0) core::fail(file, 0, 0, "", "the trace holds no requests");
  return false;
}

void append_request_json(const Request& r, std::string& out)
{
  out += "{\"id\":";
  append_number(out, r.id);
  out += ",\"t\":";
  append_number(out, r.arrival.value());
  out += ",\"session\":";
  append_number(out, r.session);
  out += ",\"agent\":";
  append_number(out, r.agent);
  out += ",\"parent\":";
  if (r.parent_agent == kNoAgent)
    out += "null";
  else
    append_number(out, r.parent_agent);
  out += ",\"block_tokens\":";
  append_number(out, static_cast<std::uint64_t>(r.block_tokens));
  out += ",\"blocks\":[";
  for (std::size_t i = 0; i < r.blocks.size(); ++i) {
    if (i) out += ',';
    append_number(out, r.blocks[i]);
  }
  out += "],\"in\":";
  append_number(out, static_cast<std::uint64_t>(r.input_tokens));
  out += ",\"out\":";
  append_number(out, static_cast<std::uint64_t>(r.output_tokens));
  out += ",\"think\":";
  append_number(out, r.think.value());
  out += '}';
}

XattnTraceWriter::XattnTraceWriter(std::filesystem::path path, const std::string& source)
    : path_(std::move(path)), tmp_(path_.string() + ".tmp-" + std::to_string(::getpid()))
{
  file_.reset(std::fopen(tmp_.c_str(), "wb"));
  if (!file_) core::fail(path_.string(), 0, 0, "", std::string("cannot write: ") + std::strerror(errno));
  nlohmann::json h{{"xattn_trace", kTraceVersion}, {"source", source}};
  line_ = h.dump() + "\n";
  std::fwrite(line_.data(), 1, line_.size(), file_.get());
}

XattnTraceWriter::~XattnTraceWriter()
{
  if (!committed_) {
    file_.reset();
    std::error_code ec;
    std::filesystem::remove(tmp_, ec);
  }
}

void XattnTraceWriter::write(const Request& r)
{
  line_.clear();
  append_request_json(r, line_);
  line_ += '\n';
  if (std::fwrite(line_.data(), 1, line_.size(), file_.get()) != line_.size())
    core::fail(path_.string(), 0, 0, "", std::string("write failed: ") + std::strerror(errno));
  ++written_;
}

void XattnTraceWriter::commit()
{
  if (std::fflush(file_.get()) != 0 || std::ferror(file_.get()))
    core::fail(path_.string(), 0, 0, "", std::string("write failed: ") + std::strerror(errno));
  file_.reset();
  std::error_code ec;
  std::filesystem::rename(tmp_, path_, ec);
  if (ec) core::fail(path_.string(), 0, 0, "", "cannot move the finished trace into place: " + ec.message());
  committed_ = true;
}

// The registry's entry (formats.def): a .jsonl whose header names it; always strict (ImportOptions do not apply).
TraceFormatInfo format_xattn()
{
  return {.name = "xattn",
          .extension = ".jsonl",
          .first_line_mark = "\"xattn_trace\"",
          .sessions = false,
          .open = [](const std::string& path, const OpenOptions&) -> std::unique_ptr<RequestSource> {
            return std::make_unique<XattnTraceReader>(path);
          }};
}

} // namespace xattn::workloads
