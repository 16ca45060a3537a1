#include "sim/core/error.hpp"
#include "sim/core/yaml.hpp"
#include "workloads/batch.hpp"
#include "workloads/request_id.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <vector>

using namespace xattn::workloads;
using Catch::Matchers::Contains;

namespace
{
BatchConfig parse(const std::string& yaml, std::int64_t instances)
{
  xattn::core::Document doc = xattn::core::parse_yaml(yaml, "b.yaml");
  xattn::core::Diagnostics d;
  xattn::core::Section s("b.yaml", doc.root, "", batch_schema(), d);
  BatchConfig c = read_batch(s);
  d.throw_if_any();
  c.instances = instances;
  return c;
}

std::vector<Request> all(const BatchConfig& c)
{
  BatchSource src(c);
  std::vector<Request> out;
  Request r;
  while (src.next(r))
    out.push_back(r);
  return out;
}
} // namespace

TEST_CASE("workloads: a batch of own contexts, round by round")
{
  const BatchConfig c = parse("requests_per_instance: 3\ncontext_tokens: 256\noutput_tokens: 5\n", 4);
  const std::vector<Request> rs = all(c);
  REQUIRE(rs.size() == 12);
  CHECK(c.contexts() == 12);
  CHECK(c.corpus_tokens() == 12 * 256);
  for (std::uint64_t i = 0; i < rs.size(); ++i) {
    const Request& r = rs[i];
    CHECK(r.id == i);
    CHECK(r.arrival.value() == 0);
    CHECK(r.session == i); // its own session: the routers give the sessions to the instances in turn
    CHECK(r.agent == ids::agent_id(i, 0));
    CHECK_FALSE(r.is_subagent());
    CHECK(r.block_tokens == 64);
    CHECK(r.input_tokens == 256);
    CHECK(r.output_tokens == 5);
    // Context i: four blocks of its own, 4i to 4i + 3.
    CHECK(r.blocks == std::vector<std::uint64_t>{4 * i, 4 * i + 1, 4 * i + 2, 4 * i + 3});
  }
}

TEST_CASE("workloads: a batch over a shared corpus draws whole contexts by popularity")
{
  // 8 contexts of 128 tokens; 4,000 x 50 requests.
  const BatchConfig c =
      parse("requests_per_instance: 4000\ncontext_tokens: 128\nshared_tokens: 1024\nzipf_s: 1\nseed: 7\n", 50);
  CHECK(c.contexts() == 8);
  CHECK(c.corpus_tokens() == 1024);
  std::map<std::uint64_t, double> count;
  BatchSource src(c);
  Request r;
  std::uint64_t n = 0, partial = 0;
  while (src.next(r)) {
    const std::uint64_t context = r.blocks.empty() ? 0 : r.blocks[0] / 2;
    // Whole contexts of the corpus: blocks 2k and 2k + 1, k < 8.
    if (r.blocks != std::vector<std::uint64_t>{2 * context, 2 * context + 1} || context >= 8) ++partial;
    count[context] += 1;
    ++n;
  }
  CHECK(n == 200000);
  CHECK(partial == 0);
  // Zipf 1 over 8 ranks: P(rank k) = (1 / (k + 1)) / H_8, H_8 = 761 / 280. Within 5 standard errors.
  const double h8 = 761.0 / 280.0;
  for (std::uint64_t k = 0; k < 8; ++k) {
    const double p = 1.0 / static_cast<double>(k + 1) / h8;
    const double sd = std::sqrt(p * (1 - p) / static_cast<double>(n));
    CHECK(std::abs(count[k] / static_cast<double>(n) - p) < 5 * sd);
  }
  // The same seed draws the same contexts; another draws others.
  const std::vector<Request> a = all(c), b = all(c);
  BatchConfig other = c;
  other.seed = 8;
  const std::vector<Request> d = all(other);
  bool same = true, differs = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    same = same && a[i].blocks == b[i].blocks;
    differs = differs || a[i].blocks != d[i].blocks;
  }
  CHECK(same);
  CHECK(differs);
}

TEST_CASE("workloads: a batch refuses contexts that are not whole blocks, a corpus not whole contexts")
{
  CHECK_THROWS_WITH(parse("requests_per_instance: 1\ncontext_tokens: 100\n", 1),
                    Contains("b.yaml") && Contains("context_tokens") && Contains("not whole blocks"));
  CHECK_THROWS_WITH(parse("requests_per_instance: 1\ncontext_tokens: 128\nshared_tokens: 200\n", 1),
                    Contains("shared_tokens") && Contains("not whole contexts"));
  CHECK_THROWS_WITH(parse("context_tokens: 128\n", 1), Contains("requests_per_instance"));
}
