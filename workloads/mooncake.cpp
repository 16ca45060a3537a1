#include "workloads/mooncake.hpp"
#include "workloads/trace_format.hpp"

#include "workloads/request_id.hpp"

#include <algorithm>

namespace xattn::workloads
{
namespace
{
enum Key { kTimestamp, kInput, kOutput, kHashIds };
} // namespace

MooncakeReader::MooncakeReader(const std::string& path, ImportOptions options)
    : LineRequestSource(path, options), parser_({"timestamp", "input_length", "output_length", "hash_ids"}, "hash_ids"),
      prefix_sessions_(options.prefix_sessions)
{
}

// Returns false (after recording a skip) when the line is bad and --skip-bad is on.
bool MooncakeReader::read_line(std::string_view line, Request& out)
{
  const std::string& file = lines_.path();
  const int line_no = static_cast<int>(lines_.line_number());
  auto bad = [&](int column, std::string key, std::string message) {
    skips_.bad({file, line_no, column, std::move(key), std::move(message)});
    return false;
  };
  if (!parser_.parse(line, out.blocks)) return bad(parser_.error_column(), "", "invalid JSON: " + parser_.error());
  const auto& v = parser_.values();
  static const char* const kNames[] = {"timestamp", "input_length", "output_length", "hash_ids"};
  for (int k = kTimestamp; k <= kOutput; ++k) {
    if (v[k].kind == JsonValue::Kind::kMissing) return bad(0, kNames[k], "missing field");
    if (!v[k].is_number() || v[k].number < 0 || (k != kTimestamp && v[k].kind != JsonValue::Kind::kInteger))
      return bad(0, kNames[k],
                 std::string("expected a non-negative ") + (k == kTimestamp ? "number (ms)" : "integer (tokens)") +
                     ", got " + FlatJsonParser::describe(v[k]));
  }
  if (v[kHashIds].kind != JsonValue::Kind::kArray)
    return bad(0, "hash_ids",
               std::string("expected an array of block ids, got ") + FlatJsonParser::kind_name(v[kHashIds].kind));
  if (v[kHashIds].negative_in_array || v[kHashIds].non_integer_in_array)
    return bad(0, "hash_ids", "expected non-negative integer block ids");
  double ms = v[kTimestamp].number;
  if (ms < last_ms_)
    return bad(0, "timestamp",
               "timestamps must not decrease (" + FlatJsonParser::describe(v[kTimestamp]) + " ms after " +
                   FlatJsonParser::describe(JsonValue{JsonValue::Kind::kFloat, 0, last_ms_}) + " ms)");
  last_ms_ = ms;
  if (!ids::session_fits(next_id_))
    return bad(0, "",
               "more than 2^32 requests, each its own session: past the request-id layout (workloads/request_id.hpp)");
  out.id = next_id_++;
  out.arrival = core::Seconds(ms * 1e-3);
  out.session = out.id;
  if (prefix_sessions_ && !out.blocks.empty()) {
    // The longest earlier request whose full blocks are all this one's first: its last full id,
    // in place (a block id stands for its whole prefix).
    for (std::size_t k = out.blocks.size(); k > 0; --k) {
      auto it = ends_.find(out.blocks[k - 1]);
      if (it != ends_.end() && it->second.second == k) {
        out.session = it->second.first;
        break;
      }
    }
    // A turn continues from this one's full blocks (its partial last block is filled in by then)
    // when the last of them is this request's own: a prefix shared before it (a system prompt)
    // opens no session.
    const auto full =
        std::min<std::size_t>(out.blocks.size(), static_cast<std::size_t>(v[kInput].integer / kBlockTokens));
    const bool own = full > 0 && !seen_.count(out.blocks[full - 1]);
    seen_.insert(out.blocks.begin(), out.blocks.end());
    if (own) ends_[out.blocks[full - 1]] = {out.session, full};
  }
  out.agent = ids::agent_id(out.session, 0);
  out.parent_agent = kNoAgent;
  out.block_tokens = kBlockTokens;
  out.input_tokens = v[kInput].integer;
  out.output_tokens = v[kOutput].integer;
  out.think = core::Seconds(0.0);
  return true;
}

// The registry's entry (formats.def): a .jsonl without the own format's header.
TraceFormatInfo format_mooncake()
{
  return {.name = "mooncake",
          .extension = ".jsonl",
          .first_line_mark = "",
          .sessions = false,
          .open = [](const std::string& path, const OpenOptions& o) -> std::unique_ptr<RequestSource> {
            return std::make_unique<MooncakeReader>(path, o.import);
          }};
}

} // namespace xattn::workloads
