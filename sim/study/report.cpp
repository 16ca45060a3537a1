#include "sim/study/report.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/check.hpp"

#include "sim/core/resources.hpp"
#include "sim/engine/driver.hpp"
#include "sim/model/predict.hpp"
#include "sim/study/manifest.hpp"
#include "sim/study/table.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace xattn::sim::study
{
namespace fs = std::filesystem;
using nlohmann::json;

std::string crossover_csv(const engine::Scenario& sc, std::optional<double> reuse)
{
  XATTN_CHECK(!reuse || (std::isfinite(*reuse) && *reuse >= 0));
  std::string out = "fabric,mq,ct,reuse,decision,route_s,fetch_s,local_s,break_even_reuse\n";
  for (core::FabricClass f : core::kAllFabrics) {
    if (f == core::FabricClass::kSameGpu) continue;
    std::string rows;
    try {
      for (double mq = 16; mq <= 16384; mq *= 2)
        for (double ct = 64; ct <= 131072; ct *= 2) {
          PredictRequest r;
          r.mq = mq;
          r.ct = ct;
          r.transport = sc.transport;
          r.reuse = reuse.value_or(sc.predicate_prior_steps);
          r.fabric = f;
          Prediction p = predict(sc.model, sc.profile, r);
          rows += fmt::format("{},{:g},{:g},{:g},{},{:.6g},{:.6g},{:.6g},{:.6g}\n", core::to_string(f), mq, ct, r.reuse,
                              to_string(p.decision.choice), p.route.total().value(), p.fetch.total().value(),
                              p.local.total().value(), p.decision.break_even_reuse);
        }
    } catch (const std::exception&) {
      continue; // the profile does not price this fabric class: no map for it
    }
    out += rows;
  }
  return out;
}

namespace
{
std::string slurp(const fs::path& p)
{
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The scenario a run folder came from, as its report.md names it ("Scenario `path`").
std::string scenario_of_run(const fs::path& dir)
{
  std::smatch m;
  std::string md = slurp(dir / "report.md");
  if (std::regex_search(md, m, std::regex("Scenario `([^`]+)`")))
    for (fs::path p : {fs::path(m[1].str()), dir / m[1].str()})
      if (fs::exists(p)) return p.string();
  return "";
}

std::string python()
{
  const char* env = std::getenv("XATTN_PYTHON");
  return env != nullptr && *env != '\0' ? env : "/usr/bin/python3";
}

int shell(const std::string& cmd)
{
  int st = std::system(cmd.c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

std::string quote(const std::string& s)
{
  std::string q = "'";
  for (char c : s)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

/// Runs report.py on `dir`. Its exit 2 means the folder's own files disagree (report.py names them
/// on stderr): bad input, not a broken script.
void plot(const fs::path& script, const fs::path& dir)
{
  const int rc = shell(quote(python()) + " " + quote(script.string()) + " " + quote(dir.string()));
  if (rc == 2)
    core::fail(dir.string(), 0, 0, "", "the folder's files disagree (the message above names them); no report written");
  if (rc != 0)
    throw std::runtime_error("the plotting script " + script.string() + " failed (exit " + std::to_string(rc) + ")");
}
} // namespace

std::string write_report(const std::string& dir_in, const std::string& scenario, std::optional<double> reuse)
{
  if (reuse && !(std::isfinite(*reuse) && *reuse >= 0))
    core::fail("command line", 0, 0, "--reuse",
               fmt::format("{:g} is not a count of later uses (finite, >= 0)", *reuse));
  fs::path dir = fs::absolute(dir_in).lexically_normal();
  // A scenario's folder of runs (out/<name>/): its latest complete run.
  if (!fs::exists(dir / "summary.json") && !fs::exists(dir / "sweep.json") && fs::is_directory(dir / "latest"))
    dir = fs::canonical(dir / "latest");
  const bool is_sweep = fs::exists(dir / "sweep.json");
  const bool is_run = fs::exists(dir / "summary.json");
  const bool is_validation = fs::exists(dir / "validation.json") && fs::exists(dir / "points.csv");
  const bool is_capacity = fs::exists(dir / "capacity.json");
  if (!is_sweep && !is_run && !is_validation && !is_capacity)
    core::fail(dir.string(), 0, 0, "",
               "neither a run folder (summary.json), a sweep folder (sweep.json), a capacity folder "
               "(capacity.json) nor a validate or calibrate check folder (validation.json)");
  auto script = core::find_data("sim/study/report.py");
  if (!script) core::fail("command line", 0, 0, "report", "sim/study/report.py is not installed beside xattn");
  if (shell(quote(python()) + " -c 'import matplotlib' >/dev/null 2>&1") != 0)
    core::fail("command line", 0, 0, "report",
               "plots need Debian's python3-matplotlib for " + python() +
                   " (apt-get install python3-matplotlib, or .ci/install-deps.sh python3-matplotlib)");

  const fs::path rd = dir / "report";
  if (is_validation && !is_run && !is_sweep) {
    // Measured against simulated, per group: what report.py draws from points.csv.
    const json v = json::parse(slurp(dir / "validation.json"));
    json meta{{"kind", "validation"},
              {"dir", dir.string()},
              {"notes", json::array()},
              {"title", std::string(v.value("kind", "") == "check" ? "xattn calibrate check: " : "xattn validate: ") +
                            v.value("file", std::string("?"))},
              {"validation", v}};
    fs::create_directories(rd);
    core::write_file_atomically((rd / "meta.json").string(), meta.dump(2) + "\n");
    plot(*script, dir);
    return (dir / "report.html").string();
  }
  if (is_capacity && !is_run && !is_sweep) {
    // Each policy's probes against the load, the answers ringed (report_sweep.load_search).
    const json c = json::parse(slurp(dir / "capacity.json"));
    json meta{{"kind", "capacity"},
              {"dir", dir.string()},
              {"notes", json::array()},
              {"title", "xattn capacity: " + c.value("scenario", std::string("?"))}};
    fs::create_directories(rd);
    core::write_file_atomically((rd / "meta.json").string(), meta.dump(2) + "\n");
    plot(*script, dir);
    return (dir / "report.html").string();
  }
  json meta{{"kind", is_sweep ? "sweep" : "run"}, {"dir", dir.string()}, {"notes", json::array()}};
  std::string scen = scenario;
  if (is_sweep) {
    Manifest m = read_manifest(dir.string());
    write_table(m, dir.string());
    // A plan is a sweep over sizes with a verdict (plan.json): its page opens with the answer.
    const bool is_plan = fs::exists(dir / "plan.json");
    meta["title"] = (is_plan ? "xattn plan: " : "xattn sweep: ") + m.name;
    meta["plan"] = is_plan;
    meta["keys"] = m.keys;
    if (scen.empty()) scen = m.base;
  } else {
    const json summary = json::parse(slurp(dir / "summary.json"));
    engine::check_summary_format(summary, (dir / "summary.json").string());
    meta["title"] = "xattn run: " + summary.value("scenario", std::string("?"));
    if (scen.empty()) scen = scenario_of_run(dir);
  }
  fs::create_directories(rd);
  if (!scen.empty()) {
    engine::Scenario sc = engine::load_scenario(scen);
    core::write_file_atomically((rd / "crossover.csv").string(), crossover_csv(sc, reuse));
    meta["scenario"] = scen;
    meta["model"] = sc.model.name;
    meta["profile"] = sc.profile.name;
    meta["reuse"] = reuse.value_or(sc.predicate_prior_steps);
    meta["reuse_source"] = reuse ? "--reuse" : "engine.predicate_prior_steps";
  } else {
    fs::remove(rd / "crossover.csv");
    meta["notes"].push_back("no crossover map: the scenario file is unknown (pass --scenario FILE)");
    if (reuse) meta["notes"].push_back("--reuse has no map to apply to: the scenario file is unknown");
  }
  core::write_file_atomically((rd / "meta.json").string(), meta.dump(2) + "\n");
  plot(*script, dir);
  return (dir / "report.html").string();
}

} // namespace xattn::sim::study
