#include "sim/policy/policy.hpp"

#include "sim/core/registry.hpp"

#include <vector>

namespace xattn::sim::policy
{

#define XATTN_POLICY(id) PolicyInfo info_##id();
#include "sim/policy/policies.def"
#undef XATTN_POLICY

std::span<const PolicyInfo> registry()
{
  static const std::vector<PolicyInfo> all{
#define XATTN_POLICY(id) info_##id(),
#include "sim/policy/policies.def"
#undef XATTN_POLICY
  };
  return all;
}

const PolicyInfo* find(std::string_view name)
{
  return core::find_named(registry(), name);
}

std::string names(std::string_view sep)
{
  return core::joined_names(registry(), sep);
}

std::vector<std::string> name_list()
{
  std::vector<std::string> out;
  for (const PolicyInfo& p : registry())
    out.emplace_back(p.name);
  return out;
}

} // namespace xattn::sim::policy
