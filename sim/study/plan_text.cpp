// What `xattn plan` prints and writes: the answer, the failing next smaller configuration, and
// every simulated configuration as evidence.
#include "sim/core/units.hpp"
#include "sim/study/plan.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace xattn::sim::study
{
using nlohmann::json;

namespace
{
std::string knobs_text(const PlanResult& r, std::size_t combo)
{
  std::string s;
  for (const auto& [k, v] : r.combos[combo])
    s += (s.empty() ? "" : ", ") + k + "=" + v;
  return s;
}

// The cells of one configuration's row: size, the size key's value, knobs, each bound's worst,
// verdict, points.
std::vector<std::string> cells(const PlanSpec& spec, const PlanResult& r, const Evaluation& e)
{
  std::string ids;
  for (const std::string& id : e.point_ids)
    ids += (ids.empty() ? "" : " ") + id;
  const std::string word = e.meets              ? "meets"
                           : !e.refused.empty() ? "DOES NOT FIT"
                           : e.overloaded       ? "OVERLOADED"
                                                : "FAILS";
  const std::string verdict =
      spec.confidence > 0
          ? fmt::format("{} ({}/{} draws)", word, static_cast<int>(std::lround(e.share * e.members)), e.members)
          : word;
  const std::string knobs = knobs_text(r, e.combo);
  std::vector<std::string> row{fmt::format("{:g}", spec.sizes[e.index]), spec.size.values[e.index],
                               knobs.empty() ? "-" : knobs};
  for (std::size_t b = 0; b < spec.slo.size(); ++b)
    row.push_back(e.refused.empty() ? core::format_seconds(core::Seconds(e.worst_s[b])) : "-");
  row.push_back(verdict);
  row.push_back(ids + (e.invariants_ok ? "" : " (an engine invariant failed)"));
  return row;
}

// The header of a worst-figure column: "worst" alone for a single bound, else the figure's name.
std::string worst_header(const PlanSpec& spec, std::size_t b)
{
  return spec.slo.size() == 1 ? "worst" : "worst " + spec.slo[b].metric;
}

// The rows under one header, each column as wide as its widest cell; numbers right-aligned.
std::string table(const PlanSpec& spec, const PlanResult& r, const std::vector<const Evaluation*>& rows)
{
  std::vector<std::string> header{"size", spec.size.key, "knobs"};
  for (std::size_t b = 0; b < spec.slo.size(); ++b)
    header.push_back(worst_header(spec, b));
  header.insert(header.end(), {"verdict", "points"});
  std::vector<std::vector<std::string>> t{header};
  for (const Evaluation* e : rows)
    t.push_back(cells(spec, r, *e));
  std::vector<std::size_t> width(t.front().size(), 0);
  for (const auto& row : t)
    for (std::size_t c = 0; c < row.size(); ++c)
      width[c] = std::max(width[c], row[c].size());
  std::string out;
  for (const auto& row : t) {
    std::string line = " ";
    for (std::size_t c = 0; c < row.size(); ++c) {
      const bool right = c == 0 || (c >= 3 && c < 3 + spec.slo.size()), last = c + 1 == row.size();
      line += " " + (right  ? fmt::format("{:>{}}", row[c], width[c])
                     : last ? row[c]
                            : fmt::format("{:<{}}", row[c], width[c]));
    }
    out += line + "\n";
  }
  return out;
}

// The judged policy, or those of the `policy` knob, each judged in its own combinations.
std::string judged_policies(const PlanSpec& spec)
{
  for (const Axis& k : spec.knobs)
    if (k.key == "policy") {
      std::string list;
      for (const std::string& v : k.values)
        list += (list.empty() ? "" : " or ") + v;
      return list;
    }
  return spec.policy;
}

json eval_json(const PlanSpec& spec, const PlanResult& r, const Evaluation& e)
{
  json knobs = json::object();
  for (const auto& [k, v] : r.combos[e.combo])
    knobs[k] = v;
  json j{{"size", spec.sizes[e.index]},
         {spec.size.key, spec.size.values[e.index]},
         {"knobs", knobs},
         {"refused", e.refused.empty() ? json(nullptr) : json(e.refused)},
         {"meets", e.meets},
         {"overloaded", e.overloaded},
         {"share_meeting", e.share},
         {"members_judged", e.members},
         {"invariants_ok", e.invariants_ok},
         {"points", e.point_ids}};
  for (std::size_t b = 0; b < spec.slo.size(); ++b)
    j[spec.slo[b].metric + " (worst over seeds)"] = e.refused.empty() ? json(e.worst_s[b]) : json(nullptr);
  return j;
}
} // namespace

std::string plan_text(const PlanSpec& spec, const PlanResult& r)
{
  std::string slo;
  for (const SloBound& b : spec.slo)
    slo += (slo.empty() ? "" : " and ") +
           fmt::format("{} of {} <= {}", b.metric, judged_policies(spec), core::format_seconds(core::Seconds(b.max_s)));
  std::string s = fmt::format("plan {}: smallest {} with {}\n", spec.name, spec.size_label, slo);
  if (spec.confidence > 0)
    s += fmt::format("confidence {:g}: met in at least that share of {} profile draws per seed (drawn from the "
                     "profile's uncertainty)\n",
                     spec.confidence, spec.draws);
  s += fmt::format("{} simulations run ({} configurations judged, {} seed{} each) in {:.1f} s; folder {}\n\n",
                   r.simulations, r.evaluations.size(), spec.seeds.size(), spec.seeds.size() == 1 ? "" : "s", r.wall_s,
                   r.dir);
  if (r.answer) {
    s += "ANSWER: " + spec.size_label + " = " + fmt::format("{:g}", spec.sizes[r.answer->index]) + " (" +
         spec.size.key + "=" + spec.size.values[r.answer->index] + ")" +
         (knobs_text(r, r.answer->combo).empty() ? "" : " with " + knobs_text(r, r.answer->combo)) + "\n";
    s += table(spec, r, {&*r.answer});
    if (r.next_smaller)
      s += "next smaller configuration, which fails the SLO:\n" + table(spec, r, {&*r.next_smaller});
    else
      s += "(the smallest candidate already meets the SLO: there is no smaller one to show failing)\n";
  } else {
    s += "NO ANSWER: no candidate meets the SLO, even the largest of every combination\n";
  }
  // By combination of knobs, then by size.
  std::vector<const Evaluation*> all;
  for (const Evaluation& e : r.evaluations)
    all.push_back(&e);
  std::stable_sort(all.begin(), all.end(), [&](const Evaluation* a, const Evaluation* b) {
    const std::string ka = knobs_text(r, a->combo), kb = knobs_text(r, b->combo);
    return ka != kb ? ka < kb : spec.sizes[a->index] < spec.sizes[b->index];
  });
  s += "\nevery configuration judged (each bound's figure, worst over the seeds), by knobs then size:\n" +
       table(spec, r, all);
  std::string refused;
  for (const Evaluation* e : all)
    if (!e->refused.empty())
      refused += fmt::format("  size {:g}{}: {}\n", spec.sizes[e->index],
                             knobs_text(r, e->combo).empty() ? "" : " with " + knobs_text(r, e->combo),
                             e->refused.substr(0, e->refused.find('\n')));
  if (!refused.empty())
    s += "\nrefused before simulating, their data not fitting in memory (the first problem of each):\n" + refused;
  return s;
}

json plan_json(const PlanSpec& spec, const PlanResult& r)
{
  json also = json::array(); // the bounds after the first
  for (std::size_t b = 1; b < spec.slo.size(); ++b)
    also.push_back({{"metric", spec.slo[b].metric}, {"max_s", spec.slo[b].max_s}});
  json j{{"plan", spec.name},
         {"base", spec.base},
         {"slo",
          {{"metric", spec.slo.front().metric},
           {"policy", judged_policies(spec)},
           {"max_s", spec.slo.front().max_s},
           {"also", also},
           {"confidence", spec.confidence > 0 ? json(spec.confidence) : json(nullptr)},
           {"draws", spec.confidence > 0 ? json(spec.draws) : json(nullptr)}}},
         {"size_key", spec.size.key},
         {"seeds", spec.seeds},
         {"simulations", r.simulations},
         {"answer", r.answer ? eval_json(spec, r, *r.answer) : json(nullptr)},
         {"next_smaller", r.next_smaller ? eval_json(spec, r, *r.next_smaller) : json(nullptr)},
         {"evaluations", json::array()}};
  for (const Evaluation& e : r.evaluations)
    j["evaluations"].push_back(eval_json(spec, r, e));
  return j;
}

} // namespace xattn::sim::study
