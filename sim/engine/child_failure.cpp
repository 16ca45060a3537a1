#include "sim/engine/child_failure.hpp"

#include "sim/core/atomic_file.hpp"
#include "sim/core/error.hpp"

#include <nlohmann/json.hpp>

#include <csignal>
#include <cstring>
#include <fstream>
#include <sys/wait.h>

namespace xattn::sim::engine
{
namespace fs = std::filesystem;

namespace
{
fs::path record(const fs::path& dir, const std::string& policy)
{
  return dir / (policy + ".error");
}

std::string how_it_ended(int status)
{
  if (WIFSIGNALED(status))
    return "the simulation process died (signal " + std::to_string(WTERMSIG(status)) + ", " +
           strsignal(WTERMSIG(status)) + ")";
  return "the simulation process exited with code " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
         " and left no record of why";
}
} // namespace

int write_child_failure(const fs::path& dir, const std::string& policy, const std::exception& e)
{
  const core::FailureKind kind = core::failure_kind(e);
  std::string name;
  if (const auto* inv = dynamic_cast<const core::InvariantError*>(&e))
    name = inv->invariant();
  else if (const auto* lim = dynamic_cast<const core::LimitError*>(&e))
    name = lim->key();
  const nlohmann::json j{{"kind", core::to_string(kind)}, {"name", name}, {"message", std::string(e.what())}};
  try {
    core::write_file_atomically(record(dir, policy), j.dump());
  } catch (const std::exception&) {
    // No record: the parent reports how the process ended, as an internal error.
  }
  return core::code(core::exit_code(kind));
}

ChildFailure read_child_failure(const fs::path& dir, const std::string& policy, int status)
{
  ChildFailure f{policy, core::FailureKind::kInternal, "", how_it_ended(status)};
  std::ifstream in(record(dir, policy), std::ios::binary);
  if (!in) return f;
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    const auto kind = core::parse_failure_kind(j.at("kind").get<std::string>());
    if (kind) {
      f.kind = *kind;
      f.name = j.value("name", std::string());
      f.message = j.at("message").get<std::string>();
    }
  } catch (const nlohmann::json::exception& e) {
    f.message = "unreadable failure record " + record(dir, policy).string() + ": " + e.what();
  }
  return f;
}

void throw_child_failures(const std::string& scenario_file, const std::vector<ChildFailure>& failures)
{
  if (failures.empty()) throw core::InternalError("throw_child_failures: no failure to throw");
  const ChildFailure* first = &failures.front();
  for (const ChildFailure& f : failures)
    if (core::most_severe(first->kind, f.kind) != first->kind) first = &f;
  std::string all;
  for (const ChildFailure& f : failures)
    all += (all.empty() ? "" : "\n") + f.policy + ": " + f.message;
  switch (first->kind) {
  case core::FailureKind::kInput:
    throw core::InputError(core::Diagnostic{scenario_file, 0, 0, "", all});
  case core::FailureKind::kInvariant:
    throw core::InvariantError::rendered(first->name, all);
  case core::FailureKind::kLimit:
    throw core::LimitError::rendered(first->name, all);
  case core::FailureKind::kInternal:
    break;
  }
  throw core::InternalError(all);
}

} // namespace xattn::sim::engine
