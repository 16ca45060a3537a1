#include "sim/study/table.hpp"
#include "sim/core/atomic_file.hpp"

#include "sim/core/fabric.hpp"
#include "sim/engine/driver.hpp"
#include "sim/study/compare.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace xattn::sim::study
{
namespace fs = std::filesystem;
using nlohmann::json;

namespace
{
using engine::kDecisionFields;
using engine::kLatencyFields;
using engine::kLatencyFigures;

// A latency figure's columns are named by its first word: step_latency_s.p99 is step_p99_s.
std::string column_prefix(std::string_view figure)
{
  return std::string(figure.substr(0, figure.find('_')));
}

// An ensemble figure's column: its path with dots as underscores (ttft_s.mean: ttft_s_mean).
std::string ensemble_column(std::string figure)
{
  std::replace(figure.begin(), figure.end(), '.', '_');
  return figure;
}

// A figure in the shortest text that reads back the same value.
template <class T>
std::string number(T v)
{
  return fmt::format("{}", v);
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

std::optional<engine::RunResult> point_result(const std::string& dir, const std::string& id)
{
  const fs::path sp = fs::path(point_dir(dir, id)) / "summary.json";
  if (!fs::exists(sp)) return std::nullopt;
  // A summary is renamed into place whole: unreadable means foreign, counted missing. One of a
  // newer xattn's format is refused (its keys may mean other things).
  std::ifstream in(sp);
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  engine::check_summary_format(j, sp.string());
  try {
    return engine::run_result(j);
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

Table gather(const Manifest& m, const std::string& dir)
{
  Table t;
  std::ostringstream out;
  out << "point";
  for (const std::string& k : m.keys)
    out << "," << csv_field(k);
  out << ",seed,policy,requests,steps";
  for (const auto& [figure, member] : kLatencyFigures)
    for (const auto& [s, field] : kLatencyFields)
      out << "," << column_prefix(figure) << "_" << s << "_s";
  out << ",goodput_share,goodput_requests_per_s,wire_bytes";
  for (core::FabricClass f : core::kAllFabrics)
    out << ",wire_bytes_" << core::to_string(f);
  for (const auto& [d, field] : kDecisionFields)
    out << ",decisions_" << d;
  if (m.ensemble > 0)
    for (const char* figure : kComparedFigures)
      out << "," << ensemble_column(figure) << "_p5," << ensemble_column(figure) << "_p95";
  out << ",overloaded,simulated_time_s,invariants_ok\n";

  for (const ManifestPoint& p : m.points) {
    const std::optional<engine::RunResult> read = point_result(dir, p.id);
    if (!read) {
      t.missing.push_back(p.id);
      continue;
    }
    const engine::RunResult& s = *read;
    ++t.points_complete;
    for (const auto& [policy, fig] : s.policies) {
      out << p.id;
      for (const auto& [k, v] : p.values)
        out << "," << csv_field(v);
      out << "," << p.seed << "," << policy << "," << number(fig.requests) << "," << number(fig.steps);
      for (const auto& [figure, member] : kLatencyFigures)
        for (const auto& [st, field] : kLatencyFields)
          out << "," << number((fig.*member).*field);
      out << "," << number(fig.goodput.share) << "," << number(fig.goodput.requests_per_s);
      out << "," << number(fig.wire_bytes);
      for (core::FabricClass f : core::kAllFabrics)
        out << "," << number(fig.wire_bytes_by_fabric[static_cast<std::size_t>(f)]);
      for (const auto& [d, field] : kDecisionFields)
        out << "," << number(fig.decisions.*field);
      if (m.ensemble > 0)
        for (const char* figure : kComparedFigures) {
          const engine::Spread* sp = s.ensemble ? s.ensemble->spread(policy, figure) : nullptr;
          out << "," << (sp ? number(sp->p5) : "") << "," << (sp ? number(sp->p95) : "");
        }
      out << "," << (fig.load.overloaded ? "true" : "false"); // its latencies a growing queue's: not ranked
      out << "," << number(fig.simulated_time_s);
      out << "," << (fig.invariants.ok ? "true" : "false") << "\n";
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
