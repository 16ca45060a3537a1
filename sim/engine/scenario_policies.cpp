#include "sim/engine/scenario_policies.hpp"

#include "sim/core/check.hpp"
#include "sim/core/suggest.hpp"
#include "sim/model/pricing.hpp"
#include "sim/policy/policy.hpp"

#include <algorithm>

namespace xattn::sim::engine
{
namespace
{

// The scenario's policy variants: each a policy of the registry under a label and parameters of
// its own.
void read_variants(Scenario& sc, core::Section& top)
{
  if (!top.has("policy_variants")) return;
  for (auto& [label, v] : top.named_sections("policy_variants")) {
    if (policy::find(label) != nullptr)
      v.error("", "a variant named like a policy: give it a label of its own (" + label + "-...)");
    else if (const std::string problem = core::folder_name_problem(label); !problem.empty())
      v.error("", "a variant's label names its results: " + problem);
    PolicyVariant pv;
    pv.policy = v.choice("policy");
    if (v.has("prior_steps")) pv.prior_steps = v.number("prior_steps");
    const policy::PolicyInfo* info = policy::find(pv.policy);
    for (const policy::PolicyInfo& owner : policy::registry()) {
      if (owner.params == nullptr) continue;
      for (const core::Field& f : *owner.params) {
        if (!v.has(f.key)) continue;
        const double value = v.number(f.key);
        if (info != nullptr && &owner != info)
          v.error(f.key, "a parameter of " + std::string(owner.name) + ", not of " + pv.policy);
        else
          pv.params[std::string(f.key)] = value;
      }
    }
    if (info != nullptr) sc.policy_variants[label] = std::move(pv); // else its policy was reported
  }
}

} // namespace

void read_policies(Scenario& sc, core::Section& top)
{
  read_variants(sc, top);
  std::vector<std::string> known = policy::name_list();
  for (const auto& [label, v] : sc.policy_variants)
    known.push_back(label);
  for (const std::string& p : top.strings("policies")) {
    if (std::find(known.begin(), known.end(), p) == known.end())
      top.error("policies", core::unknown_name("policy", p, known));
    else if (std::find(sc.policies.begin(), sc.policies.end(), p) != sc.policies.end())
      top.error("policies", "policy '" + p + "' is listed twice");
    else
      sc.policies.push_back(p);
  }
  if (!top.has("policies"))
    for (const policy::PolicyInfo& p : policy::registry())
      sc.policies.emplace_back(p.name);
  const bool prices_local = std::any_of(sc.policies.begin(), sc.policies.end(),
                                        [&](const std::string& p) { return sc.policy_info(p).recomputes; });
  if (prices_local && !sc.profile.name.empty() && sc.model.layers > 0)
    if (std::string missing = missing_dimensions(sc.model, sc.profile); !missing.empty()) top.error("model", missing);
  if (sc.selection.sparse && !sc.profile.name.empty() && sc.model.layers > 0)
    if (std::string missing = missing_for_selection(sc.model, sc.profile); !missing.empty())
      top.error("model", missing);
}

const policy::PolicyInfo& Scenario::policy_info(const std::string& label) const
{
  const auto v = policy_variants.find(label);
  const policy::PolicyInfo* info = policy::find(v == policy_variants.end() ? label : v->second.policy);
  XATTN_CHECK(info != nullptr, "a policy neither in the registry nor a variant: " + label);
  return *info;
}

const policy::Params& Scenario::policy_params(const std::string& label) const
{
  static const policy::Params none;
  const auto v = policy_variants.find(label);
  return v == policy_variants.end() ? none : v->second.params;
}

double Scenario::prior_steps(const std::string& label) const
{
  const auto v = policy_variants.find(label);
  return v == policy_variants.end() ? predicate_prior_steps : v->second.prior_steps.value_or(predicate_prior_steps);
}

} // namespace xattn::sim::engine
