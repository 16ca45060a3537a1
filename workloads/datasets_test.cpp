// The bundled data sets (workloads/data/): each reads as its ORIGIN.yaml says, carries its
// licence, and together they stay small; a set that disagrees with its ORIGIN.yaml is reported.
#include "workloads/datasets.hpp"

#include "workloads/test_util.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <map>

using namespace xattn::workloads;
using namespace xattn::workloads::testing;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace
{
std::map<std::string, DataSet> by_name(std::vector<DataSet> sets)
{
  std::map<std::string, DataSet> out;
  for (DataSet& s : sets)
    out.emplace(s.name, std::move(s));
  return out;
}

std::string load_error(const fs::path& dir)
{
  try {
    load_data_set(dir);
  } catch (const xattn::core::InputError& e) {
    return e.what();
  }
  return "no error";
}
} // namespace

TEST_CASE("workloads: the bundled data sets read as their ORIGIN.yaml says")
{
  ::unsetenv("XATTN_DATA");
  auto sets = by_name(find_data_sets());
  REQUIRE(sets.count("mooncake") == 1);
  REQUIRE(sets.count("claude-code") == 1);
  REQUIRE(sets.count("azure") == 1);
  CHECK(sets["mooncake"].licence == "Apache-2.0");
  CHECK(sets["claude-code"].licence == "Apache-2.0");
  CHECK(sets["azure"].licence == "CC-BY-4.0");
  std::uint64_t records = 0;
  for (const auto& [name, set] : sets) {
    INFO(name);
    CHECK(fs::file_size(set.dir / set.licence_file) > 5000); // the licence's text, not a pointer to it
    CHECK(set.commit.size() == 40);
    for (const DataFile& f : set.files) {
      INFO(f.file);
      const Measured m = measure(set, f);
      CHECK(mismatches(set, f, m).empty());
      CHECK(m.compressed_bytes < m.bytes / 4); // shipped compressed
      CHECK(f.blob.size() == 40);
      records += m.records;
    }
  }
  CHECK(records == 12031 + 105 + 53 + 32 + 8819);
}

TEST_CASE("workloads: the bundled data stays under 10 MB")
{
  std::uintmax_t total = 0;
  for (const auto& e : fs::recursive_directory_iterator(std::string(XATTN_SOURCE_DIR) + "/workloads/data"))
    if (e.is_regular_file()) total += e.file_size();
  CHECK(total > 400'000);
  CHECK(total < 10'000'000);
}

TEST_CASE("workloads: a data set that disagrees with its ORIGIN.yaml is reported, $XATTN_DATA's sets first")
{
  ::setenv("XATTN_DATA", fixture("datasets").c_str(), 1);
  auto sets = find_data_sets();
  REQUIRE(sets.size() >= 4);
  CHECK(sets.front().name == "miscounted"); // $XATTN_DATA comes first
  const DataSet& bad = sets.front();
  const auto problems = mismatches(bad, bad.files.at(0), measure(bad, bad.files.at(0)));
  REQUIRE(problems.size() == 1);
  CHECK_THAT(problems[0], Contains("mooncake_small.jsonl.gz: 4 records, ORIGIN.yaml says 5"));
  ::unsetenv("XATTN_DATA");
}

TEST_CASE("workloads: a malformed ORIGIN.yaml is an input error naming file, line and key")
{
  const fs::path dir = fs::path(temp_file("x", "")).parent_path() / "wrong-name";
  fs::create_directories(dir);
  const std::string good = drain_text(fixture("datasets/miscounted/ORIGIN.yaml"));
  auto write = [&](const std::string& text) { std::ofstream(dir / "ORIGIN.yaml") << text; };

  write(good);
  fs::copy_file(fixture("datasets/miscounted/LICENSE"), dir / "LICENSE", fs::copy_options::overwrite_existing);
  CHECK_THAT(load_error(dir), Contains("ORIGIN.yaml:3:7: error: name: the set 'miscounted' sits in a folder named "
                                       "'wrong-name'") &&
                                  Contains("files[0].file: no such file"));
  write(good + "licence_url: x\n");
  CHECK_THAT(load_error(dir), Contains("licence_url: unknown key"));
  fs::remove(dir / "LICENSE");
  CHECK_THAT(load_error(dir), Contains("licence_file: no licence file"));
  CHECK_THAT(load_error(dir / "absent"), Contains("absent/ORIGIN.yaml: error: cannot open"));
}
