#include "sim/core/fabric.hpp"

namespace xattn::core
{

// FabricClass's values index kFabrics (fabric_info): both come from fabrics.def, in its order.
#define XATTN_FABRIC(id, name, scope, what)                                                                            \
  static_assert(kFabrics[static_cast<std::size_t>(FabricClass::id)].fabric == FabricClass::id);
#include "sim/core/fabrics.def"
#undef XATTN_FABRIC

std::vector<std::string> fabric_names(FabricScope from)
{
  std::vector<std::string> out;
  for (const FabricInfo& f : kFabrics)
    if (f.scope >= from) out.emplace_back(f.name);
  return out;
}

std::string fabric_choices(FabricScope from)
{
  std::string out;
  for (const std::string& name : fabric_names(from))
    out += (out.empty() ? "" : "|") + name;
  return out;
}

} // namespace xattn::core
