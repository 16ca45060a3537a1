#include "sim/model/predict.hpp"
#include "sim/model/pricing.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cmath>

namespace xattn::sim
{
namespace
{
nlohmann::json breakdown_json(const Breakdown& b)
{
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, term] : kBreakdownTerms)
    j[name] = (b.*term).value();
  return j;
}
void bad_flag(const std::string& flag, const std::string& what)
{
  core::fail("command line", 0, 0, flag, what);
}
} // namespace

Prediction predict(const ModelSpec& m, const Profile& p, const PredictRequest& r, std::optional<PathCost> path)
{
  if (!(r.mq > 0)) bad_flag("--mq", "must be greater than zero");
  if (!(r.ct > 0)) bad_flag("--ct", "must be greater than zero");
  if (r.layers < 1 || r.layers > m.layers)
    bad_flag("--layers", fmt::format("must be between 1 and the model's {} layers", m.layers));
  if (r.holders < 1) bad_flag("--holders", "must be at least 1");
  if (r.rails < 1) bad_flag("--rails", "must be at least 1");
  if (r.ep < 1 || (m.moe() && m.experts % r.ep != 0))
    bad_flag("--ep", fmt::format("must be at least 1 and divide the model's {} routed experts", m.experts));
  if (!(r.reuse >= 0) || !std::isfinite(r.reuse)) bad_flag("--reuse", "must be a finite number >= 0");
  Prediction out;
  out.request = r;
  out.path = path ? *path : nominal_path(p, r.fabric);
  if (out.path.fabric == core::FabricClass::kIbSameLeaf || out.path.fabric == core::FabricClass::kIbSpine)
    out.path.lanes = r.rails;
  CallShape& s = out.shape;
  s.rows = r.mq;
  s.holders = r.holders;
  s.transport = r.transport;
  s.ep = r.ep;
  if (r.blocks) {
    if (!m.index.sparse())
      bad_flag("--blocks", "model '" + m.name + "' has no sparse indexer (index.topk); selection needs one");
    if (*r.blocks < r.holders)
      bad_flag("--blocks", fmt::format("{} selected runs cannot cover {} holders", *r.blocks, r.holders));
    s.sparse = true;
    s.tokens = m.index.topk;
    s.runs = *r.blocks;
    s.scanned = std::max(r.ct, static_cast<double>(m.index.topk) / r.holders) * r.holders; // c_t on each holder
    s.index_on_requester = r.index_on_requester;
  } else {
    // Dense: one chunk of c_t tokens on each holder concerned.
    s.tokens = r.ct * r.holders;
    s.runs = r.holders;
  }
  out.per_call = price_call(m, p, s, out.path);
  out.route = out.per_call.route.scaled(r.layers);
  out.fetch = out.per_call.fetch.scaled(r.layers);
  out.local = out.per_call.local.scaled(r.layers);
  CallCost scaled = out.per_call;
  scaled.route = out.route;
  scaled.fetch = out.fetch;
  scaled.local = out.local;
  scaled.reuse = out.per_call.reuse * r.layers;
  out.decision = decide(scaled, r.reuse);
  return out;
}

nlohmann::json to_json(const Prediction& p, const ModelSpec& m, const Profile& prof)
{
  const double L = p.request.layers;
  nlohmann::json j;
  j["decision"] = std::string(to_string(p.decision.choice));
  j["cost_s"] = {
      {"route", p.route.total().value()}, {"fetch", p.fetch.total().value()}, {"local", p.local.total().value()}};
  j["breakdown_s"] = {
      {"route", breakdown_json(p.route)}, {"fetch", breakdown_json(p.fetch)}, {"local", breakdown_json(p.local)}};
  j["wire_bytes"] = {
      {"route", p.per_call.route_wire.value() * L}, {"fetch", p.per_call.fetch_wire.value() * L}, {"local", 0}};
  j["break_even_reuse"] =
      std::isinf(p.decision.break_even_reuse) ? nlohmann::json(nullptr) : nlohmann::json(p.decision.break_even_reuse);
  j["total_over_reuse_s"] = {{"route", p.decision.route_total.value()},
                             {"fetch", p.decision.fetch_total.value()},
                             {"local", p.decision.local_total.value()}};
  j["inputs"] = {{"model", m.name},
                 {"profile", prof.name},
                 {"fabric", std::string(core::to_string(p.path.fabric))},
                 {"transport", p.request.transport == core::Transport::kGpu ? "gpu" : "proxy"},
                 {"mq", p.request.mq},
                 {"ct", p.request.ct},
                 {"layers", p.request.layers},
                 {"reuse", p.request.reuse},
                 {"holders", p.request.holders},
                 {"sparse", p.shape.sparse},
                 {"tokens", p.shape.tokens},
                 {"runs", p.shape.runs},
                 {"bottleneck_Bps", p.path.bottleneck.value()},
                 {"path_latency_s", p.path.latency.value()},
                 {"rails", p.path.lanes}};
  return j;
}

std::string to_table(const Prediction& p, const ModelSpec& m, const Profile& prof)
{
  const auto& r = p.request;
  std::string out = fmt::format("{} on {} ({} transport, profile {}): M_q = {:g}, {}, {} layer{}, {} holder{}{}\n",
                                m.name, core::to_string(p.path.fabric),
                                r.transport == core::Transport::kGpu ? "gpu" : "proxy", prof.name, r.mq,
                                p.shape.sparse ? fmt::format("top-{:g} in {} runs", p.shape.tokens, p.shape.runs)
                                               : fmt::format("c_t = {:g}", r.ct),
                                r.layers, r.layers == 1 ? "" : "s", r.holders, r.holders == 1 ? "" : "s",
                                p.path.lanes > 1 ? fmt::format(" over {} rails", p.path.lanes) : std::string());
  auto cell = [](core::Seconds t) { return t.value() == 0 ? std::string("-") : core::format_seconds(t); };
  out += fmt::format("{:<12}{:>12}{:>12}{:>12}\n", "", "route", "fetch", "local");
  for (const auto& [name, term] : kBreakdownTerms) {
    if ((p.route.*term).value() == 0 && (p.fetch.*term).value() == 0 && (p.local.*term).value() == 0) continue;
    out +=
        fmt::format("{:<12}{:>12}{:>12}{:>12}\n", name, cell(p.route.*term), cell(p.fetch.*term), cell(p.local.*term));
  }
  out += fmt::format("{:<12}{:>12}{:>12}{:>12}\n", "total", cell(p.route.total()), cell(p.fetch.total()),
                     cell(p.local.total()));
  out += fmt::format("{:<12}{:>12}{:>12}{:>12}\n", "wire bytes", core::format_bytes(p.per_call.route_wire * r.layers),
                     core::format_bytes(p.per_call.fetch_wire * r.layers), "0");
  out += fmt::format("over 1 + {:g} reuse{}: route {}, fetch {}, local {}\n", r.reuse, r.reuse == 1 ? "" : "s",
                     cell(p.decision.route_total), cell(p.decision.fetch_total), cell(p.decision.local_total));
  std::string be = std::isinf(p.decision.break_even_reuse)
                       ? std::string("fetch never breaks even")
                       : fmt::format("fetch breaks even at {:.1f} reuses", p.decision.break_even_reuse);
  out += fmt::format("decision: {} ({}; route is {:.1f}x faster than fetch for one use)\n",
                     to_string(p.decision.choice), be, p.fetch.total() / p.route.total());
  return out;
}

} // namespace xattn::sim
