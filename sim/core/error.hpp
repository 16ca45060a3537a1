// The one error type for bad input (a file, a flag, a value the user gave us).
//
// Library code throws InputError; only main() turns it into "FILE:LINE:COL: error: KEY: what"
// lines on stderr and exit code 2. Every loader collects all problems it can find before it
// throws, so that a user fixes a file in one pass.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace xattn::core {

/// One problem in one input. `line` and `column` are 1-based; 0 means "not known" (a whole file,
/// a command-line flag) and the position is left out of the rendered line.
struct Diagnostic {
  std::string file; ///< path as the user named it, or "command line"
  int line   = 0;
  int column = 0;
  std::string key;     ///< dotted key path inside the file ("topology.fabric.bandwidth"), may be empty
  std::string message; ///< what is wrong, in words

  /// "file:line:col: error: key: message" (parts that are unknown are left out).
  std::string str() const;
};

/// Bad input. what() is every diagnostic's str(), one per line.
class InputError : public std::runtime_error {
public:
  explicit InputError(std::vector<Diagnostic> diagnostics);
  explicit InputError(Diagnostic diagnostic);
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

private:
  std::vector<Diagnostic> diagnostics_;
};

/// Collects diagnostics while a loader reads a whole input, then throws them together.
class Diagnostics {
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

/// Shorthand for a single-problem throw.
[[noreturn]] void fail(std::string file, int line, int column, std::string key, std::string message);

} // namespace xattn::core
