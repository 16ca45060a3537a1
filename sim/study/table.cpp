#include "sim/study/table.hpp"
#include "sim/core/atomic_file.hpp"

#include "sim/core/fabric.hpp"
#include "sim/engine/driver.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace xattn::sim::study
{
namespace fs = std::filesystem;
using nlohmann::json;

namespace
{
constexpr const char* kStats[] = {"mean", "p50", "p90", "p99", "max"};
constexpr const char* kDecisions[] = {"route", "fetch", "local", "cached", "same_gpu"};

std::string number(const json& j, const json::json_pointer& at)
{
  if (!j.contains(at) || j.at(at).is_null()) return "";
  const json& v = j.at(at);
  return v.is_string() ? v.get<std::string>() : v.dump();
}
} // namespace

std::string csv_field(const std::string& s)
{
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s)
    q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

Table gather(const Manifest& m, const std::string& dir)
{
  Table t;
  std::ostringstream out;
  out << "point";
  for (const std::string& k : m.keys)
    out << "," << csv_field(k);
  out << ",seed,policy,requests,steps";
  for (const char* s : kStats)
    out << ",step_" << s << "_s";
  for (const char* s : kStats)
    out << ",request_" << s << "_s";
  out << ",wire_bytes";
  for (core::FabricClass f : core::kAllFabrics)
    out << ",wire_bytes_" << core::to_string(f);
  for (const char* d : kDecisions)
    out << ",decisions_" << d;
  out << ",simulated_time_s,invariants_ok\n";

  for (const ManifestPoint& p : m.points) {
    const fs::path sp = fs::path(point_dir(dir, p.id)) / "summary.json";
    if (!fs::exists(sp)) {
      t.missing.push_back(p.id);
      continue;
    }
    std::ifstream in(sp);
    json s;
    try {
      s = json::parse(in);
    } catch (const json::exception&) {
      t.missing.push_back(p.id); // a summary is renamed into place whole: unreadable means foreign
      continue;
    }
    ++t.points_complete;
    const json policies = s.value("policies", json::object());
    const json inv = s.value("invariants", json::object());
    for (const auto& [policy, fig] : policies.items()) {
      out << p.id;
      for (const auto& [k, v] : p.values)
        out << "," << csv_field(v);
      out << "," << p.seed << "," << policy << "," << number(fig, "/requests"_json_pointer) << ","
          << number(fig, "/steps"_json_pointer);
      for (const char* st : kStats)
        out << "," << number(fig, json::json_pointer(std::string("/step_latency_s/") + st));
      for (const char* st : kStats)
        out << "," << number(fig, json::json_pointer(std::string("/request_latency_s/") + st));
      out << "," << number(fig, "/wire_bytes"_json_pointer);
      for (core::FabricClass f : core::kAllFabrics)
        out << "," << number(fig, json::json_pointer("/wire_bytes_by_fabric/" + std::string(core::to_string(f))));
      for (const char* d : kDecisions)
        out << "," << number(fig, json::json_pointer(std::string("/decisions/") + d));
      out << "," << number(fig, "/simulated_time_s"_json_pointer);
      bool ok = inv.contains(policy) ? inv[policy].value("ok", false) : inv.value("ok", false);
      out << "," << (ok ? "true" : "false") << "\n";
      ++t.rows;
    }
  }
  t.csv = out.str();
  return t;
}

Table write_table(const Manifest& m, const std::string& dir)
{
  Table t = gather(m, dir);
  core::write_file_atomically((fs::path(dir) / "results.csv").string(), t.csv);
  return t;
}

} // namespace xattn::sim::study
