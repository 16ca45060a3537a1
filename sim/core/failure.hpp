// How xattn ends: the one mapping from the error types (sim/core/error.hpp) to exit codes and to
// the line a user reads (docs/architecture.md, "The command line and exit codes"). main() uses it;
// so does a forked simulation process, which hands its parent the kind of its failure (never text
// to be searched) so that the parent rethrows the same type.
#pragma once

#include <exception>
#include <optional>
#include <string>
#include <string_view>

namespace xattn::core
{

/// Every exit code xattn returns.
enum class ExitCode : int {
  kOk = 0,
  kCheckFailed = 1,   ///< the run finished or was stopped, but a check failed (an invariant, a bound, a guard)
  kBadInput = 2,      ///< InputError, and CLI11's own parse errors
  kInternal = 3,      ///< InternalError and anything unexpected: a bug
  kInterrupted = 130, ///< SIGINT or SIGTERM
};
constexpr int code(ExitCode c)
{
  return static_cast<int>(c);
}

/// What kind of failure an exception is.
enum class FailureKind {
  kInput,     ///< InputError
  kInvariant, ///< InvariantError
  kLimit,     ///< LimitError
  kInternal,  ///< InternalError, and every other exception (std::bad_alloc included)
};

FailureKind failure_kind(const std::exception& e);
ExitCode exit_code(FailureKind k);
inline ExitCode exit_code(const std::exception& e)
{
  return exit_code(failure_kind(e));
}

/// "input", "invariant", "limit", "internal": the kind's name in files a child hands its parent.
std::string_view to_string(FailureKind k);
std::optional<FailureKind> parse_failure_kind(std::string_view name);

/// Which of two failures decides a run's exit when several policies fail: a bug first, then bad
/// input, then a stopped run, then an invariant.
FailureKind most_severe(FailureKind a, FailureKind b);

/// The text main() prints on stderr: an input error as it is (FILE:LINE:COL: error: ...), the
/// others prefixed ("xattn: internal error: ...").
std::string render(FailureKind k, std::string_view message);
/// Same for a caught exception; std::bad_alloc says that memory ran out and what to do.
std::string render(const std::exception& e);

} // namespace xattn::core
