// How a policy's simulation process (a child forked by the driver, driver.hpp) tells its parent
// why it failed: DIR/POLICY.error holds the kind of the error (sim/core/failure.hpp) and its
// message as JSON, written atomically, and the parent rethrows the same type. The kind is carried,
// never guessed from the text, which may quote anything a user wrote.
#pragma once

#include "sim/core/failure.hpp"

#include <exception>
#include <filesystem>
#include <string>
#include <vector>

namespace xattn::sim::engine
{

struct ChildFailure {
  std::string policy;
  core::FailureKind kind = core::FailureKind::kInternal;
  std::string name;    ///< the invariant that failed, or the key of the limit reached ("" otherwise)
  std::string message; ///< the error's what()
};

/// Records `e` as DIR/POLICY.error; returns the exit code the child should end with.
int write_child_failure(const std::filesystem::path& dir, const std::string& policy, const std::exception& e);

/// The failure of POLICY's child, which ended with wait() status `status`: its record, or, when it
/// left none (killed by a signal, crashed), an internal error saying how it ended.
ChildFailure read_child_failure(const std::filesystem::path& dir, const std::string& policy, int status);

/// Throws the failures of a run's children as one error of the most severe kind among them
/// (core::most_severe), one line per policy ("POLICY: message"). Bad input is reported at
/// `scenario_file`. REQUIRES: !failures.empty().
[[noreturn]] void throw_child_failures(const std::string& scenario_file, const std::vector<ChildFailure>& failures);

} // namespace xattn::sim::engine
