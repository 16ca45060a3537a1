// Importers for text outputs: the plain CSV, vidur's profiling CSV, NVSHMEM perftest stdout.
#include "calibrate/import_util.hpp"
#include "calibrate/importers.hpp"
#include "sim/core/units.hpp"

#include <algorithm>
#include <map>
#include <sstream>

namespace xattn::calibrate
{
namespace
{

Series& series_named(Measurements& m, const std::string& key, int line)
{
  auto it = std::find_if(m.series.begin(), m.series.end(), [&](const Series& s) { return s.name == key; });
  if (it != m.series.end()) return *it;
  Series s;
  s.name = key;
  s.measured = Measured::kTransfer;
  s.features = {"bytes"};
  s.line = line;
  m.series.push_back(std::move(s));
  return m.series.back();
}

int column(const std::vector<std::string>& header, std::string_view name)
{
  auto it = std::find(header.begin(), header.end(), name);
  return it == header.end() ? -1 : static_cast<int>(it - header.begin());
}

} // namespace

Measurements import_csv(const std::string& text, const std::string& name)
{
  Measurements m{name, "csv", {}, {}};
  std::vector<std::string> lines = detail::lines_of(text);
  if (lines.empty()) core::fail(name, 0, 0, "", "empty file");
  std::vector<std::string> header = detail::split_csv(lines[0]);
  int c_fabric = column(header, "fabric"), c_bytes = column(header, "bytes"), c_lat = column(header, "latency");
  int c_transport = column(header, "transport"), c_dispatch = column(header, "dispatch");
  if (c_fabric < 0 || c_bytes < 0 || c_lat < 0)
    core::fail(name, 1, 1, "", "expected a header with columns fabric,bytes,latency (optional: transport,dispatch)");
  core::Diagnostics diags;
  bool defaulted = false;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    int ln = static_cast<int>(i + 1);
    if (detail::trim(lines[i]).empty() || lines[i][0] == '#') continue;
    std::vector<std::string> cells = detail::split_csv(lines[i]);
    if (cells.size() != header.size()) {
      diags.add({name, ln, 0, "",
                 "expected " + std::to_string(header.size()) + " cells, got " + std::to_string(cells.size())});
      continue;
    }
    // A cell's problem names its column (1-based position of the cell on the line) and key.
    const auto cell = [&](int c, const char* key, const auto& parse) -> double {
      const int col = detail::cell_column(lines[i], c);
      double v = 0;
      try {
        v = parse(cells[c]);
      } catch (const core::UnitError& e) {
        core::fail(name, ln, col, key, e.what());
      }
      if (!(v > 0)) core::fail(name, ln, col, key, "must be greater than zero, got '" + cells[c] + "'");
      return v;
    };
    try {
      core::FabricClass f = detail::fabric(cells[c_fabric], name, ln, "fabric");
      const double bytes = cell(c_bytes, "bytes", [&](const std::string& b) {
        return std::all_of(b.begin(), b.end(), [](char c) { return c >= '0' && c <= '9'; })
                   ? detail::number(b, name, ln, "bytes")
                   : core::parse_bytes(b).value();
      });
      const double t = cell(c_lat, "latency", [](const std::string& l) { return core::parse_seconds(l).value(); });
      // A table without a transport says nothing of who issued its transfers: the tables users
      // have (NCCL, MPI, nccl-tests, vidur) are host-launched, so it reads as proxy, as vidur's does.
      const bool given = c_transport >= 0 && !cells[c_transport].empty();
      defaulted = defaulted || !given;
      const std::string transport = given ? cells[c_transport] : "proxy";
      const std::string dispatch = c_dispatch >= 0 ? cells[c_dispatch] : "";
      const auto tr = core::parse_transport(transport);
      if (!tr) core::fail(name, ln, 0, "transport", "expected gpu, proxy or nothing, got '" + transport + "'");
      if (!dispatch.empty() && dispatch != "single-block" && dispatch != "bulk")
        core::fail(name, ln, 0, "dispatch", "expected single-block, bulk or nothing, got '" + dispatch + "'");
      const bool single = dispatch == "single-block";
      Series& s = series_named(m, transfer_series_name(f, tr, single), ln);
      s.fabric = f;
      s.transport = tr;
      s.single_block = single;
      s.points.push_back({{bytes}, t, ln});
    } catch (const core::UnitError& e) {
      diags.add({name, ln, 0, "", e.what()});
    } catch (const core::InputError& e) {
      for (const auto& d : e.diagnostics())
        diags.add(d);
    }
  }
  diags.throw_if_any();
  if (defaulted)
    m.notes.push_back("rows without a transport are read as host-launched (proxy), as NCCL and MPI tables are; "
                      "a transport column (gpu|proxy) says otherwise");
  return m;
}

Measurements import_vidur(const std::string& text, const std::string& name, const ImportOptions& opt)
{
  Measurements m{name, "vidur", {}, {}};
  std::vector<std::string> lines = detail::lines_of(text);
  if (lines.empty()) core::fail(name, 0, 0, "", "empty file");
  std::vector<std::string> header = detail::split_csv(lines[0]);
  int c_median = column(header, "time_stats.send_recv.median"), c_size = column(header, "size");
  int c_dpn = column(header, "devices_per_node"), c_coll = column(header, "collective");
  if (c_median < 0 || c_size < 0 || c_dpn < 0)
    core::fail(name, 1, 1, "", "expected vidur send_recv columns time_stats.send_recv.median, size, devices_per_node");
  for (std::size_t i = 1; i < lines.size(); ++i) {
    int ln = static_cast<int>(i + 1);
    if (detail::trim(lines[i]).empty()) continue;
    std::vector<std::string> cells = detail::split_csv(lines[i]);
    if (cells.size() != header.size())
      core::fail(name, ln, 0, "",
                 "expected " + std::to_string(header.size()) + " cells, got " + std::to_string(cells.size()));
    if (c_coll >= 0 && cells[c_coll] != "send_recv")
      core::fail(name, ln, 0, "collective",
                 "only send_recv rows are point-to-point transfers, got '" + cells[c_coll] + "'");
    double dpn = detail::number(cells[c_dpn], name, ln, "devices_per_node");
    double size = detail::number(cells[c_size], name, ln, "size");
    double ms = detail::number(cells[c_median], name, ln, "time_stats.send_recv.median");
    if (!(size > 0) || !(ms > 0)) core::fail(name, ln, 0, "", "size and time must be greater than zero");
    // Both ranks in one node cross NVLink (NVSwitch); one rank per node crosses the network.
    core::FabricClass f = dpn >= 2 ? core::FabricClass::kNvlink : opt.inter_node_fabric;
    Series& s = series_named(m, transfer_series_name(f, core::Transport::kProxy, false), ln);
    s.fabric = f;
    s.transport = core::Transport::kProxy; // host-launched NCCL
    s.points.push_back({{size}, ms * 1e-3, ln});
  }
  return m;
}

Measurements import_nvshmem(const std::string& text, const std::string& name, const ImportOptions& opt)
{
  Measurements m{name, "nvshmem", {}, {}};
  core::FabricClass f = detail::required_fabric(opt.fabric, name, "nvshmem");
  std::vector<std::string> lines = detail::lines_of(text);
  std::string job;
  bool bandwidth = false, in_table = false;
  auto add = [&](const std::string& jobname, const std::string& scope, double size, double value, bool bw, int ln) {
    // A put issued by one thread, warp or block is a single-block dispatch; bandwidth tests use grids.
    bool single = !bw && (scope == "thread" || scope == "warp" || scope == "block");
    Series& s = series_named(m, jobname + "/" + scope, ln);
    s.fabric = f;
    s.transport = core::Transport::kGpu; // NVSHMEM puts are device-initiated
    s.single_block = single;
    s.points.push_back({{size}, bw ? size / (value * 1e9) : value * 1e-6, ln});
  };
  for (std::size_t i = 0; i < lines.size(); ++i) {
    int ln = static_cast<int>(i + 1);
    const std::string& line = lines[i];
    if (line.rfind("&&&& PERF ", 0) == 0) {
      // &&&& PERF <job>___<scope>___size__<N>___<var> <value> <sign><units>
      std::istringstream ss(line.substr(10));
      std::string tag, value, units;
      ss >> tag >> value >> units;
      auto p1 = tag.find("___"), p2 = tag.find("___size__"), p3 = tag.find("___", p2 + 9);
      if (p1 == std::string::npos || p2 == std::string::npos || p3 == std::string::npos)
        core::fail(name, ln, 0, "", "unreadable NVSHMEM PERF line");
      bool bw = units.find("GB/s") != std::string::npos;
      add(tag.substr(0, p1), tag.substr(p1 + 3, p2 - p1 - 3),
          detail::number(tag.substr(p2 + 9, p3 - p2 - 9), name, ln, "size"), detail::number(value, name, ln, "value"),
          bw, ln);
      continue;
    }
    std::string t = detail::trim(line);
    if (t.empty()) {
      in_table = false;
      continue;
    }
    if (t[0] == '#') {
      job = detail::trim(t.substr(1));
      in_table = false;
      continue;
    }
    if (t.rfind("size(B)", 0) == 0) {
      bandwidth = t.find("GB/s") != std::string::npos;
      if (!bandwidth && t.find("us)") == std::string::npos)
        core::fail(name, ln, 0, "", "expected a latency (us) or bandwidth (GB/s) table header");
      in_table = true;
      continue;
    }
    if (!in_table) continue;
    std::istringstream ss(t);
    std::string size, scope, value;
    ss >> size >> scope >> value;
    add(job.empty() ? "nvshmem" : job, scope, detail::number(size, name, ln, "size(B)"),
        detail::number(value, name, ln, "value"), bandwidth, ln);
  }
  if (m.series.empty()) core::fail(name, 0, 0, "", "no NVSHMEM perftest table found");
  return m;
}

} // namespace xattn::calibrate
