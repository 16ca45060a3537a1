// The lines under a run's table, on results written by hand: the verdict (the best, ties, ratios, the
// ensemble's paired range, what holds a loser back) and the ensemble's lines (ranges, split notes).
#include "sim/engine/ensemble.hpp"
#include "sim/engine/verdict.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace xattn::sim::engine;
using Catch::Matchers::Contains;

namespace
{
PolicyResult policy(double step_mean, std::string busiest = "", double share = 0, bool ok = true)
{
  PolicyResult p;
  p.step_latency_s.mean = step_mean;
  p.busiest = std::move(busiest);
  p.busiest_share = share;
  p.invariants.ok = ok;
  return p;
}

// verdict() wraps at 100 columns: the text with its line breaks taken out.
std::string flat(std::string s)
{
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i)
    if (s[i] == '\n') {
      while (i + 1 < s.size() && s[i + 1] == ' ')
        ++i;
      if (i + 1 < s.size()) out += ' ';
    } else {
      out += s[i];
    }
  return out;
}
} // namespace

TEST_CASE("verdict: the best on the mean step, ties within 0.5%, each loser's ratio and its saturated resource")
{
  RunResult r;
  r.policies = {{"route", policy(0.1116, "link node0.nic0.ib up", 0.63)},
                {"fetch", policy(0.002684, "link node0.nic2.ib down", 0.16)},
                {"predicate", policy(0.002690)}, // 0.22% above fetch: a tie
                {"ski-rental", policy(0.002943, "link node0.nic1.ib down", 0.17)}};
  const std::string v = flat(verdict(r));
  CHECK_THAT(v, Contains("verdict: fetch is best on mean step latency (2.684ms)."));
  CHECK_THAT(v, Contains("predicate ties with it (within 0.5%)."));
  // 0.1116 / 0.002684 = 41.58; 0.002943 / 0.002684 = 1.0965.
  CHECK_THAT(v, Contains("route is 41.6x slower, held back by link node0.nic0.ib up (busy 63% of the run)."));
  CHECK_THAT(v, Contains("ski-rental is 1.10x slower, no resource near saturation (the busiest, link node0.nic1.ib "
                         "down, 17% of the run)."));
  for (const std::string& line : [&] {
         std::vector<std::string> lines;
         std::string s = verdict(r), l;
         for (char c : s)
           if (c == '\n')
             lines.push_back(l), l.clear();
           else
             l += c;
         return lines;
       }())
    CHECK(line.size() <= 100);
}

TEST_CASE("verdict: mean TPOT is the headline of the whole step; a policy whose invariants failed cannot win")
{
  RunResult r;
  PolicyResult a = policy(0.010), b = policy(0.020), c = policy(0.001, "", 0, false);
  a.full_step = b.full_step = c.full_step = true;
  a.tpot_s.mean = 0.030;
  b.tpot_s.mean = 0.024;
  c.tpot_s.mean = 0.001;
  r.policies = {{"route", a}, {"fetch", b}, {"broken", c}};
  CHECK(headline_figure(r) == "tpot_s.mean");
  const std::string v = flat(verdict(r));
  CHECK_THAT(v, Contains("fetch is best on mean TPOT (24ms)."));
  CHECK_THAT(v, Contains("route is 1.25x slower."));

  // The part of the step that grew most over the best's is named.
  r.policies[0].second.split_attention_s = 0.006;
  r.policies[0].second.split_moe_s = 0.020;
  r.policies[1].second.split_attention_s = 0.002;
  r.policies[1].second.split_moe_s = 0.006;
  CHECK_THAT(flat(verdict(r)), Contains("route is 1.25x slower; its step grew most in the MoE exchange (waits for the "
                                        "group's slowest GPU included): 20ms against 6ms."));
  CHECK_THAT(v, Contains("broken is faster, 0.04x of it, an invariant failed."));
  CHECK_THAT(table_legend(r), Contains("TPOT"));
}

TEST_CASE("verdict: a policy that did not keep up is never ranked by latency, however fast its steps")
{
  RunResult r;
  PolicyResult route = policy(0.001, "link node0.nic0.ib up", 0.63), fetch = policy(0.004), local = policy(0.002);
  // route: 1,115 of 3,210 tokens/s over the second half, 224 requests waiting at the last arrival.
  route.load = {.window_s = 5.4,
                .steady_offered_tokens_per_s = 3210,
                .steady_delivered_tokens_per_s = 1115,
                .backlog_requests = 224,
                .overloaded = true};
  fetch.load = {.window_s = 5.4, .steady_offered_tokens_per_s = 3210, .steady_delivered_tokens_per_s = 3136};
  local.load = {.window_s = 5.4, .steady_offered_tokens_per_s = 3210, .steady_delivered_tokens_per_s = 3200};
  r.policies = {{"route", route}, {"fetch", fetch}, {"local", local}};
  const std::string v = flat(verdict(r));
  CHECK_THAT(v, Contains("verdict: local is best on mean step latency (2ms)."));
  CHECK_THAT(v, Contains("fetch is 2.00x slower"));
  CHECK_THAT(v, Contains("route is overloaded: it delivered 35% of the output tokens offered over the second half of "
                         "the arrivals (1115 of 3210 per s), 224 requests waiting at the last arrival; its latencies "
                         "are a growing queue's and are not ranked, held back by link node0.nic0.ib up (busy 63% of "
                         "the run)."));
  CHECK_THAT(v, !Contains("route is 0.50x") && !Contains("route ties"));

  // None kept up: none is ranked, each says how far it fell short, and the verdict says what to do.
  r.policies[1].second.load.overloaded = r.policies[2].second.load.overloaded = true;
  const std::string none = flat(verdict(r));
  CHECK_THAT(none, Contains("verdict: no policy keeps up with this load (3210 output tokens/s offered over the second "
                            "half of the arrivals), so none is ranked by latency. Each delivered: route 35%, held "
                            "back by link node0.nic0.ib up (busy 63% of the run); fetch 98%; local 100%. Lower the "
                            "load"));
  CHECK_THAT(none, !Contains("best"));

  // Alone, an overloaded policy says so too.
  r.policies = {{"route", route}};
  CHECK_THAT(flat(verdict(r)), Contains("only route ran") && Contains("route is overloaded"));
}

TEST_CASE("verdict: under an ensemble each margin carries the 5-95% range of the member-by-member ratio")
{
  RunResult r;
  r.policies = {{"route", policy(0.100)}, {"fetch", policy(0.010)}};
  Ensemble e;
  e.members = 3;
  // Paired by member: ratios 8, 12 and 20 (the unpaired extremes, 24/12 = 2 and 40/3 = 13.3, are not).
  Spread route{.p5 = 0, .p50 = 0, .p95 = 0, .values = {24, 36, 40}};
  Spread fetch{.p5 = 0, .p50 = 0, .p95 = 0, .values = {3, 3, 2}};
  e.policies = {{"route", {{"step_latency_s.mean", route}}}, {"fetch", {{"step_latency_s.mean", fetch}}}};
  r.ensemble = e;
  const std::string v = flat(verdict(r));
  // Nearest-rank quantiles of {8, 12, 20}: p5 the first, p95 the last.
  CHECK_THAT(v, Contains("route is 10.0x slower (range over the 3 ensemble members: 8.00x to 20.0x)."));
}

TEST_CASE("verdict: one policy has nothing to compare with, and says how to compare")
{
  RunResult r;
  r.policies = {{"route", policy(0.05)}};
  CHECK_THAT(flat(verdict(r)), Contains("only route ran (mean step latency 50ms); name more policies (--policy NAME"));
}

TEST_CASE("ensemble: a split figure's range holds every member and the base run, and a note says what moved")
{
  // The four members of a report's puzzle: predicate's step p99 at 3.241 ms in one member, 70 to
  // 89 ms in three (one re-prefill's time at each drawn prefill rate), the base run at 3.3 ms.
  std::vector<std::vector<std::pair<std::string, PolicyResult>>> members;
  const double p99[] = {3.241e-3, 88.67e-3, 70.18e-3, 83.87e-3};
  const std::uint64_t local[] = {8815, 11778, 16229, 12797};
  for (int k = 0; k < 4; ++k) {
    PolicyResult p = policy(2.2e-3);
    p.step_latency_s.p99 = p99[k];
    p.decisions.local = local[k];
    p.decisions.route = 900000;
    members.push_back({{"predicate", p}});
  }
  RunResult r;
  PolicyResult base = policy(2.319e-3);
  base.step_latency_s.p99 = 3.3e-3;
  base.decisions.local = 10385;
  base.decisions.route = 900000;
  r.policies = {{"predicate", base}};
  r.ensemble = summarise_ensemble(members, true);
  // Nearest rank over 4 values: p5 the smallest, p50 the second, p95 the largest.
  const Spread& s = [&]() -> const Spread& {
    for (const auto& [f, sp] : r.ensemble->policies.front().second)
      if (f == "step_latency_s.p99") return sp;
    FAIL("no step p99 spread");
    return r.ensemble->policies.front().second.front().second;
  }();
  CHECK(s.p5 == 3.241e-3);
  CHECK(s.p50 == 70.18e-3);
  CHECK(s.p95 == 88.67e-3);
  const std::string t = ensemble_table(r);
  CHECK_THAT(t, Contains("median [min, max: too few members for a 5-95% range]"));
  CHECK_THAT(t, Contains("70.18ms [3.241ms, 88.67ms]")); // every member and the base inside
  CHECK_THAT(flat(t), Contains("note: predicate's step p99 splits over the members (3.241ms, 88.67ms, 70.18ms, "
                               "83.87ms; this run 3.3ms); its local calls range 8815 to 16229 (this run 10385)"));
  CHECK_THAT(t, !Contains("step mean splits")); // the means agree
}

TEST_CASE("summary.json carries its format; a reader refuses a newer one and names the file")
{
  RunResult r;
  r.policies = {{"route", policy(0.01)}};
  nlohmann::json j = to_json(r);
  CHECK(j.at("format") == kSummaryFormat);
  CHECK_NOTHROW(check_summary_format(j, "s.json"));
  j.erase("format"); // written before the key existed: format 1
  CHECK_NOTHROW(check_summary_format(j, "s.json"));
  j["format"] = kSummaryFormat + 1;
  CHECK_THROWS_WITH(check_summary_format(j, "out/x/summary.json"),
                    Contains("out/x/summary.json") && Contains("newer than this xattn reads"));
  j["format"] = "one";
  CHECK_THROWS_WITH(check_summary_format(j, "s.json"), Contains("expected a whole number"));
}

TEST_CASE("summary.json: an older format's renamed keys read as today's")
{
  RunResult r;
  r.policies = {{"route", policy(0.01)}};
  r.policies[0].second.engine.simgrid = 7;
  nlohmann::json j = to_json(r);
  CHECK(j["policies"]["route"]["engine"]["simgrid_transfers"] == 7);
  CHECK(run_result(j).policies[0].second.engine.simgrid == 7);
  // Format 2 called the transfers SimGrid moved engine.real.
  nlohmann::json& engine = j["policies"]["route"]["engine"];
  engine.erase("simgrid_transfers");
  engine["real"] = 5;
  j["format"] = 2;
  CHECK(run_result(j).policies[0].second.engine.simgrid == 5);
}

TEST_CASE("verdict: the tables' policy column fits the longest policy name, ten characters at least")
{
  RunResult r;
  r.policies = {{"route", policy(0.01)}, {"fetch", policy(0.02)}};
  CHECK(policy_column(r) == 10);
  r.policies.emplace_back("session-forecast", policy(0.03));
  CHECK(policy_column(r) == 16);
}
