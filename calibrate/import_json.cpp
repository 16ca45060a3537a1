// Importers for JSON outputs: xattn's probe harness, nccl-tests (-J), nvbandwidth (-j).
#include "calibrate/import_util.hpp"
#include "calibrate/importers.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <sstream>

namespace xattn::calibrate
{
namespace
{
using nlohmann::json;

int line_at(const std::string& text, std::size_t byte)
{
  return 1 + static_cast<int>(std::count(
                 text.begin(), text.begin() + static_cast<std::ptrdiff_t>(std::min(byte, text.size())), '\n'));
}

// One or more JSON documents (tools that run once per size are concatenated with `cat`).
std::vector<json> parse_documents(const std::string& text, const std::string& name)
{
  std::vector<json> docs;
  std::size_t pos = 0;
  while (true) {
    pos = text.find_first_not_of(" \t\r\n", pos);
    if (pos == std::string::npos) break;
    // Find the end of this value by parsing the remainder with a SAX that stops after one value.
    std::istringstream in(text.substr(pos));
    json j;
    try {
      in >> j;
    } catch (const json::parse_error& e) {
      core::fail(name, line_at(text, pos + (e.byte > 0 ? e.byte - 1 : 0)), 0, "",
                 std::string("invalid JSON: ") + e.what());
    }
    auto consumed = in.tellg();
    docs.push_back(std::move(j));
    if (consumed < 0) break;
    pos += static_cast<std::size_t>(consumed);
  }
  if (docs.empty()) core::fail(name, 0, 0, "", "empty file");
  return docs;
}

const json& member(const json& j, const char* key, const std::string& name, const std::string& path)
{
  if (!j.is_object() || !j.contains(key))
    core::fail(name, 0, 0, path.empty() ? key : path + "." + key, "missing required key");
  return j.at(key);
}

double positive(const json& j, const std::string& name, const std::string& path)
{
  if (!j.is_number() || !(j.get<double>() > 0))
    core::fail(name, 0, 0, path, "expected a positive number, got " + j.dump());
  return j.get<double>();
}

} // namespace

Measurements import_probe_json(const std::string& text, const std::string& name)
{
  std::vector<json> docs = parse_documents(text, name);
  const json& root = docs.front();
  Measurements m{name, "probe", {}, {}};
  std::string schema = root.value("schema", "");
  if (schema.rfind("xattn-probe/1", 0) != 0)
    core::fail(name, 0, 0, "schema", "expected 'xattn-probe/1', got '" + schema + "'");
  const json& probes = member(root, "probes", name, "");
  for (std::size_t p = 0; p < probes.size(); ++p) {
    const json& pr = probes[p];
    std::string path = "probes[" + std::to_string(p) + "]";
    Series s;
    s.name = member(pr, "name", name, path).get<std::string>();
    if (pr.value("status", "ok") != "ok") {
      m.notes.push_back(s.name + ": skipped by the probe: " + pr.value("reason", "no reason given"));
      continue;
    }
    std::string q = member(pr, "quantity", name, path).get<std::string>();
    auto measured = parse_measured(q);
    if (!measured) core::fail(name, 0, 0, path + ".quantity", "unknown quantity '" + q + "'");
    s.measured = *measured;
    if (pr.contains("fabric") && !pr["fabric"].is_null())
      s.fabric = detail::fabric(pr["fabric"].get<std::string>(), name, 0, path + ".fabric");
    if (pr.contains("transport") && !pr["transport"].is_null()) {
      std::string t = pr["transport"].get<std::string>();
      if (t != "gpu" && t != "proxy")
        core::fail(name, 0, 0, path + ".transport", "expected gpu or proxy, got '" + t + "'");
      s.transport = t == "gpu" ? core::Transport::kGpu : core::Transport::kProxy;
    }
    s.single_block = pr.value("dispatch", "") == "single-block";
    for (const json& f : member(pr, "params", name, path))
      s.features.push_back(f.get<std::string>());
    const json& pts = member(pr, "points", name, path);
    for (std::size_t i = 0; i < pts.size(); ++i) {
      std::string ppath = path + ".points[" + std::to_string(i) + "]";
      Point pt;
      for (const json& x : member(pts[i], "x", name, ppath))
        pt.x.push_back(positive(x, name, ppath + ".x"));
      if (pt.x.size() != s.features.size())
        core::fail(name, 0, 0, ppath + ".x", "expected " + std::to_string(s.features.size()) + " values (params)");
      pt.t_s = positive(member(pts[i], "median_s", name, ppath), name, ppath + ".median_s");
      s.points.push_back(std::move(pt));
    }
    m.series.push_back(std::move(s));
  }
  return m;
}

Measurements import_nccl_tests(const std::string& text, const std::string& name, const ImportOptions& opt)
{
  Measurements m{name, "nccl-tests", {}, {}};
  core::FabricClass fabric = detail::required_fabric(opt.fabric, name, "nccl-tests");
  for (const json& doc : parse_documents(text, name)) {
    std::string program = "nccl-test";
    if (doc.contains("args") && doc["args"].is_array() && !doc["args"].empty()) {
      program = doc["args"][0].get<std::string>();
      program = program.substr(program.find_last_of('/') + 1);
    }
    Series s;
    s.name = program + "/" + std::string(core::to_string(fabric));
    s.measured = Measured::kTransfer;
    s.fabric = fabric;
    s.transport = core::Transport::kProxy; // host-launched NCCL: a host-mediated exchange
    s.features = {"bytes"};
    const json& results = member(doc, "results", name, "");
    for (std::size_t i = 0; i < results.size(); ++i) {
      const json& r = results[i];
      std::string path = "results[" + std::to_string(i) + "]";
      const json* body = nullptr;
      for (const char* k : {"out_of_place", "in_place"})
        if (r.contains(k) && r[k].is_object()) {
          body = &r[k];
          break;
        }
      if (!body) core::fail(name, 0, 0, path, "neither out_of_place nor in_place results");
      const char* tkey = body->contains("time") ? "time" : "cpu_time";
      Point p;
      p.x = {positive(member(r, "size", name, path), name, path + ".size")};
      p.t_s = positive(member(*body, tkey, name, path), name, path + "." + tkey) * 1e-6; // microseconds
      s.points.push_back(p);
    }
    m.series.push_back(std::move(s));
  }
  return m;
}

Measurements import_nvbandwidth(const std::string& text, const std::string& name, const ImportOptions& opt)
{
  Measurements m{name, "nvbandwidth", {}, {}};
  constexpr double kDefaultBuffer_B = 512.0 * 1024 * 1024; // nvbandwidth's default -b 512 (MiB)
  std::vector<json> docs = parse_documents(text, name);
  if (docs.size() == 1 && docs[0].is_array()) {
    json arr = docs[0];
    docs.assign(arr.begin(), arr.end());
  }
  for (const json& doc : docs) {
    const json& nvb = member(doc, "nvbandwidth", name, "");
    for (const json& tc : member(nvb, "testcases", name, "nvbandwidth")) {
      std::string tname = tc.value("name", "");
      if (tc.value("status", "") != "Passed" || !tc.contains("bandwidth_matrix")) {
        m.notes.push_back(tname + ": status " + tc.value("status", "?") + ", not used");
        continue;
      }
      double size_B = kDefaultBuffer_B;
      if (tc.contains("bufferSize"))
        size_B = positive(tc["bufferSize"], name, "nvbandwidth.testcases." + tname + ".bufferSize");
      else if (nvb.contains("bufferSize"))
        size_B = positive(nvb["bufferSize"], name, "nvbandwidth.bufferSize");
      // The median over device pairs (cells are strings: "N/A" where a pair was not measured).
      std::vector<double> bw;
      for (const json& row : tc["bandwidth_matrix"])
        for (const json& cell : row) {
          std::string c = cell.is_string() ? cell.get<std::string>() : cell.dump();
          if (c != "N/A" && c != "0")
            bw.push_back(detail::number(c, name, 0, "nvbandwidth.testcases." + tname + ".bandwidth_matrix"));
        }
      if (bw.empty()) {
        m.notes.push_back(tname + ": no device pair measured, not used");
        continue;
      }
      std::sort(bw.begin(), bw.end());
      double gbps = bw[bw.size() / 2];
      bool host = tname.find("host") != std::string::npos;
      auto it = std::find_if(m.series.begin(), m.series.end(), [&](const Series& s) { return s.name == tname; });
      if (it == m.series.end()) {
        Series s;
        s.name = tname;
        s.measured = Measured::kTransfer;
        s.fabric = host ? core::FabricClass::kPcie : detail::required_fabric(opt.fabric, name, "nvbandwidth");
        s.features = {"bytes"};
        m.series.push_back(std::move(s));
        it = m.series.end() - 1;
      }
      it->points.push_back({{size_B}, size_B / (gbps * 1e9), 0}); // GB/s, decimal
    }
  }
  return m;
}

} // namespace xattn::calibrate
