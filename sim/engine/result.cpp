#include "sim/engine/result.hpp"

#include "sim/engine/figures.hpp"

#include "sim/core/error.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <type_traits>

namespace xattn::sim::engine
{

std::string invariant_problem(std::string_view name, const std::string& what)
{
  return std::string(name) + ": " + what;
}

namespace
{
using nlohmann::json;

// A struct of named fields (kLatencyFields, kDecisionFields, kEngineFields) to and from its JSON object.
template <class T, class Fields>
json fields_json(const T& v, const Fields& fields)
{
  json j = json::object();
  for (const auto& [key, field] : fields)
    j[key] = v.*field;
  return j;
}

template <class T, class Fields>
T fields_from(const json& j, const Fields& fields)
{
  T v;
  for (const auto& [key, field] : fields)
    v.*field = j.value(key, std::remove_reference_t<decltype(v.*field)>{});
  return v;
}

json latency(const LatencyStats& s)
{
  return fields_json(s, kLatencyFields);
}
LatencyStats latency(const json& j)
{
  return fields_from<LatencyStats>(j, kLatencyFields);
}
json decisions(const Decisions& d)
{
  return fields_json(d, kDecisionFields);
}
Decisions decisions(const json& j)
{
  return fields_from<Decisions>(j, kDecisionFields);
}

// summary.json's "load" object, its numbers by name.
constexpr std::array<std::pair<const char*, double LoadFigures::*>, 9> kLoadFields{
    {{"window_s", &LoadFigures::window_s},
     {"offered_tokens_per_s", &LoadFigures::offered_tokens_per_s},
     {"delivered_tokens_per_s", &LoadFigures::delivered_tokens_per_s},
     {"offered_requests_per_s", &LoadFigures::offered_requests_per_s},
     {"delivered_requests_per_s", &LoadFigures::delivered_requests_per_s},
     {"steady_offered_tokens_per_s", &LoadFigures::steady_offered_tokens_per_s},
     {"steady_delivered_tokens_per_s", &LoadFigures::steady_delivered_tokens_per_s},
     {"backlog_requests", &LoadFigures::backlog_requests},
     {"backlog_tokens", &LoadFigures::backlog_tokens}}};

json load(const LoadFigures& f)
{
  json j = fields_json(f, kLoadFields);
  j["overloaded"] = f.overloaded;
  j["gpus"] = f.gpus;
  j["steady_delivered_share"] = f.steady_share(); // written for readers; computed again on reading
  return j;
}
LoadFigures load(const json& j)
{
  LoadFigures f = fields_from<LoadFigures>(j, kLoadFields);
  f.overloaded = j.value("overloaded", false);
  f.gpus = j.value("gpus", std::uint64_t{0});
  return f;
}

// summary.json's "goodput": {"share", "requests_per_s", "bounds": {FIGURE: max_s}}.
json goodput(const Goodput& g)
{
  json bounds = json::object();
  for (const RequestBound& b : g.bounds)
    bounds[request_figure_name(b.figure)] = b.max_s;
  return {{"share", g.share}, {"requests_per_s", g.requests_per_s}, {"bounds", bounds}};
}
Goodput goodput(const json& j)
{
  Goodput g{.share = j.value("share", 0.0), .requests_per_s = j.value("requests_per_s", 0.0), .bounds = {}};
  const json bounds = j.contains("bounds") && j["bounds"].is_object() ? j["bounds"] : json::object();
  for (const auto& [name, figure] : kRequestFigures)
    if (bounds.contains(name)) g.bounds.push_back({figure, bounds[name].get<double>()});
  return g;
}

json invariants(const Invariants& v)
{
  return {{"ok", v.ok},
          {"all_requests_finished", v.all_requests_finished},
          {"unfinished", v.unfinished},
          {"bytes_accounted", v.bytes_accounted},
          {"caches_within_budget", v.caches_within_budget},
          {"gpus_within_wall", v.gpus_within_wall},
          {"simgrid_bytes_handed", v.simgrid_bytes_handed},
          {"simgrid_bytes_completed", v.simgrid_bytes_completed},
          {"step_bound_violations", v.step_bound_violations},
          {"problems", v.problems}};
}

Invariants invariants(const json& j)
{
  Invariants v;
  v.ok = j.value("ok", false);
  v.all_requests_finished = j.value("all_requests_finished", v.ok);
  v.unfinished = j.value("unfinished", std::uint64_t{0});
  v.bytes_accounted = j.value("bytes_accounted", v.ok);
  v.caches_within_budget = j.value("caches_within_budget", true); // not checked before it was written
  v.gpus_within_wall = j.value("gpus_within_wall", true);         // likewise
  v.simgrid_bytes_handed = j.value("simgrid_bytes_handed", 0.0);
  v.simgrid_bytes_completed = j.value("simgrid_bytes_completed", 0.0);
  v.step_bound_violations = j.value("step_bound_violations", std::uint64_t{0});
  v.problems = j.value("problems", std::vector<std::string>{});
  return v;
}

json section(const json& j, const char* key)
{
  return j.contains(key) && j[key].is_object() ? j[key] : json::object();
}

} // namespace

std::string request_figure_names(std::string_view sep)
{
  std::string out;
  for (const auto& [name, figure] : kRequestFigures)
    out += (out.empty() ? "" : std::string(sep)) + name;
  return out;
}

std::optional<RequestFigure> request_figure(std::string_view name)
{
  for (const auto& [n, figure] : kRequestFigures)
    if (name == n) return figure;
  return std::nullopt;
}

const Spread* Ensemble::spread(std::string_view policy, std::string_view figure) const
{
  for (const auto& [name, figs] : policies)
    if (name == policy)
      for (const auto& [f, s] : figs)
        if (f == figure) return &s;
  return nullptr;
}

const PolicyResult* RunResult::find(const std::string& name) const
{
  for (const auto& [n, p] : policies)
    if (n == name) return &p;
  return nullptr;
}

json to_json(const PolicyResult& r)
{
  json by_fabric = json::object();
  for (core::FabricClass f : core::kAllFabrics)
    by_fabric[std::string(core::to_string(f))] = r.wire_bytes_by_fabric[static_cast<std::size_t>(f)];
  json j = {{"requests", r.requests},
            {"arrived", r.arrived},
            {"steps", r.steps},
            {"iterations", r.iterations},
            {"step_latency_s", latency(r.step_latency_s)},
            {"ttft_s", latency(r.ttft_s)},
            {"tpot_s", latency(r.tpot_s)},
            {"itl_s", latency(r.itl_s)},
            {"e2e_s", latency(r.e2e_s)},
            {"goodput", goodput(r.goodput)},
            {"output_tokens_per_s_per_gpu", r.output_tokens_per_s_per_gpu},
            {"load", load(r.load)},
            {"wire_bytes", r.wire_bytes},
            {"wire_bytes_by_fabric", by_fabric},
            {"decisions", decisions(r.decisions)},
            {"simulated_time_s", r.simulated_time_s},
            {"engine", fields_json(r.engine, kEngineFields)},
            {"memory", fields_json(r.memory, kMemoryFields)},
            {"skipped_trace_entries", r.skipped_trace_entries},
            {"busiest", {{"resource", r.busiest}, {"share", r.busiest_share}}},
            {"invariants", invariants(r.invariants)}};
  if (r.full_step)
    j["step_split_s"] = {{"attention", r.split_attention_s}, {"gemm", r.split_gemm_s}, {"moe", r.split_moe_s}};
  if (r.prefill) {
    j["prefill"] = fields_json(r.prefill_counts, kPrefillFields);
    j["prefill"]["hit_share"] = r.prefill_counts.hit_share();
    if (r.prefill_counts.handoffs > 0) j["prefill"]["handoff_wait_s"] = latency(r.handoff_wait_s);
    json& per = j["prefill"]["instances"] = json::object();
    for (const auto& [name, field] : kPoolFields) {
      json values = json::array();
      for (const PoolCounts& c : r.pools)
        values.push_back(c.*field);
      per[name] = std::move(values);
    }
  }
  if (r.expert_parallel) {
    j["ep_dispatch_s"] = latency(r.ep_dispatch_s);
    j["ep_combine_s"] = latency(r.ep_combine_s);
  }
  if (r.interference) j["holder_tpot_inflation"] = r.holder_tpot_inflation;
  if (r.partial) {
    j["partial"] = true;
    j["requests_done"] = r.requests;
  }
  return j;
}

PolicyResult policy_result(const json& j)
{
  PolicyResult r;
  const auto u64 = [](const json& o, const char* k) { return o.value(k, std::uint64_t{0}); };
  r.requests = u64(j, "requests");
  r.arrived = u64(j, "arrived");
  r.steps = u64(j, "steps");
  r.iterations = u64(j, "iterations");
  r.step_latency_s = latency(section(j, "step_latency_s"));
  r.ttft_s = latency(section(j, "ttft_s"));
  // Summaries of format 1 called the end-to-end latency request_latency_s.
  r.e2e_s = latency(section(j, j.contains("e2e_s") ? "e2e_s" : "request_latency_s"));
  r.tpot_s = latency(section(j, "tpot_s"));
  r.itl_s = latency(section(j, "itl_s"));
  r.handoff_wait_s = latency(section(section(j, "prefill"), "handoff_wait_s"));
  r.goodput = goodput(section(j, "goodput"));
  r.expert_parallel = j.contains("ep_dispatch_s");
  r.interference = j.contains("holder_tpot_inflation");
  r.holder_tpot_inflation = j.value("holder_tpot_inflation", 1.0);
  r.full_step = j.contains("step_split_s");
  if (r.full_step) {
    const json s = section(j, "step_split_s");
    r.split_attention_s = s.value("attention", 0.0);
    r.split_gemm_s = s.value("gemm", 0.0);
    r.split_moe_s = s.value("moe", 0.0);
  }
  r.ep_dispatch_s = latency(section(j, "ep_dispatch_s"));
  r.ep_combine_s = latency(section(j, "ep_combine_s"));
  r.output_tokens_per_s_per_gpu = j.value("output_tokens_per_s_per_gpu", 0.0);
  r.load = load(section(j, "load"));
  r.wire_bytes = u64(j, "wire_bytes");
  const json by = section(j, "wire_bytes_by_fabric");
  for (core::FabricClass f : core::kAllFabrics)
    r.wire_bytes_by_fabric[static_cast<std::size_t>(f)] = u64(by, std::string(core::to_string(f)).c_str());
  r.decisions = decisions(section(j, "decisions"));
  r.simulated_time_s = j.value("simulated_time_s", 0.0);
  r.engine = fields_from<EngineCounters>(section(j, "engine"), kEngineFields);
  // Summaries before format 3 called the transfers SimGrid moved engine.real.
  if (!section(j, "engine").contains("simgrid_transfers")) r.engine.simgrid = u64(section(j, "engine"), "real");
  r.memory = fields_from<MemoryCounters>(section(j, "memory"), kMemoryFields);
  r.prefill = j.contains("prefill");
  r.prefill_counts = fields_from<PrefillCounters>(section(j, "prefill"), kPrefillFields);
  const json per = section(section(j, "prefill"), "instances");
  for (const auto& [name, field] : kPoolFields)
    if (per.contains(name))
      for (std::size_t i = 0; i < per[name].size(); ++i) {
        if (r.pools.size() <= i) r.pools.resize(i + 1);
        r.pools[i].*field = per[name][i].get<std::uint64_t>();
      }
  r.skipped_trace_entries = u64(j, "skipped_trace_entries");
  const json busiest = section(j, "busiest");
  r.busiest = busiest.value("resource", std::string());
  r.busiest_share = busiest.value("share", 0.0);
  if (j.contains("invariants")) r.invariants = invariants(j["invariants"]);
  r.partial = j.value("partial", false);
  return r;
}

json to_json(const RunResult& r)
{
  json s;
  s["format"] = kSummaryFormat;
  s["scenario"] = r.scenario;
  if (!r.run_id.empty()) s["run_id"] = r.run_id;
  s["seed"] = r.seed;
  json policies = json::object();
  json inv = json::object();
  for (const auto& [name, p] : r.policies) {
    json pj = to_json(p);
    pj.erase("invariants"); // summary.json keeps them together under "invariants"
    policies[name] = std::move(pj);
    inv[name] = invariants(p.invariants);
  }
  inv["ok"] = r.ok;
  s["policies"] = std::move(policies);
  s["invariants"] = std::move(inv);
  if (r.ensemble) {
    json pols = json::object();
    for (const auto& [name, figs] : r.ensemble->policies)
      for (const auto& [fig, sp] : figs)
        pols[name][fig] = {{"p5", sp.p5}, {"p50", sp.p50}, {"p95", sp.p95}, {"values", sp.values}};
    s["ensemble"] = {{"members", r.ensemble->members},
                     {"profile_drawn", r.ensemble->profile_drawn},
                     {"ok", r.ensemble->ok},
                     {"problems", r.ensemble->problems},
                     {"policies", pols}};
  }
  if (r.interrupted) {
    s["interrupted"] = true;
    s["signal"] = r.signal;
    if (!r.limit.empty()) {
      s["limit"] = r.limit;
      s["limit_message"] = r.limit_message;
    }
  }
  return s;
}

RunResult run_result(const json& j)
{
  RunResult r;
  r.scenario = j.value("scenario", std::string());
  r.run_id = j.value("run_id", std::string());
  r.seed = j.value("seed", std::int64_t{0});
  const json inv = section(j, "invariants");
  const json policies = section(j, "policies"); // kept alive: items() refers into it
  for (const auto& [name, p] : policies.items()) {
    PolicyResult pr = policy_result(p);
    if (inv.contains(name)) pr.invariants = invariants(inv[name]);
    r.policies.emplace_back(name, std::move(pr));
  }
  r.ok = inv.value("ok", false);
  r.interrupted = j.value("interrupted", false);
  if (j.contains("ensemble") && j["ensemble"].is_object()) {
    const json& e = j["ensemble"];
    Ensemble en;
    en.members = e.value("members", 0);
    en.profile_drawn = e.value("profile_drawn", false);
    en.ok = e.value("ok", false);
    en.problems = e.value("problems", std::vector<std::string>{});
    const json pols = section(e, "policies");
    for (const auto& [name, figs] : pols.items()) {
      std::vector<std::pair<std::string, Spread>> v;
      for (const FigureInfo& f : figures()) // in the registry's order, not the file's
        if (const std::string fig(f.path); f.used_for(kSpread) && figs.contains(fig)) {
          const json& sp = figs[fig];
          v.emplace_back(fig, Spread{sp.value("p5", 0.0), sp.value("p50", 0.0), sp.value("p95", 0.0),
                                     sp.value("values", std::vector<double>{})});
        }
      en.policies.emplace_back(name, std::move(v));
    }
    r.ensemble = std::move(en);
  }
  r.signal = j.value("signal", 0);
  r.limit = j.value("limit", std::string());
  r.limit_message = j.value("limit_message", std::string());
  return r;
}

void check_summary_format(const json& j, const std::string& file)
{
  const json format = j.is_object() ? j.value("format", json(1)) : json(1);
  if (!format.is_number_integer())
    core::fail(file, 0, 0, "format", "expected a whole number (the summary layout's version), got " + format.dump());
  if (format.get<int>() > kSummaryFormat)
    core::fail(file, 0, 0, "format",
               fmt::format("summary format {} is newer than this xattn reads ({}): read it with the xattn that "
                           "wrote it, or a newer one",
                           format.get<int>(), kSummaryFormat));
}

RunResult read_run_result(const std::filesystem::path& file)
{
  std::ifstream in(file);
  if (!in) core::fail(file.string(), 0, 0, "", "cannot read the run's summary");
  try {
    const json j = json::parse(in);
    check_summary_format(j, file.string());
    return run_result(j);
  } catch (const json::exception& e) {
    core::fail(file.string(), 0, 0, "", std::string("not a valid summary: ") + e.what());
  }
}

} // namespace xattn::sim::engine
