#include "validate/measured.hpp"

#include "calibrate/import_util.hpp"

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

namespace xattn::validate
{
namespace
{
/// The primitives a measured row names, as its `primitive` cell spells them.
constexpr std::array<std::pair<Op, std::string_view>, 4> kOpNames{
    {{Op::kRoute, "route"}, {Op::kFetch, "fetch"}, {Op::kLocal, "local"}, {Op::kTransfer, "transfer"}}};

const std::vector<std::string> kKeys = {"primitive", "fabric",  "src",         "dst",        "mq",
                                        "ct",        "holders", "concurrency", "blocks",     "transport",
                                        "bytes",     "latency", "latency_s",   "wire_bytes", "group"};

using calibrate::detail::cell_column;
using calibrate::detail::split_csv;
using calibrate::detail::trim;

/// One row's cells, key -> text, and where they came from: each reader reports a bad value to
/// `diags` at the key's column (`columns`, 1-based: a CSV's; none in JSONL, whose problems name the
/// line and key).
struct Cells {
  const std::map<std::string, std::string>& cell;
  const std::string& file;
  int line;
  core::Diagnostics& diags;
  const std::map<std::string, int>& columns;

  void err(const std::string& key, const std::string& what) const
  {
    const auto c = columns.find(key);
    diags.add({file, line, c == columns.end() ? 0 : c->second, key, what});
  }
  /// The cell's text; null where it is absent or empty.
  const std::string* get(const std::string& key) const
  {
    auto it = cell.find(key);
    return it == cell.end() || it->second.empty() ? nullptr : &it->second;
  }
  std::int64_t integer(const std::string& key, std::int64_t def, std::int64_t min) const
  {
    const std::string* v = get(key);
    if (!v) return def;
    std::int64_t x = 0;
    auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), x);
    if (ec != std::errc() || p != v->data() + v->size() || x < min) {
      err(key, "expected an integer >= " + std::to_string(min) + ", got '" + *v + "'");
      return def;
    }
    return x;
  }
  /// A plain byte count or a size with its unit.
  std::optional<double> bytes(const std::string& key) const
  {
    const std::string* v = get(key);
    if (!v) return std::nullopt;
    double x = 0;
    auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), x);
    if (ec == std::errc() && p == v->data() + v->size() && x >= 0) return x;
    try {
      return core::parse_bytes(*v).value();
    } catch (const std::exception& e) {
      err(key, e.what());
      return std::nullopt;
    }
  }
  /// `latency` (a time with a unit) or `latency_s` (seconds); 0 where neither reads.
  double latency() const
  {
    double s = 0;
    if (const std::string* l = get("latency")) {
      try {
        s = core::parse_seconds(*l).value();
      } catch (const std::exception& e) {
        err("latency", e.what());
      }
    } else if (const std::string* ls = get("latency_s")) {
      auto [p, ec] = std::from_chars(ls->data(), ls->data() + ls->size(), s);
      if (ec != std::errc() || p != ls->data() + ls->size())
        err("latency_s", "expected a number of seconds, got '" + *ls + "'");
    } else {
      err("latency", "missing (a time with a unit: 45.1us)");
    }
    if (!(s > 0) && (get("latency") || get("latency_s"))) err("latency", "must be positive");
    return s;
  }
};

/// Builds one row from its cells, reporting every problem (Cells).
MeasuredRow make_row(const std::map<std::string, std::string>& cell, const std::string& file, int line,
                     core::Diagnostics& diags, const std::map<std::string, int>& columns = {})
{
  const Cells in{cell, file, line, diags, columns};
  MeasuredRow r;
  r.line = line;
  std::string primitives; // "route|fetch|local|transfer"
  for (const auto& [op, name] : kOpNames)
    primitives += (primitives.empty() ? "" : "|") + std::string(name);
  const std::string* prim = in.get("primitive");
  const auto named =
      prim ? std::find_if(kOpNames.begin(), kOpNames.end(), [&](const auto& e) { return e.second == *prim; })
           : kOpNames.end();
  if (!prim)
    in.err("primitive", "missing (" + primitives + ")");
  else if (named == kOpNames.end())
    in.err("primitive", "unknown primitive '" + *prim + "' (expected " + primitives + ")");
  else
    r.op = named->first;
  if (const std::string* f = in.get("fabric")) {
    r.fabric = core::parse_fabric(*f);
    if (!r.fabric)
      in.err("fabric", "unknown fabric class '" + *f + "' (" + core::fabric_choices() + ")");
    else if (*r.fabric == core::FabricClass::kSameGpu)
      in.err("fabric", "same-gpu has no transfer to simulate");
  }
  if (const std::string* s = in.get("src")) r.src = *s;
  if (const std::string* d = in.get("dst")) r.dst = *d;
  if (!in.get("fabric") && (r.src.empty() || r.dst.empty()))
    in.err("fabric", "give a fabric class or both endpoints (src, dst)");
  if (r.src.empty() != r.dst.empty()) in.err(r.src.empty() ? "src" : "dst", "give both endpoints or neither");
  r.mq = static_cast<double>(in.integer("mq", 256, 1));
  r.ct = in.integer("ct", 2048, 1);
  r.holders = static_cast<int>(in.integer("holders", 1, 1));
  r.concurrency = static_cast<int>(in.integer("concurrency", 1, 1));
  r.blocks = static_cast<int>(in.integer("blocks", 0, 0));
  if (r.ct % r.holders != 0)
    in.err("ct",
           "ct = " + std::to_string(r.ct) + " does not split evenly over " + std::to_string(r.holders) + " holders");
  if (const std::string* t = in.get("transport")) {
    if (const std::optional<core::Transport> tr = core::parse_transport(*t))
      r.transport = *tr;
    else
      in.err("transport", "expected gpu or proxy, got '" + *t + "'");
  }
  const std::optional<double> size = in.bytes("bytes");
  r.bytes = size.value_or(0);
  if (r.op == Op::kTransfer && (size || !in.get("bytes")) && r.bytes < 4)
    in.err("bytes", "a transfer needs its size (at least 4 B)");
  r.wire_bytes = in.bytes("wire_bytes");
  r.latency_s = in.latency();
  if (const std::string* g = in.get("group"))
    r.group = *g;
  else
    r.group = std::string(to_string(r.op)) + "/" +
              (r.fabric ? std::string(core::to_string(*r.fabric)) : r.src + "->" + r.dst);
  return r;
}

bool looks_like_own(const std::string& text, bool& jsonl)
{
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    jsonl = t[0] == '{';
    if (jsonl) return t.find("\"primitive\"") != std::string::npos;
    for (const std::string& c : split_csv(t))
      if (c == "primitive") return true;
    return false;
  }
  return false;
}
} // namespace

std::string_view to_string(Op op)
{
  for (const auto& [o, name] : kOpNames)
    if (o == op) return name;
  return "?";
}

MeasuredData parse_measured_csv(const std::string& text, const std::string& name)
{
  MeasuredData d{name, "xattn-csv", {}, {}};
  core::Diagnostics diags;
  std::istringstream in(text);
  std::string line;
  std::vector<std::string> header;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    std::vector<std::string> cells = split_csv(line);
    if (header.empty()) {
      header = cells;
      for (const std::string& h : header)
        if (std::find(kKeys.begin(), kKeys.end(), h) == kKeys.end())
          diags.add({name, n, 0, h,
                     "unknown column (expected some of: primitive, fabric, src, dst, mq, ct, holders, "
                     "concurrency, blocks, transport, bytes, latency, wire_bytes, group)"});
      continue;
    }
    if (cells.size() != header.size()) {
      diags.add(
          {name, n, 0, "", std::to_string(cells.size()) + " cells, the header has " + std::to_string(header.size())});
      continue;
    }
    std::map<std::string, std::string> cell;
    std::map<std::string, int> columns;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      cell[header[i]] = cells[i];
      columns[header[i]] = cell_column(line, static_cast<int>(i));
    }
    d.rows.push_back(make_row(cell, name, n, diags, columns));
  }
  if (header.empty() || (d.rows.empty() && diags.empty()))
    diags.add({name, 0, 0, "", "no measured rows (expected a header line and one line per measured operation)"});
  diags.throw_if_any();
  return d;
}

MeasuredData parse_measured_jsonl(const std::string& text, const std::string& name)
{
  MeasuredData d{name, "xattn-jsonl", {}, {}};
  core::Diagnostics diags;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    nlohmann::json j = nlohmann::json::parse(t, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      diags.add({name, n, 0, "", "not a JSON object"});
      continue;
    }
    std::map<std::string, std::string> cell;
    for (const auto& [k, v] : j.items()) {
      if (std::find(kKeys.begin(), kKeys.end(), k) == kKeys.end())
        diags.add({name, n, 0, k, "unknown key"});
      else
        cell[k] = v.is_string() ? v.get<std::string>() : v.dump();
    }
    d.rows.push_back(make_row(cell, name, n, diags));
  }
  if (d.rows.empty() && diags.empty()) diags.add({name, 0, 0, "", "no measured rows"});
  diags.throw_if_any();
  return d;
}

MeasuredData from_measurements(const calibrate::Measurements& m)
{
  MeasuredData d{m.file, m.format, {}, m.notes};
  for (const calibrate::Series& s : m.series) {
    if (s.measured != calibrate::Measured::kTransfer || !s.fabric || s.features.empty()) {
      d.notes.push_back("series '" + s.name + "' (" + std::string(calibrate::to_string(s.measured)) +
                        ") skipped: only transfer series map to an engine micro-scenario");
      continue;
    }
    if (!s.transport) {
      // A copy-engine or bandwidth-only sweep: its fixed time is no probe the profile holds.
      d.notes.push_back("series '" + s.name +
                        "' skipped: it does not say which transport issued it, so the engine has no probe latency "
                        "to price it with");
      continue;
    }
    for (const calibrate::Point& p : s.points) {
      MeasuredRow r;
      r.op = Op::kTransfer;
      r.fabric = s.fabric;
      r.transport = *s.transport;
      r.blocks = s.single_block ? 1 : 0;
      r.bytes = p.x[0];
      r.latency_s = p.t_s;
      r.group = s.name;
      r.line = p.line;
      d.rows.push_back(r);
    }
  }
  if (d.rows.empty()) core::fail(m.file, 0, 0, "", "no transfer series to validate in this " + m.format + " file");
  return d;
}

MeasuredData parse_measured(const std::string& text, const std::string& name, const calibrate::ImportOptions& opt)
{
  bool jsonl = false;
  if (looks_like_own(text, jsonl)) return jsonl ? parse_measured_jsonl(text, name) : parse_measured_csv(text, name);
  return from_measurements(calibrate::import_text(text, name, opt));
}

MeasuredData read_measured(const std::filesystem::path& path, const calibrate::ImportOptions& opt)
{
  std::ifstream in(path, std::ios::binary);
  if (!in) core::fail(path.string(), 0, 0, "", "cannot read the measured-data file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_measured(ss.str(), path.string(), opt);
}

std::string to_csv(const std::vector<MeasuredRow>& rows)
{
  std::ostringstream o;
  o << "primitive,fabric,src,dst,mq,ct,holders,concurrency,blocks,transport,bytes,latency_s,wire_bytes,group\n";
  o.precision(10);
  for (const MeasuredRow& r : rows) {
    o << to_string(r.op) << "," << (r.fabric ? core::to_string(*r.fabric) : "") << "," << r.src << "," << r.dst << ","
      << r.mq << "," << r.ct << "," << r.holders << "," << r.concurrency << "," << r.blocks << ","
      << core::to_string(r.transport) << "," << r.bytes << "," << r.latency_s << ",";
    if (r.wire_bytes) o << *r.wire_bytes;
    o << "," << r.group << "\n";
  }
  return o.str();
}

} // namespace xattn::validate
