#include "sim/core/yaml.hpp"
#include "workloads/generator.hpp"
#include "workloads/stats.hpp"
#include "workloads/test_util.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace xattn::workloads;
using namespace xattn::workloads::testing;
using Catch::Matchers::Contains;

namespace
{
StatsReport stats_of(const GeneratorConfig& c)
{
  AgenticGenerator g(c);
  TraceStats s;
  Request r;
  while (g.next(r))
    s.add(r);
  return s.report();
}

GeneratorConfig parse(const std::string& yaml)
{
  xattn::core::Document doc = xattn::core::parse_yaml(yaml, "g.yaml");
  xattn::core::Diagnostics d;
  xattn::core::Section s("g.yaml", doc.root, "", generator_schema(), d);
  GeneratorConfig c = read_generator(s);
  d.throw_if_any();
  return c;
}
} // namespace

TEST_CASE("workloads: generator is deterministic by seed")
{
  GeneratorConfig c = parse("requests: 3000\nagents: {count: 4, subagents: {spawn_probability: 0.3}}\n");
  AgenticGenerator a(c), b(c);
  c.seed = 2;
  AgenticGenerator other(c);
  Request x, y, z;
  bool differs = false;
  std::uint64_t n = 0;
  while (a.next(x)) {
    REQUIRE(b.next(y));
    REQUIRE(other.next(z));
    ++n;
    REQUIRE(x.arrival == y.arrival);
    REQUIRE(x.blocks == y.blocks);
    REQUIRE(x.agent == y.agent);
    REQUIRE(x.output_tokens == y.output_tokens);
    differs = differs || x.blocks != z.blocks || x.arrival != z.arrival;
  }
  CHECK(n == 3000);
  CHECK_FALSE(b.next(y));
  CHECK(differs);
}

TEST_CASE("workloads: generator reproduces its Poisson and MMPP arrival rates")
{
  // Tolerances: Poisson, 40,000 arrivals: the rate estimate's sd is 0.5%, allow 2%. MMPP with
  // 2 s calm / 0.5 s burst phases over ~1,600 s: allow 5%.
  GeneratorConfig c = parse("requests: 40000\narrival: {process: poisson, interarrival: 10ms}\n");
  CHECK(c.mean_rate_per_s() == Approx(100.0));
  CHECK(stats_of(c).rate_per_s == Approx(100.0).epsilon(0.02));
  c = parse("requests: 40000\narrival: {process: mmpp, interarrival: 100ms, burst_interarrival: 10ms,\n"
            "  calm_dwell: 2s, burst_dwell: 0.5s}\n");
  const double expected = (2.0 / 0.1 + 0.5 / 0.01) / 2.5; // time-weighted mean of the two rates: 28/s
  CHECK(c.mean_rate_per_s() == Approx(expected));
  CHECK(stats_of(c).rate_per_s == Approx(expected).epsilon(0.05));
}

TEST_CASE("workloads: generator reproduces its Zipf exponent")
{
  // One read of one block per single-turn session: corpus references are pure Zipf draws (the
  // private blocks are referenced once and fall outside the fit). Tolerance 0.05.
  for (double s : {0.7, 1.2}) {
    GeneratorConfig c = parse("requests: 200000\nblock_tokens: 64\n"
                              "corpus: {tokens: 1280000, reads_per_turn: 1, read_blocks: 1, zipf_s: " +
                              std::to_string(s) +
                              "}\n"
                              "agents: {count: 8, system_tokens: 0, turns: 1, subagents: {spawn_probability: 0}}\n");
    INFO("s = " << s);
    CHECK(stats_of(c).zipf_s == Approx(s).margin(0.05));
  }
}

TEST_CASE("workloads: generator reproduces the reuse ratio its session structure implies")
{
  // One agent, sessions of T turns, closed loop, fixed lengths. Hand model of turn k (1..T): the
  // context is S system blocks + k (r reads + m fresh) + (k - 1) q reply blocks. Distinct: S +
  // per session T m + (T - 1) q private blocks + the expected distinct corpus blocks of D draws,
  // sum_f 1 - (1 - p_f)^D with p_f = f^-s / H.
  const int S = 8, T = 10, r = 4, m = 2, q = 1, sessions = 300;
  const double s = 1.0;
  const std::uint64_t files = 5000;
  GeneratorConfig c =
      parse("requests: " + std::to_string(T * sessions) +
            "\nblock_tokens: 64\ncorpus: {tokens: 320000, zipf_s: 1.0, reads_per_turn: 4, read_blocks: 1}\n"
            "agents: {count: 1, system_tokens: 512, turns: 10, max_context_tokens: 16777216,\n"
            "  turn_tokens: {distribution: fixed, mean: 128}, subagents: {spawn_probability: 0}}\n"
            "arrival: {process: closed}\noutput: {distribution: fixed, mean: 64}\n");
  double refs = 0;
  for (int k = 1; k <= T; ++k)
    refs += S + k * (r + m) + (k - 1) * q;
  refs *= sessions;
  double h = 0;
  for (std::uint64_t f = 1; f <= files; ++f)
    h += std::pow(double(f), -s);
  const double draws = double(sessions) * T * r;
  double corpus = 0;
  for (std::uint64_t f = 1; f <= files; ++f)
    corpus += 1.0 - std::pow(1.0 - std::pow(double(f), -s) / h, draws);
  const double distinct = S + sessions * (T * m + (T - 1) * q) + corpus;
  const double expected = 1.0 - distinct / refs;
  StatsReport st = stats_of(c);
  CHECK(st.block_refs == static_cast<std::uint64_t>(refs)); // exact: the structure is deterministic
  CHECK(st.reuse_ratio == Approx(expected).margin(0.002));
}

TEST_CASE("workloads: generator spawns sub-agents whose siblings share their first reads")
{
  const std::string base = "requests: 20000\nagents: {count: 8, subagents: {spawn_probability: 0.3, max: 4, "
                           "sibling_overlap: ";
  StatsReport shared = stats_of(parse(base + "1.0}}\ncorpus: {zipf_s: 0.5}\n"));
  StatsReport apart = stats_of(parse(base + "0.0}}\ncorpus: {zipf_s: 0.5}\n"));
  CHECK(shared.subagents > 100);
  CHECK(shared.subagent_requests > shared.subagents);
  CHECK(shared.max_siblings >= 2);
  CHECK(shared.sibling_overlap > 0.5);
  CHECK(apart.sibling_overlap < shared.sibling_overlap - 0.1); // measured 0.46 against 0.68
}

TEST_CASE("workloads: generator memory stays bounded while streaming")
{
  GeneratorConfig c =
      parse("requests: 300000\nagents: {count: 8, turns: 50, subagents: {spawn_probability: 0.5, max: 4}}\n");
  AgenticGenerator g(c);
  Request r;
  std::size_t most = 0, longest = 0;
  while (g.next(r)) {
    most = std::max(most, g.live_agents());
    longest = std::max(longest, r.blocks.size());
  }
  CHECK(most <= 8 * (1 + 4));
  CHECK(longest * 64 <= 200000);
}

TEST_CASE("workloads: generator config errors carry file, line and key")
{
  CHECK_THROWS_WITH(parse("requests: 10\narrival:\n  process: poison\n"),
                    Contains("g.yaml:3:12: error: arrival.process: unknown value 'poison'"));
  CHECK_THROWS_WITH(parse("corpus: {zipf_s: 200}\n"),
                    Contains("g.yaml:1:18: error: corpus.zipf_s: must be at most 100, got '200'"));
  CHECK_THROWS_WITH(parse("arrival: {interarrival: 10}\n"), Contains("arrival.interarrival: missing unit"));
  CHECK_THROWS_WITH(parse("agents: {cuont: 3}\n"),
                    Contains("agents.cuont: unknown key 'cuont' (did you mean 'count'?)"));
  CHECK_THROWS_WITH(parse("block_tokens: 64\ncorpus: {tokens: 10}\n"), Contains("corpus.tokens: the corpus must hold"));
}
