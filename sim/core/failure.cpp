#include "sim/core/failure.hpp"

#include "sim/core/error.hpp"

#include <array>
#include <new>

namespace xattn::core
{
namespace
{
constexpr std::array<std::pair<FailureKind, std::string_view>, 4> kNames{{{FailureKind::kInput, "input"},
                                                                          {FailureKind::kInvariant, "invariant"},
                                                                          {FailureKind::kLimit, "limit"},
                                                                          {FailureKind::kInternal, "internal"}}};

int severity(FailureKind k)
{
  switch (k) {
  case FailureKind::kInternal:
    return 3;
  case FailureKind::kInput:
    return 2;
  case FailureKind::kLimit:
    return 1;
  case FailureKind::kInvariant:
    return 0;
  }
  return 3;
}
} // namespace

FailureKind failure_kind(const std::exception& e)
{
  if (dynamic_cast<const InputError*>(&e) != nullptr) return FailureKind::kInput;
  if (dynamic_cast<const InvariantError*>(&e) != nullptr) return FailureKind::kInvariant;
  if (dynamic_cast<const LimitError*>(&e) != nullptr) return FailureKind::kLimit;
  return FailureKind::kInternal;
}

ExitCode exit_code(FailureKind k)
{
  switch (k) {
  case FailureKind::kInput:
    return ExitCode::kBadInput;
  case FailureKind::kInvariant:
  case FailureKind::kLimit:
    return ExitCode::kCheckFailed;
  case FailureKind::kInternal:
    return ExitCode::kInternal;
  }
  return ExitCode::kInternal;
}

std::string_view to_string(FailureKind k)
{
  for (const auto& [kind, name] : kNames)
    if (kind == k) return name;
  return "internal";
}

std::optional<FailureKind> parse_failure_kind(std::string_view name)
{
  for (const auto& [kind, n] : kNames)
    if (n == name) return kind;
  return std::nullopt;
}

FailureKind most_severe(FailureKind a, FailureKind b)
{
  return severity(a) >= severity(b) ? a : b;
}

std::string render(FailureKind k, std::string_view message)
{
  switch (k) {
  case FailureKind::kInput:
    return std::string(message);
  case FailureKind::kInvariant:
    return "xattn: " + std::string(message);
  case FailureKind::kLimit:
    return "xattn: stopped: " + std::string(message);
  case FailureKind::kInternal:
    break;
  }
  return "xattn: internal error: " + std::string(message);
}

std::string render(const std::exception& e)
{
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr)
    return render(FailureKind::kInternal,
                  std::string("out of memory (") + e.what() +
                      "): a guard should have stopped the run first; lower engine.max_memory or the workload");
  return render(failure_kind(e), e.what());
}

} // namespace xattn::core
