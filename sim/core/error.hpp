// The error types. Library code throws them; only main() turns them into lines on stderr and an
// exit code, through the one mapping in sim/core/failure.hpp:
//
//   InputError      bad input (a file, a flag, a value the user gave us)         exit 2
//     FitError      ... a configuration whose data does not fit its memory        exit 2
//   InvariantError  a check on the simulation's answer failed (an invariant)     exit 1
//   LimitError      a guard stopped the run (engine.max_memory)                  exit 1
//   InternalError   a bug in xattn: a broken precondition (XATTN_CHECK)          exit 3
//
// InputError renders as "FILE:LINE:COL: error: KEY: what"; every loader collects all problems it
// can find before it throws, so that a user fixes a file in one pass.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace xattn::core
{

/// One problem in one input. `line` and `column` are 1-based; 0 means "not known" (a whole file,
/// a command-line flag) and the position is left out of the rendered line.
struct Diagnostic {
  std::string file; ///< path as the user named it, or "command line"
  int line = 0;
  int column = 0;
  std::string key;     ///< dotted key path inside the file ("topology.fabric.bandwidth"), may be empty
  std::string message; ///< what is wrong, in words

  /// "file:line:col: error: key: message" (parts that are unknown are left out).
  std::string str() const;
};

/// Bad input. what() is every diagnostic's str(), one per line.
class InputError : public std::runtime_error
{
public:
  explicit InputError(std::vector<Diagnostic> diagnostics);
  explicit InputError(Diagnostic diagnostic);
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

private:
  std::vector<Diagnostic> diagnostics_;
};

/// Bad input of one kind: a well-formed configuration whose data does not fit in its memory (the
/// corpus's KV on its holders, a requester's copy of the index keys). `xattn run` refuses it as
/// any bad input; a plan judges such a size as failing rather than refusing the whole plan.
class FitError : public InputError
{
public:
  using InputError::InputError;
};

/// Collects diagnostics while a loader reads a whole input, then throws them together.
class Diagnostics
{
public:
  void add(Diagnostic d) { list_.push_back(std::move(d)); }
  bool empty() const { return list_.empty(); }
  std::size_t size() const { return list_.size(); }
  const std::vector<Diagnostic>& list() const { return list_; }
  /// Throws InputError with everything collected, if anything was.
  void throw_if_any() const;

private:
  std::vector<Diagnostic> list_;
};

/// An invariant of the simulation failed (sim/engine/README.md, "Invariants"): the answer would be
/// wrong. what() is "invariant NAME failed: DETAIL".
class InvariantError : public std::runtime_error
{
public:
  InvariantError(std::string invariant, const std::string& detail);
  /// The error as another process rendered it: what() is `message` as is.
  static InvariantError rendered(std::string invariant, const std::string& message);
  const std::string& invariant() const { return invariant_; }

private:
  struct Rendered {
  };
  InvariantError(Rendered, std::string invariant, const std::string& message);
  std::string invariant_;
};

/// A guard stopped the run before the machine had to (engine.max_memory): not a bug and not bad
/// input; `key` names the setting that sets the limit.
class LimitError : public std::runtime_error
{
public:
  /// what() is "KEY: MESSAGE".
  LimitError(std::string key, const std::string& message);
  /// The error as another process rendered it: what() is `message` as is.
  static LimitError rendered(std::string key, const std::string& message);
  const std::string& key() const { return key_; }

private:
  struct Rendered {
  };
  LimitError(Rendered, std::string key, const std::string& message);
  std::string key_;
};

/// A bug in xattn: a broken precondition or internal invariant (XATTN_CHECK, sim/core/check.hpp).
class InternalError : public std::runtime_error
{
public:
  using std::runtime_error::runtime_error;
};

/// Shorthand for a single-problem throw.
[[noreturn]] void fail(std::string file, int line, int column, std::string key, std::string message);

} // namespace xattn::core
