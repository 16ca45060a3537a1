#include "sim/core/check.hpp"

#include "sim/core/error.hpp"

#include <string>

namespace xattn::core
{

void check_failed(const char* file, int line, const char* condition, std::string_view message)
{
  std::string what = std::string(file) + ":" + std::to_string(line) + ": check failed: " + condition;
  if (!message.empty()) what += ": " + std::string(message);
  throw InternalError(what);
}

} // namespace xattn::core
