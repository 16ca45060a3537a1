#include "sim/core/error.hpp"

namespace xattn::core
{
namespace
{
std::string join(const std::vector<Diagnostic>& ds)
{
  std::string out;
  for (const Diagnostic& d : ds) {
    if (!out.empty()) out += '\n';
    out += d.str();
  }
  return out;
}
} // namespace

std::string Diagnostic::str() const
{
  std::string out = file.empty() ? std::string("<input>") : file;
  if (line > 0) {
    out += ':' + std::to_string(line);
    if (column > 0) out += ':' + std::to_string(column);
  }
  out += ": error: ";
  if (!key.empty()) out += key + ": ";
  out += message;
  return out;
}

InputError::InputError(std::vector<Diagnostic> diagnostics)
    : std::runtime_error(join(diagnostics)), diagnostics_(std::move(diagnostics))
{
}

InputError::InputError(Diagnostic diagnostic) : InputError(std::vector<Diagnostic>{std::move(diagnostic)}) {}

InvariantError::InvariantError(std::string invariant, const std::string& detail)
    : std::runtime_error("invariant " + invariant + " failed: " + detail), invariant_(std::move(invariant))
{
}

InvariantError::InvariantError(Rendered, std::string invariant, const std::string& message)
    : std::runtime_error(message), invariant_(std::move(invariant))
{
}

InvariantError InvariantError::rendered(std::string invariant, const std::string& message)
{
  return InvariantError(Rendered{}, std::move(invariant), message);
}

LimitError::LimitError(std::string key, const std::string& message)
    : std::runtime_error(key + ": " + message), key_(std::move(key))
{
}

LimitError::LimitError(Rendered, std::string key, const std::string& message)
    : std::runtime_error(message), key_(std::move(key))
{
}

LimitError LimitError::rendered(std::string key, const std::string& message)
{
  return LimitError(Rendered{}, std::move(key), message);
}

void Diagnostics::throw_if_any() const
{
  if (!list_.empty()) throw InputError(list_);
}

void fail(std::string file, int line, int column, std::string key, std::string message)
{
  throw InputError(Diagnostic{std::move(file), line, column, std::move(key), std::move(message)});
}

} // namespace xattn::core
