#include "sim/core/fault.hpp"

#include "sim/core/check.hpp"
#include "sim/core/error.hpp"

#include <array>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace xattn::core
{
namespace
{
constexpr std::array kFaults{
#define XATTN_FAULT_INFO(e, name, what) FaultInfo{Fault::e, name, what},
    XATTN_FAULT_LIST(XATTN_FAULT_INFO)
#undef XATTN_FAULT_INFO
};

std::uint64_t g_at = 1;   // the pass that injects
std::uint64_t g_seen = 0; // passes of the armed fault's site so far

std::string_view name_of(Fault f)
{
  for (const FaultInfo& i : kFaults)
    if (i.fault == f) return i.name;
  return "none";
}
} // namespace

namespace fault_detail
{
Fault g_armed = Fault::kNone;

bool pass()
{
  if (++g_seen != g_at) return false;
  const std::string_view name = name_of(g_armed);
  std::fprintf(stderr, "xattn: fault injected: %.*s (pass %llu of its site)\n", static_cast<int>(name.size()),
               name.data(), static_cast<unsigned long long>(g_at));
  std::fflush(stderr);
  return true;
}
} // namespace fault_detail

std::span<const FaultInfo> faults()
{
  return kFaults;
}

void arm_fault(Fault f, std::uint64_t at)
{
  XATTN_CHECK(at >= 1, "a fault is injected at a pass counted from 1");
  fault_detail::g_armed = f;
  g_at = at;
  g_seen = 0;
}

Fault armed_fault()
{
  return fault_detail::g_armed;
}

void arm_fault_from_env()
{
  const char* env = std::getenv("XATTN_FAULT");
  if (env == nullptr || *env == '\0') {
    arm_fault(Fault::kNone);
    return;
  }
  const std::string_view spec(env);
  const std::size_t at_sign = spec.find('@');
  const std::string_view name = spec.substr(0, at_sign);
  std::uint64_t at = 1;
  if (at_sign != std::string_view::npos) {
    const std::string_view n = spec.substr(at_sign + 1);
    const auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), at);
    if (n.empty() || ec != std::errc() || end != n.data() + n.size() || at == 0)
      fail("environment", 0, 0, "XATTN_FAULT",
           "'" + std::string(spec) + "': the pass after '@' is a positive integer (NAME or NAME@N)");
  }
  for (const FaultInfo& i : kFaults)
    if (i.name == name) {
      arm_fault(i.fault, at);
      return;
    }
  std::string names;
  for (const FaultInfo& i : kFaults)
    names += (names.empty() ? "" : ", ") + std::string(i.name);
  fail("environment", 0, 0, "XATTN_FAULT", "unknown fault '" + std::string(name) + "' (one of: " + names + ")");
}

} // namespace xattn::core
