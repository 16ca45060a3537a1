// The measurement procedures behind the paper's claims. Each builds engine micro-scenarios from the
// claim's config, runs them, and returns the simulated figure in the claim's unit, with a line that
// says which engine figures (and, where the claim is about the model, which closed-form figures)
// it came from. None of them knows the published value: paper.cpp compares.
#include "validate/paper.hpp"

#include "sim/core/error.hpp"
#include "sim/model/cost_model.hpp"
#include "sim/model/pricing.hpp"

#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <limits>

namespace xattn::validate
{
namespace
{

using core::FabricClass;

struct Cfg {
  const Claim& c;
  std::string str(const std::string& k, const std::string& def) const
  {
    auto it = c.config.find(k);
    return it == c.config.end() ? def : it->second;
  }
  double num(const std::string& k, double def) const
  {
    auto it = c.config.find(k);
    if (it == c.config.end()) return def;
    try {
      std::size_t used = 0;
      double v = std::stod(it->second, &used);
      if (used == it->second.size()) return v;
    } catch (const std::exception&) {
    }
    core::fail("paper.yaml", c.line, 0, c.id + ".config." + k, "expected a number, got '" + it->second + "'");
  }
  int integer(const std::string& k, int def) const { return static_cast<int>(std::llround(num(k, def))); }
  FabricClass fabric(const std::string& k = "fabric", const std::string& def = "ib-spine") const
  {
    auto f = core::parse_fabric(str(k, def));
    if (!f || *f == FabricClass::kSameGpu)
      core::fail("paper.yaml", c.line, 0, c.id + ".config." + k, "expected a fabric class between two GPUs");
    return *f;
  }
};

double in_unit(double v, const std::string& unit)
{
  if (unit == "us") return v * 1e6;
  if (unit == "ms") return v * 1e3;
  if (unit == "%") return v * 100;
  if (unit == "GBps") return v / 1e9;
  return v;
}

std::string us(double s)
{
  return fmt::format("{:.2f} us", s * 1e6);
}

/// `requesters` requesters, each attending `ct` tokens over `holders` holders (one chunk each).
Micro call_micro(FabricClass f, int mq, std::int64_t ct, int holders = 1, int requesters = 1)
{
  Micro m;
  m.fabric = f;
  m.rows = mq;
  m.holders = holders;
  m.requesters = requesters;
  m.chunk_tokens = ct / holders;
  std::vector<int> chunks;
  for (int h = 0; h < holders; ++h)
    chunks.push_back(h);
  m.requests.clear();
  for (int r = 0; r < requesters; ++r)
    m.requests.push_back({0.0, r, chunks, 1});
  m.policies = {"route", "fetch"};
  return m;
}

/// The closed form of one call on the profile's nominal path (what `xattn predict` prints).
sim::CallCost closed_form(const MicroRunner& run, FabricClass f, int mq, double ct, int holders = 1, int lanes = 1)
{
  sim::ModelSpec m;
  m.name = "micro", m.layers = 1, m.heads = mq, m.kv_lora_rank = 512, m.rope_dim = 64;
  sim::CallShape s;
  s.rows = mq, s.tokens = ct, s.holders = holders, s.runs = holders;
  sim::PathCost path = sim::nominal_path(run.profile(), f);
  path.lanes = lanes;
  return sim::price_call(m, run.profile(), s, path);
}

using Experiment = std::function<ExperimentResult(const Cfg&, MicroRunner&)>;

ExperimentResult round_trip(const Cfg& c, MicroRunner& run)
{
  Micro m = call_micro(c.fabric(), c.integer("mq", 256), c.integer("ct", 2048));
  m.policies = {"route"};
  const double t = run.run(m).at("route").step_mean_s;
  const double cf = closed_form(run, c.fabric(), c.integer("mq", 256), c.integer("ct", 2048)).route.total().value();
  return {t, "engine routed step " + us(t) + " (closed form " + us(cf) + ")", "engine"};
}

ExperimentResult route_fetch_ratio(const Cfg& c, MicroRunner& run)
{
  MicroOutcome o = run.run(call_micro(c.fabric(), c.integer("mq", 256), c.integer("ct", 2048)));
  const double r = o.at("route").step_mean_s, f = o.at("fetch").step_mean_s;
  return {f / r, "engine fetch step " + us(f) + " / route step " + us(r), "engine"};
}

ExperimentResult wire_bytes_saved(const Cfg& c, MicroRunner& run)
{
  MicroOutcome o = run.run(call_micro(c.fabric(), c.integer("mq", 256), c.integer("ct", 2048)));
  const double r = o.at("route").wire_bytes, f = o.at("fetch").wire_bytes;
  return {1 - r / f, fmt::format("engine wire bytes: route {:.0f} B, fetch {:.0f} B", r, f), "engine"};
}

/// Marginal routed time per byte between M_q = mq and 2 mq: (delta wire bytes) / (delta step).
double marginal_rate(MicroRunner& run, FabricClass f, int mq, int ct, std::string& detail)
{
  Micro a = call_micro(f, mq, ct), b = call_micro(f, 2 * mq, ct);
  a.policies = b.policies = {"route"};
  const PolicyOutcome pa = run.run(a).at("route"), pb = run.run(b).at("route");
  detail += fmt::format("{}: M_q {} -> {}: +{:.0f} B in +{}; ", core::to_string(f), mq, 2 * mq,
                        pb.wire_bytes - pa.wire_bytes, us(pb.step_mean_s - pa.step_mean_s));
  return (pb.wire_bytes - pa.wire_bytes) / (pb.step_mean_s - pa.step_mean_s);
}

ExperimentResult single_block_rate(const Cfg& c, MicroRunner& run)
{
  std::string d;
  const double rate = marginal_rate(run, c.fabric(), c.integer("mq", 256), c.integer("ct", 64), d);
  return {rate, d + "engine marginal routed rate", "engine"};
}

ExperimentResult fabric_ratio(const Cfg& c, MicroRunner& run)
{
  std::string d;
  const double a = marginal_rate(run, c.fabric("fabric_a", "nvlink"), c.integer("mq", 256), c.integer("ct", 64), d);
  const double b = marginal_rate(run, c.fabric("fabric_b", "ib-spine"), c.integer("mq", 256), c.integer("ct", 64), d);
  return {b / a, d + "ratio of routed transfer times (a / b)", "engine"};
}

ExperimentResult peak_ratio(const Cfg& c, MicroRunner& run)
{
  const int mq = c.integer("mq", 16384), ct = c.integer("ct", 64);
  double t[2];
  std::string d;
  int i = 0;
  for (const char* k : {"fabric_a", "fabric_b"}) {
    Micro m = call_micro(c.fabric(k, i == 0 ? "ib-spine" : "nvlink"), mq, ct);
    m.policies = {"route"};
    m.profile_set["dispatch.route_blocks"] = std::to_string(c.integer("blocks", 32));
    t[i] = run.run(m).at("route").step_mean_s;
    d += fmt::format("{} routed step {}; ", core::to_string(m.fabric), us(t[i]));
    ++i;
  }
  return {t[0] / t[1], d + fmt::format("M_q {} with {} dispatch blocks", mq, c.integer("blocks", 32)), "engine"};
}

/// Mean routed step of n closed-loop requesters on one holder, started evenly over one idle step.
double loaded_route(MicroRunner& run, const Cfg& c, int n, double idle_step)
{
  Micro m = call_micro(c.fabric(), c.integer("mq", 256), c.integer("ct", 2048), 1, n);
  m.policies = {"route"};
  for (int r = 0; r < n; ++r)
    m.requests[r] = {r * idle_step / n, r, {0}, c.integer("steps", 50)};
  return run.run(m).at("route").step_mean_s;
}

/// The paper's congestion microbenchmark, read as closed-loop requesters (how its link saturates at
/// 3 flows, where 18-25 GB/s single-block flows would fill 25 GB/s with 2): requesters that each
/// dispatch a routed query (M_q rows of 1152 B), wait for it to land and dispatch the next: a
/// cycle of probe + transfer (295 KB / 27.8 us = 10.6 GB/s per requester at M_q 256). The
/// answer, the holder's kernel and the merge are taken out (a 1-value latent leaves 1152 B query
/// rows and 6 B answers; kernel and merge times zero), so that only the query flows load the link.
double query_loop(MicroRunner& run, const Cfg& c, int n, double idle_step)
{
  Micro m = call_micro(c.fabric(), c.integer("mq", 256), c.integer("ct", 2048), 1, n);
  m.policies = {"route"};
  m.kv_lora_rank = 1;
  m.rope_dim = 575;
  for (const char* k : {"holder.kernel_fixed", "holder.kernel_per_token", "holder.kernel_per_token_row", "merge.fixed",
                        "merge.per_row"})
    m.profile_set[k] = "0us";
  for (int r = 0; r < n; ++r)
    m.requests[r] = {r * idle_step / n, r, {0}, c.integer("steps", 50)};
  return run.run(m).at("route").step_mean_s;
}

ExperimentResult congestion_knee(const Cfg& c, MicroRunner& run)
{
  const double t1 = query_loop(run, c, 1, 0);
  const double rise = c.num("rise", 0.02);
  std::string d = "closed-loop query cycle: 1 flow " + us(t1);
  for (int n = 2; n <= c.integer("max_flows", 8); ++n) {
    const double t = query_loop(run, c, n, t1);
    d += fmt::format(", {} flows {}", n, us(t));
    if (t > (1 + rise) * t1) return {double(n), d + fmt::format(" (first rise above {:.0f}%)", 100 * rise), "engine"};
  }
  return {std::numeric_limits<double>::infinity(), d + ": never rose", "engine"};
}

ExperimentResult congestion_vs_fetch(const Cfg& c, MicroRunner& run)
{
  const int n = c.integer("flows", 8);
  const double t1 = loaded_route(run, c, 1, 0);
  const double r = loaded_route(run, c, n, t1);
  Micro f = call_micro(c.fabric(), c.integer("mq", 256), c.integer("ct", 2048), 1, n);
  f.policies = {"fetch"};
  const double tf = run.run(f).at("fetch").step_mean_s;
  return {tf / r, fmt::format("{} flows: fetch step {} / route step {}", n, us(tf), us(r)), "engine"};
}

/// The largest n whose mean step stays within `rise` of one (n requesters on one holder at once).
ExperimentResult elbow(const Cfg& c, MicroRunner& run, bool copy)
{
  const double rise = c.num("rise", 0.05);
  double t1 = 0;
  std::string d;
  for (int n = 1; n <= c.integer("max", 12); ++n) {
    Micro m;
    if (copy) {
      m = transfer_micro(c.fabric("fabric", "nvlink"), c.num("bytes", 2359296), c.integer("blocks", 1), n,
                         core::Transport::kGpu);
    } else {
      m = call_micro(c.fabric("fabric", "nvlink"), c.integer("mq", 256), c.integer("ct", 131072), 1, n);
      m.policies = {"route"};
    }
    const double t = run.run(m).at(m.policies.front()).step_mean_s;
    if (n == 1) t1 = t;
    d += fmt::format("{}{}: {}", n == 1 ? "" : ", ", n, us(t));
    if (t > (1 + rise) * t1)
      return {double(n - 1), d + fmt::format(" (rises above {:.0f}% at {})", 100 * rise, n), "engine"};
  }
  return {std::numeric_limits<double>::infinity(), d + ": never rose", "engine"};
}

ExperimentResult proxy_reduction(const Cfg& c, MicroRunner& run)
{
  double t[2];
  for (int i = 0; i < 2; ++i) {
    Micro m = transfer_micro(c.fabric(), c.num("bytes", 2048), 0, 1,
                             i == 0 ? core::Transport::kGpu : core::Transport::kProxy);
    t[i] = run.run(m).at("fetch").step_mean_s;
  }
  return {1 - t[0] / t[1], "engine per-fetch latency: gpu " + us(t[0]) + ", proxy " + us(t[1]), "engine"};
}

ExperimentResult gather_growth(const Cfg& c, MicroRunner& run)
{
  const bool fetch = c.str("policy", "fetch") == "fetch";
  const std::string p = fetch ? "fetch" : "route";
  const int ha = c.integer("holders_a", 1), hb = c.integer("holders_b", 8), mq = c.integer("mq", 256),
            ct = c.integer("ct", 2048);
  const std::string nics = c.str("requester_nics", "own");
  if (nics != "own" && nics != "node")
    core::fail("paper.yaml", c.c.line, 0, c.c.id + ".config.requester_nics",
               "expected own or node, got '" + nics + "'");
  const bool striped = nics == "node" && c.fabric() != FabricClass::kNvlink && c.fabric() != FabricClass::kPcie;
  auto ratio = [&](bool stripe, std::string& detail) {
    Micro a = call_micro(c.fabric(), mq, ct, ha), b = call_micro(c.fabric(), mq, ct, hb);
    a.policies = b.policies = {p};
    a.requester_nics_node = b.requester_nics_node = stripe;
    const double ta = run.run(a).at(p).step_mean_s, tb = run.run(b).at(p).step_mean_s;
    auto cf = [&](int h) {
      sim::CallCost cc = closed_form(run, c.fabric(), mq, ct, h, stripe ? h : 1);
      return (fetch ? cc.fetch : cc.route).total().value();
    };
    detail = fmt::format("{} holders {}, {} holders {} (closed form: {} -> {})", ha, us(ta), hb, us(tb), us(cf(ha)),
                         us(cf(hb)));
    return tb / ta;
  };
  std::string detail, one_nic;
  const double r = ratio(striped, detail);
  if (striped) {
    // What the same exchange costs when the requester sends and receives through its own NIC only.
    const double own = ratio(false, one_nic);
    detail += fmt::format("; through the requester's own NIC only: {:.2f}x ({})", own, one_nic);
  }
  return {r, fmt::format("engine {} step{}: {}", p, striped ? ", requester NICs striped" : "", detail), "engine"};
}

ExperimentResult break_even(const Cfg& c, MicroRunner& run)
{
  const int mq = c.integer("mq", 256), ct = c.integer("ct", 2048);
  Micro m = call_micro(c.fabric(), mq, ct);
  m.requests[0].steps = 2;
  MicroOutcome o = run.run(m);
  const double r = o.at("route").step_mean_s;
  const double f = o.at("fetch").step_max_s;          // the fetching step
  const double a = 2 * o.at("fetch").step_mean_s - f; // a later, cached step
  const double n = (f - r) / (r - a);
  const double cf = sim::decide(closed_form(run, c.fabric(), mq, ct), 0).break_even_reuse;
  return {n,
          fmt::format("engine: fetch step {}, cached step {}, route step {}: (f - r) / (r - a); closed form {:.1f}",
                      us(f), us(a), us(r), cf),
          "engine + closed form"};
}

const std::map<std::string, Experiment>& experiments()
{
  static const std::map<std::string, Experiment> e = {
      {"round-trip", round_trip},
      {"route-fetch-ratio", route_fetch_ratio},
      {"wire-bytes-saved", wire_bytes_saved},
      {"single-block-rate", single_block_rate},
      {"fabric-ratio", fabric_ratio},
      {"peak-ratio", peak_ratio},
      {"congestion-knee", congestion_knee},
      {"congestion-vs-fetch", congestion_vs_fetch},
      {"compute-elbow", [](const Cfg& c, MicroRunner& r) { return elbow(c, r, false); }},
      {"copy-elbow", [](const Cfg& c, MicroRunner& r) { return elbow(c, r, true); }},
      {"proxy-reduction", proxy_reduction},
      {"gather-growth", gather_growth},
      {"break-even", break_even},
  };
  return e;
}
} // namespace

const std::vector<std::string>& experiment_names()
{
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& [k, v] : experiments())
      n.push_back(k);
    return n;
  }();
  return names;
}

ExperimentResult run_experiment(const Claim& c, MicroRunner& runner)
{
  auto it = experiments().find(c.experiment);
  if (it == experiments().end())
    core::fail("paper.yaml", c.line, 0, c.id + ".experiment", "unknown experiment '" + c.experiment + "'");
  ExperimentResult r = it->second(Cfg{c}, runner);
  r.value = in_unit(r.value, c.unit);
  return r;
}

} // namespace xattn::validate
