#include "sim/core/resources.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>

using namespace xattn::core;
namespace fs = std::filesystem;

namespace
{
// A fresh folder per process holding `files` (relative paths), each with its own path as content.
fs::path make_tree(const std::string& name, std::initializer_list<std::string> files)
{
  const fs::path root = fs::temp_directory_path() / ("xattn_resources_test_" + std::to_string(::getpid())) / name;
  for (const std::string& f : files) {
    fs::create_directories((root / f).parent_path());
    std::ofstream(root / f) << f;
  }
  return root;
}

// Sets an environment variable for one test case, and restores it after.
class EnvVar
{
public:
  EnvVar(const char* name, const std::string& value) : name_(name)
  {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~EnvVar()
  {
    if (old_.empty())
      ::unsetenv(name_);
    else
      ::setenv(name_, old_.c_str(), 1);
  }

private:
  const char* name_;
  std::string old_;
};
} // namespace

TEST_CASE("resources: a named data file is found beside the file naming it, then in $XATTN_DATA, then bundled")
{
  const fs::path beside = make_tree("scenarios", {"a.jsonl"});
  const fs::path own = make_tree("own", {"a.jsonl", "b.jsonl", "mooncake/conversation_trace.jsonl.zst"});
  const std::string bundled = "mooncake/conversation_trace.jsonl.zst";

  {
    EnvVar env("XATTN_DATA", "");
    auto found = find_input(bundled, beside);
    REQUIRE(found);
    CHECK(found->parent_path().parent_path().filename() == "data"); // .../workloads/data/mooncake/...
    CHECK(fs::file_size(*found) > 300'000);
    CHECK_FALSE(find_input("b.jsonl", beside));
  }
  EnvVar env("XATTN_DATA", own.string());
  CHECK(trace_data_dirs().front() == own);
  CHECK(*find_input("a.jsonl", beside) == beside / "a.jsonl"); // beside first
  CHECK(*find_input("b.jsonl", beside) == own / "b.jsonl");    // then $XATTN_DATA
  CHECK(*find_input(bundled, beside) == own / bundled);        // which shadows the bundled set
  CHECK(*find_input((own / "b.jsonl").string(), beside) == own / "b.jsonl");
}

TEST_CASE("resources: what is not there is not found, and an absolute path is only itself")
{
  const fs::path beside = make_tree("lonely", {"x.jsonl"});
  EnvVar env("XATTN_DATA", beside.string());
  CHECK_FALSE(find_input("no-such.jsonl", beside));
  CHECK_FALSE(find_input("", beside));
  CHECK_FALSE(find_input("/x.jsonl", beside));                        // absolute: no search under the data folders
  CHECK_FALSE(find_input(std::string(5000, 'q') + ".jsonl", beside)); // a name the file system refuses
  CHECK(*find_input("x.jsonl") == beside / "x.jsonl");                // no `beside`: the data folders still
}

TEST_CASE("resources: the bundled data folder comes after $XATTN_DATA and under every shipped-data folder")
{
  EnvVar env("XATTN_DATA", "/somewhere/else");
  const auto dirs = trace_data_dirs();
  REQUIRE(dirs.size() == data_dirs().size() + 1);
  CHECK(dirs[0] == "/somewhere/else");
  for (std::size_t i = 0; i < data_dirs().size(); ++i)
    CHECK(dirs[i + 1] == data_dirs()[i] / "workloads" / "data");
}
