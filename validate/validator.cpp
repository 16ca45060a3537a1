#include "validate/validator.hpp"
#include "sim/core/atomic_file.hpp"

#include "sim/core/units.hpp"
#include "sim/engine/driver.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <numeric>

namespace xattn::validate
{
namespace fs = std::filesystem;

Micro micro_for(const MeasuredRow& row)
{
  const core::FabricClass fabric = row.fabric.value_or(core::FabricClass::kIbSpine);
  Micro m;
  if (row.op == Op::kTransfer) {
    m = transfer_micro(fabric, row.bytes, row.blocks, row.concurrency, row.transport);
  } else {
    m.fabric = fabric;
    m.requesters = row.concurrency;
    m.holders = row.holders;
    m.rows = static_cast<int>(row.mq);
    m.chunk_tokens = row.ct / row.holders;
    m.transport = row.transport;
    std::vector<int> chunks(static_cast<std::size_t>(row.holders));
    std::iota(chunks.begin(), chunks.end(), 0);
    m.requests.clear();
    for (int r = 0; r < row.concurrency; ++r)
      m.requests.push_back({0.0, r, chunks, 1});
    m.policies = {row.op == Op::kRoute ? "route" : row.op == Op::kFetch ? "fetch" : "local"};
    if (row.blocks > 0)
      m.profile_set[row.op == Op::kRoute ? "dispatch.route_blocks" : "dispatch.fetch_blocks"] =
          std::to_string(row.blocks);
  }
  m.requester_gpus = row.src;
  m.holder_gpus = row.dst;
  return m;
}

ErrorStats error_stats(const std::vector<PointResult>& points, const std::string& group)
{
  ErrorStats s;
  s.group = group;
  double wire_sum = 0;
  std::size_t wire_n = 0;
  for (const PointResult& p : points) {
    if (!group.empty() && p.row.group != group) continue;
    ++s.points;
    s.mape += p.error;
    s.max_error = std::max(s.max_error, p.error);
    if (p.row.wire_bytes && p.simulated_wire_bytes && *p.row.wire_bytes > 0) {
      wire_sum += std::abs(*p.simulated_wire_bytes - *p.row.wire_bytes) / *p.row.wire_bytes;
      ++wire_n;
    }
  }
  if (s.points > 0) s.mape /= static_cast<double>(s.points);
  if (wire_n > 0) s.wire_mape = wire_sum / static_cast<double>(wire_n);
  return s;
}

ValidationReport validate_measured(const MeasuredData& data, MicroRunner& runner, bool progress)
{
  ValidationReport r;
  r.file = data.file;
  r.format = data.format;
  r.profile = runner.profile_path();
  r.notes = data.notes;
  core::Diagnostics diags;
  for (const MeasuredRow& row : data.rows)
    if (!row.src.empty() && runner.nominal())
      diags.add({data.file, row.line, 0, "src", "endpoints need a topology: pass --topology"});
  diags.throw_if_any();
  for (const MeasuredRow& row : data.rows) {
    const Micro m = micro_for(row);
    MicroOutcome out;
    try {
      out = runner.run(m);
    } catch (const core::InputError& e) {
      // The micro-scenario is ours, written to a temporary file: the problem is the row's.
      std::vector<core::Diagnostic> at_row;
      for (const core::Diagnostic& d : e.diagnostics())
        at_row.push_back({data.file, row.line, 0, "",
                          "this row cannot be simulated: its micro-scenario's " + d.key + ": " + d.message});
      throw core::InputError(at_row);
    }
    const PolicyOutcome& p = out.at(m.policies.front());
    r.invariants_ok = r.invariants_ok && out.invariants_ok;
    PointResult pr;
    pr.row = row;
    pr.simulated_s = p.step_mean_s;
    pr.error = std::abs(pr.simulated_s - row.latency_s) / row.latency_s;
    if (row.wire_bytes) pr.simulated_wire_bytes = p.wire_bytes / row.concurrency;
    r.points.push_back(pr);
    if (progress && r.points.size() % 100 == 0)
      std::cerr << "validate: " << r.points.size() << " of " << data.rows.size() << " points simulated\n";
  }
  std::map<std::string, int> groups;
  for (const PointResult& p : r.points)
    groups[p.row.group] = 0;
  for (const auto& [g, unused] : groups)
    r.groups.push_back(error_stats(r.points, g));
  r.overall = error_stats(r.points, "");
  r.overall.group = "overall";
  r.engine_runs = runner.runs();
  return r;
}

namespace
{
std::string describe(const MeasuredRow& row)
{
  std::string s = std::string(to_string(row.op)) + " " +
                  (row.fabric ? std::string(core::to_string(*row.fabric)) : row.src + "->" + row.dst);
  if (row.op == Op::kTransfer)
    s += " " + core::format_bytes(core::Bytes(row.bytes));
  else
    s += fmt::format(" M_q={} c_t={} H={}", row.mq, row.ct, row.holders);
  if (row.concurrency > 1) s += fmt::format(" x{}", row.concurrency);
  if (row.transport == core::Transport::kProxy) s += " proxy";
  return s;
}

nlohmann::json stats_json(const ErrorStats& s)
{
  nlohmann::json j{{"group", s.group}, {"points", s.points}, {"mape", s.mape}, {"max_error", s.max_error}};
  if (s.wire_mape >= 0) j["wire_mape"] = s.wire_mape;
  if (s.floor >= 0) j.update({{"floor", s.floor}, {"floor_points", s.floor_points}, {"limit", s.limit}});
  return j;
}

// validation.json: what a report needs beside points.csv. DO NOT CHANGE the meaning of a field;
// add fields, and bump the format's number when one must change.
nlohmann::json summary_json(const ValidationReport& r)
{
  nlohmann::json groups = nlohmann::json::array();
  for (const ErrorStats& g : r.groups)
    groups.push_back(stats_json(g));
  return {{"format", "xattn-validation/1"},
          {"kind", r.kind},
          {"file", r.file},
          {"profile", r.profile},
          {"groups", groups},
          {"overall", stats_json(r.overall)},
          {"invariants_ok", r.invariants_ok}};
}

std::vector<const PointResult*> worst_points(const ValidationReport& r, std::size_t n)
{
  std::vector<const PointResult*> w;
  for (const PointResult& p : r.points)
    w.push_back(&p);
  std::stable_sort(w.begin(), w.end(), [](auto* a, auto* b) { return a->error > b->error; });
  if (w.size() > n) w.resize(n);
  return w;
}
} // namespace

std::string report_table(const ValidationReport& r, std::size_t worst)
{
  std::string o =
      fmt::format("validated {} points from {} ({}) against profile {}{}; {} engine runs\n", r.points.size(), r.file,
                  r.format, r.profile, r.topology.empty() ? "" : " on " + r.topology, r.engine_runs);
  o += fmt::format("{:<36} {:>7} {:>9} {:>9} {:>10}\n", "group", "points", "MAPE", "max err", "wire MAPE");
  auto line = [&](const ErrorStats& s) {
    o += fmt::format("{:<36} {:>7} {:>8.2f}% {:>8.2f}% {:>10}\n", s.group, s.points, 100 * s.mape, 100 * s.max_error,
                     s.wire_mape < 0 ? std::string("-") : fmt::format("{:.2f}%", 100 * s.wire_mape));
  };
  for (const ErrorStats& g : r.groups)
    line(g);
  line(r.overall);
  o += fmt::format("worst points:\n{:<48} {:>6} {:>12} {:>12} {:>8}\n", "configuration", "line", "measured",
                   "simulated", "error");
  for (const PointResult* p : worst_points(r, worst))
    o += fmt::format("{:<48} {:>6} {:>12} {:>12} {:>7.2f}%\n", describe(p->row), p->row.line,
                     core::format_seconds(core::Seconds(p->row.latency_s)),
                     core::format_seconds(core::Seconds(p->simulated_s)), 100 * p->error);
  for (const std::string& n : r.notes)
    o += "note: " + n + "\n";
  if (!r.invariants_ok) o += "warning: an engine invariant failed in a micro-scenario\n";
  return o;
}

std::string write_report(const ValidationReport& r, const std::string& dir, std::size_t worst, const std::string& table)
{
  fs::create_directories(dir);
  std::string csv =
      "group,primitive,fabric,mq,ct,holders,concurrency,bytes,line,measured_s,simulated_s,error,floor_s\n";
  for (const PointResult& p : r.points)
    csv += fmt::format("{},{},{},{},{},{},{},{},{},{:.9g},{:.9g},{:.6g},{}\n", p.row.group, to_string(p.row.op),
                       p.row.fabric ? core::to_string(*p.row.fabric) : "", p.row.mq, p.row.ct, p.row.holders,
                       p.row.concurrency, p.row.bytes, p.row.line, p.row.latency_s, p.simulated_s, p.error,
                       p.floor_s ? fmt::format("{:.9g}", *p.floor_s) : "");
  const std::string points = (fs::path(dir) / "points.csv").string();
  core::write_file_atomically(points, csv);
  core::write_file_atomically((fs::path(dir) / "validation.json").string(), summary_json(r).dump(2) + "\n");

  // The plot: Debian's matplotlib (/usr/bin/python3 has it; the pyenv python3 on PATH does not), drawn under a
  // temporary name, then renamed.
  std::string plot_status = "plot skipped: /usr/bin/python3 with matplotlib not found (points.csv has the data)";
  const fs::path png = fs::path(dir) / "measured_vs_simulated.png";
  const fs::path tmp = fs::path(dir) / ".measured_vs_simulated.tmp.png";
  if (fs::exists("/usr/bin/python3") && std::system("/usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1") == 0) {
    const std::string script =
        "import csv,sys\nimport matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
        "rows=list(csv.DictReader(open(sys.argv[1])))\ngroups=sorted(set(r['group'] for r in rows))\n"
        "fig,ax=plt.subplots(figsize=(6,6))\n"
        "for g in groups:\n  m=[float(r['measured_s'])*1e6 for r in rows if r['group']==g]\n"
        "  s=[float(r['simulated_s'])*1e6 for r in rows if r['group']==g]\n  ax.scatter(m,s,s=8,label=g)\n"
        "lo=min(min(float(r['measured_s']),float(r['simulated_s'])) for r in rows)*1e6\n"
        "hi=max(max(float(r['measured_s']),float(r['simulated_s'])) for r in rows)*1e6\n"
        "ax.plot([lo,hi],[lo,hi],'k--',lw=1,label='simulated = measured')\n"
        "ax.set_xscale('log');ax.set_yscale('log');ax.set_xlabel('measured (us)');ax.set_ylabel('simulated (us)')\n"
        "ax.set_title(sys.argv[3]);ax.legend(fontsize=7);fig.tight_layout();fig.savefig(sys.argv[2],dpi=110)\n";
    const fs::path py = fs::path(dir) / ".plot.py";
    core::write_file_atomically(py.string(), script);
    const std::string title = fmt::format("overall MAPE {:.1f}%", 100 * r.overall.mape);
    const std::string cmd = "/usr/bin/python3 '" + py.string() + "' '" + points + "' '" + tmp.string() + "' '" + title +
                            "' >/dev/null 2>&1";
    if (std::system(cmd.c_str()) == 0 && fs::exists(tmp)) {
      fs::rename(tmp, png);
      plot_status = "plot: " + png.string();
    } else {
      plot_status = "plot skipped: matplotlib failed (points.csv has the data)";
    }
    std::error_code ec;
    fs::remove(py, ec);
    fs::remove(tmp, ec);
  }
  std::string md =
      "# xattn " + std::string(r.kind == "check" ? "calibrate check" : "validate") + "\n\n```\n" +
      (table.empty() ? report_table(r, worst) : table) + "```\n\n" +
      "Columns of points.csv: group, primitive, fabric, mq, ct, holders, concurrency, bytes (transfers), "
      "line (in the measured file), measured_s, simulated_s (engine step latency), error (relative), floor_s "
      "(calibrate check: the held-out point interpolated between its measured neighbours in the fit "
      "half; empty otherwise).\n\n" +
      plot_status + "\n";
  core::write_file_atomically((fs::path(dir) / "report.md").string(), md);
  return plot_status;
}

} // namespace xattn::validate
