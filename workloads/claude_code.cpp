#include "workloads/claude_code.hpp"
#include "workloads/trace_format.hpp"

#include "sim/core/error.hpp"
#include "workloads/compressed_file.hpp"
#include "workloads/json_line.hpp"
#include "workloads/request_id.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace xattn::workloads
{
namespace
{
using json = nlohmann::json;

// Line and column (1-based) of a byte offset, for syntax errors.
void locate(const std::string& text, std::size_t byte, int& line, int& column)
{
  line = 1;
  std::size_t last_nl = std::string::npos;
  for (std::size_t i = 0; i < byte && i < text.size(); ++i)
    if (text[i] == '\n') {
      ++line;
      last_nl = i;
    }
  column = static_cast<int>(last_nl == std::string::npos ? byte : byte - last_nl - 1);
  column = std::max(column, 1);
}

const char* type_name(const json& j)
{
  return j.is_null() ? "null" : j.type_name();
}

struct Frame {
  const json* list;     // a requests[] array
  std::size_t index;    // next entry to read
  double base_s;        // absolute time of the list's time origin
  std::uint64_t agent;  // agent owning the list
  std::uint64_t parent; // that agent's parent
  std::string path;     // "requests" or "requests[3].requests"
};
} // namespace

void ClaudeCodeReader::bad(const std::string& path, bool skip, const std::string& key, const std::string& message)
{
  core::Diagnostic d{path, 0, 0, key, message};
  if (!skip) throw core::InputError(d);
  ++skipped_;
  if (messages_.size() < 20) messages_.push_back(d.str());
}

bool ClaudeCodeReader::read_call(const json& e, const std::string& path, bool skip, const std::string& at, double t,
                                 std::uint64_t session, std::uint64_t agent, std::uint64_t parent,
                                 std::int64_t block_tokens, bool local_ids)
{
  auto bad = [&](const std::string& key, const std::string& message) { this->bad(path, skip, key, message); };
  Request r;
  auto count = [&](const char* key, std::int64_t& out) {
    auto v = e.find(key);
    if (v == e.end() || !v->is_number_integer() || v->get<std::int64_t>() < 0) {
      bad(at + "." + key, v == e.end() ? "missing field" : "expected a non-negative integer, got " + v->dump());
      return false;
    }
    out = v->get<std::int64_t>();
    return true;
  };
  if (!count("in", r.input_tokens) || !count("out", r.output_tokens)) return false;
  auto ids = e.find("hash_ids");
  if (ids == e.end() || !ids->is_array()) {
    bad(at + ".hash_ids", ids == e.end() ? "missing field" : std::string("expected an array, got ") + type_name(*ids));
    return false;
  }
  r.blocks.reserve(ids->size());
  bool ok = true;
  for (std::size_t k = 0; k < ids->size() && ok; ++k) {
    const json& id = (*ids)[k];
    if (!id.is_number_integer() || id.get<std::int64_t>() < 0 ||
        (local_ids && id.get<std::uint64_t>() >= ids::kLocalBlocks)) {
      bad(at + ".hash_ids[" + std::to_string(k) + "]", "expected a block id in [0, 2^40), got " + id.dump());
      ok = false;
      break;
    }
    std::uint64_t v = id.get<std::uint64_t>();
    r.blocks.push_back(local_ids ? ids::session_block(session, v) : v);
  }
  if (!ok) return false;
  if (auto th = e.find("think_time"); th != e.end() && !th->is_null()) {
    if (!th->is_number() || !(th->get<double>() >= 0)) {
      bad(at + ".think_time", "expected a non-negative number of seconds, got " + th->dump());
      return false;
    }
    r.think = core::Seconds(th->get<double>());
  }
  r.arrival = core::Seconds(t);
  r.session = session;
  r.agent = agent;
  r.parent_agent = parent;
  r.block_tokens = block_tokens;
  requests_.push_back(std::move(r));
  return true;
}

ClaudeCodeReader::ClaudeCodeReader(const std::string& path, ImportOptions options, std::uint64_t session)
{
  const std::string text = read_whole_file(path); // plain or compressed; a session is small
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    int line = 0, column = 0;
    locate(text, e.byte > 0 ? e.byte - 1 : 0, line, column);
    core::fail(path, line, column, "", "invalid JSON: " + json_error_text(e.what()));
  } catch (const json::exception& e) { // a number too large for a double, and the like
    core::fail(path, 0, 0, "", "invalid JSON: " + json_error_text(e.what()));
  }
  if (!doc.is_object()) core::fail(path, 1, 1, "", std::string("expected a session object, got ") + type_name(doc));
  std::int64_t block_tokens = 64;
  if (doc.contains("block_size")) {
    const json& b = doc["block_size"];
    if (!b.is_number_integer() || b.get<std::int64_t>() <= 0)
      core::fail(path, 0, 0, "block_size", "expected a positive integer, got " + b.dump());
    block_tokens = b.get<std::int64_t>();
  }
  bool local_ids = true;
  if (doc.contains("hash_id_scope")) {
    const json& s = doc["hash_id_scope"];
    if (!s.is_string() || (s != "local" && s != "global"))
      core::fail(path, 0, 0, "hash_id_scope", "expected \"local\" or \"global\", got " + s.dump());
    local_ids = s == "local";
  }
  if (!doc.contains("requests") || !doc["requests"].is_array())
    core::fail(path, 0, 0, "requests", "expected an array of requests");

  auto bad = [&](const std::string& key, const std::string& message) {
    this->bad(path, options.skip_bad, key, message);
  };

  XATTN_CHECK(session < ids::kLocalBlockSessions, "a session number the importer can namespace block ids with");
  const std::uint64_t main_agent = ids::agent_id(session, 0);
  std::uint64_t next_sub = 1;
  std::vector<Frame> stack{{&doc["requests"], 0, 0.0, main_agent, kNoAgent, "requests"}};
  // Depth first with an explicit stack: any nesting depth, no recursion.
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (f.index == f.list->size()) {
      stack.pop_back();
      continue;
    }
    const std::size_t i = f.index++;
    const json& e = (*f.list)[i];
    const std::string at = f.path + "[" + std::to_string(i) + "]";
    if (!e.is_object()) {
      bad(at, std::string("expected an object, got ") + type_name(e));
      continue;
    }
    auto it_t = e.find("t");
    if (it_t == e.end() || !it_t->is_number() || !(it_t->get<double>() >= 0)) {
      bad(at + ".t",
          it_t == e.end() ? "missing field" : "expected a non-negative number of seconds, got " + it_t->dump());
      continue;
    }
    const double t = f.base_s + it_t->get<double>();
    auto it_type = e.find("type");
    const std::string type = it_type != e.end() && it_type->is_string() ? it_type->get<std::string>() : "";
    if (type == "subagent") {
      auto sub = e.find("requests");
      if (sub == e.end() || !sub->is_array()) {
        bad(at + ".requests", "a sub-agent needs an array of requests");
        continue;
      }
      if (next_sub > ids::kSubagents) {
        bad(at, "more than " + std::to_string(ids::kSubagents) +
                    " sub-agents in one session (the request-id layout, workloads/request_id.hpp)");
        continue;
      }
      ++subagents_;
      stack.push_back({&*sub, 0, t, ids::agent_id(session, next_sub++), f.agent, at + ".requests"});
      continue;
    }
    if (type != "n") {
      bad(at + ".type", "expected \"n\" or \"subagent\", got " + (it_type == e.end() ? "nothing" : it_type->dump()));
      continue;
    }
    read_call(e, path, options.skip_bad, at, t, session, f.agent, f.parent, block_tokens, local_ids);
  }
  if (requests_.empty()) core::fail(path, 0, 0, "requests", "the session holds no requests");
  // Stable: calls at the same instant keep their file order.
  std::stable_sort(requests_.begin(), requests_.end(),
                   [](const Request& a, const Request& b) { return a.arrival < b.arrival; });
  for (std::size_t k = 0; k < requests_.size(); ++k)
    requests_[k].id = k;
}

bool ClaudeCodeReader::next(Request& out)
{
  if (pos_ == requests_.size()) return false;
  out = requests_[pos_++];
  return true;
}

// The registry's entry (formats.def): one session per file, whose ids OpenOptions::session namespaces.
TraceFormatInfo format_claude_code()
{
  return {.name = "claude-code",
          .extension = ".json",
          .first_line_mark = "",
          .sessions = true,
          .open = [](const std::string& path, const OpenOptions& o) -> std::unique_ptr<RequestSource> {
            return std::make_unique<ClaudeCodeReader>(path, o.import, o.session);
          }};
}

} // namespace xattn::workloads
