// The timeline's file: the --window and --timeline flags checked before a run, and the policies'
// fragments joined into one trace-event file (timeline.hpp; docs/file-formats.md, "Timeline").
#include "sim/core/atomic_file.hpp"
#include "sim/core/error.hpp"
#include "sim/engine/timeline.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

namespace xattn::sim::engine
{
namespace fs = std::filesystem;

TimeWindow parse_window(std::string_view text)
{
  auto bad = [](const std::string& why) { core::fail("command line", 0, 0, "--window", why); };
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos)
    bad("expected FROM:TO in simulated time with units (0s:2s, 500ms:1.5s), got '" + std::string(text) + "'");
  TimeWindow w;
  try {
    w.from = core::parse_seconds(text.substr(0, colon));
    w.to = core::parse_seconds(text.substr(colon + 1));
  } catch (const core::UnitError& e) {
    bad(e.what());
  }
  if (!(w.to > w.from))
    bad("the window must end after it begins, got '" + std::string(text) + "' (FROM:TO, TO > FROM)");
  return w;
}

void check_timeline_path(const std::string& path)
{
  const fs::path p(path);
  const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  std::error_code ec;
  if (p.filename().empty() || fs::is_directory(p, ec))
    core::fail(path, 0, 0, "--timeline", "names a folder: expected a file to write");
  if (!fs::is_directory(dir, ec)) core::fail(path, 0, 0, "--timeline", "no such folder: " + dir.string());
}

void write_timeline(const Scenario& sc, const fs::path& parts, const std::string& path, const TimeWindow& window)
{
  nlohmann::json window_s = {window.from.value(), nullptr};
  if (std::isfinite(window.to.value())) window_s[1] = window.to.value();
  const nlohmann::json other = {{"generator", "xattn run"},
                                {"scenario", sc.name},
                                {"policies", sc.policies},
                                {"clock", "simulated"},
                                {"window_s", window_s}};
  core::write_file_atomically(
      path,
      [&](std::ostream& out) {
        out << R"({"displayTimeUnit":"ms","otherData":)" << other.dump() << R"(,"traceEvents":[)"
            << "\n";
        bool any = false;
        for (const std::string& p : sc.policies) {
          std::ifstream in(parts / (p + ".timeline.json"), std::ios::binary);
          if (!in || in.peek() == std::ifstream::traits_type::eof()) continue; // (an empty rdbuf sets failbit)
          out << (any ? ",\n" : "") << in.rdbuf();
          any = true;
        }
        out << "\n]}\n";
      },
      "--timeline");
}

} // namespace xattn::sim::engine
