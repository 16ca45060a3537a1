#include "sim/core/failure.hpp"

#include "sim/core/error.hpp"

#include <catch2/catch.hpp>

#include <new>

using namespace xattn::core;

TEST_CASE("failure: each error type has its own exit code")
{
  CHECK(code(exit_code(InputError(Diagnostic{"s.yaml", 3, 4, "engine.max_batch", "too large"}))) == 2);
  CHECK(code(exit_code(InvariantError("requests_finish", "2 requests did not finish"))) == 1);
  CHECK(code(exit_code(LimitError("engine.max_memory", "reached 4 GB"))) == 1);
  CHECK(code(exit_code(InternalError("a.cpp:12: check failed: x > 0"))) == 3);
  CHECK(code(exit_code(std::bad_alloc())) == 3);
  CHECK(code(exit_code(std::runtime_error("anything else"))) == 3);
  CHECK(code(ExitCode::kInterrupted) == 130);
}

TEST_CASE("failure: the kind comes from the type, never from the text")
{
  // Bad input whose message quotes words of an internal error is still bad input.
  const InputError input(Diagnostic{"t.jsonl", 3, 0, "timestamp", "got \"internal error: the worker died\""});
  CHECK(failure_kind(input) == FailureKind::kInput);
  CHECK(render(input) == "t.jsonl:3: error: timestamp: got \"internal error: the worker died\"");
  const InternalError bug("bad input");
  CHECK(failure_kind(bug) == FailureKind::kInternal);
  CHECK(render(bug) == "xattn: internal error: bad input");
}

TEST_CASE("failure: messages name the invariant and the limit")
{
  const InvariantError inv("bytes_accounted", "handed 10 B, completed 12 B");
  CHECK(std::string(inv.what()) == "invariant bytes_accounted failed: handed 10 B, completed 12 B");
  CHECK(inv.invariant() == "bytes_accounted");
  CHECK(render(inv) == "xattn: invariant bytes_accounted failed: handed 10 B, completed 12 B");
  const LimitError lim("engine.max_memory", "the run reached 4 GB");
  CHECK(render(lim) == "xattn: stopped: engine.max_memory: the run reached 4 GB");
  CHECK(std::string(InvariantError::rendered("x", "route: as written").what()) == "route: as written");
  CHECK_THAT(render(std::bad_alloc()), Catch::Contains("out of memory"));
}

TEST_CASE("failure: kinds round-trip through their names; severity orders them")
{
  for (FailureKind k : {FailureKind::kInput, FailureKind::kInvariant, FailureKind::kLimit, FailureKind::kInternal})
    CHECK(parse_failure_kind(to_string(k)) == k);
  CHECK_FALSE(parse_failure_kind("died").has_value());
  CHECK(most_severe(FailureKind::kInput, FailureKind::kInternal) == FailureKind::kInternal);
  CHECK(most_severe(FailureKind::kInvariant, FailureKind::kInput) == FailureKind::kInput);
  CHECK(most_severe(FailureKind::kInvariant, FailureKind::kLimit) == FailureKind::kLimit);
  CHECK(most_severe(FailureKind::kInternal, FailureKind::kInvariant) == FailureKind::kInternal);
}
