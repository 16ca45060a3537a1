#include "sim/policy/policy.hpp"

#include "sim/core/check.hpp"
#include "sim/core/registry.hpp"
#include "sim/core/units.hpp"

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

std::unique_ptr<Policy> make(const PolicyInfo& info, const Params& given)
{
  Params all;
  if (info.params != nullptr)
    for (const core::Field& f : *info.params) {
      XATTN_CHECK(f.def != core::kRequired && f.def != core::kNoDefault,
                  "a policy parameter has a default: " + std::string(f.key));
      all[std::string(f.key)] = core::parse_quantity(f.def, f.dim); // as a scenario's value reads
    }
  for (const auto& [key, value] : given) {
    XATTN_CHECK(all.contains(key), "policy " + std::string(info.name) + " has no parameter " + key);
    all[key] = value;
  }
  return info.make(all);
}

double param(const Params& params, std::string_view key)
{
  const auto it = params.find(key);
  XATTN_CHECK(it != params.end(), "a policy read a parameter it does not have: " + std::string(key));
  return it->second;
}

std::vector<std::string> name_list()
{
  std::vector<std::string> out;
  for (const PolicyInfo& p : registry())
    out.emplace_back(p.name);
  return out;
}

} // namespace xattn::sim::policy
