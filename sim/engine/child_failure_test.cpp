#include "sim/engine/child_failure.hpp"

#include "sim/core/error.hpp"

#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace xattn;
using sim::engine::ChildFailure;

namespace
{
// A scratch folder, removed at the end of the test.
struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("xattn-child-failure-" + std::to_string(getpid()));
  Scratch() { fs::create_directories(dir); }
  ~Scratch() { fs::remove_all(dir); }
};

// wait() status of a process that exited with `code`, or was killed by `sig`.
int exited(int code)
{
  const pid_t pid = fork();
  if (pid == 0) _exit(code);
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}
int killed(int sig)
{
  const pid_t pid = fork();
  if (pid == 0) {
    raise(sig);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

ChildFailure round_trip(const Scratch& s, const std::string& policy, const std::exception& e, int want_code)
{
  const int code = sim::engine::write_child_failure(s.dir, policy, e);
  CHECK(code == want_code);
  return sim::engine::read_child_failure(s.dir, policy, exited(code));
}
} // namespace

TEST_CASE("child failure: the kind crosses the process boundary, not the text")
{
  Scratch s;
  const ChildFailure input = round_trip(
      s, "route", core::InputError(core::Diagnostic{"t.jsonl", 3, 0, "timestamp", "got \"internal error: died\""}), 2);
  CHECK(input.kind == core::FailureKind::kInput);
  CHECK(input.message == "t.jsonl:3: error: timestamp: got \"internal error: died\"");
  const ChildFailure inv = round_trip(s, "fetch", core::InvariantError("requests_finish", "1 request"), 1);
  CHECK(inv.kind == core::FailureKind::kInvariant);
  CHECK(inv.name == "requests_finish");
  const ChildFailure bug = round_trip(s, "local", core::InternalError("x.cpp:1: check failed: y"), 3);
  CHECK(bug.kind == core::FailureKind::kInternal);
  CHECK(bug.message == "x.cpp:1: check failed: y");

  // Thrown again as the same type, the policy named on each line.
  CHECK_THROWS_AS(sim::engine::throw_child_failures("s.yaml", {input}), core::InputError);
  CHECK_THROWS_WITH(sim::engine::throw_child_failures("s.yaml", {input}),
                    "s.yaml: error: route: t.jsonl:3: error: timestamp: got \"internal error: died\"");
  CHECK_THROWS_AS(sim::engine::throw_child_failures("s.yaml", {inv}), core::InvariantError);
  // The most severe kind decides: a bug over bad input over an invariant.
  CHECK_THROWS_AS(sim::engine::throw_child_failures("s.yaml", {inv, input}), core::InputError);
  CHECK_THROWS_AS(sim::engine::throw_child_failures("s.yaml", {input, bug, inv}), core::InternalError);
}

TEST_CASE("child failure: a child that left no record is an internal error saying how it ended")
{
  Scratch s;
  const ChildFailure f = sim::engine::read_child_failure(s.dir, "route", killed(SIGKILL));
  CHECK(f.kind == core::FailureKind::kInternal);
  CHECK_THAT(f.message, Catch::Contains("died (signal 9"));
  const ChildFailure g = sim::engine::read_child_failure(s.dir, "route", exited(2));
  CHECK(g.kind == core::FailureKind::kInternal);
  CHECK_THAT(g.message, Catch::Contains("exited with code 2 and left no record"));
}
