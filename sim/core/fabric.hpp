// The one vocabulary of fabric classes, shared by profiles (keys), topologies (path classes),
// `--fabric`, `topo --path` and `wire_bytes_by_fabric` (docs/file-formats.md).
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace xattn::core
{

enum class FabricClass {
#define XATTN_FABRIC(id, name, scope, what) id,
#include "sim/core/fabrics.def"
#undef XATTN_FABRIC
};

/// What a transfer of a class crosses, in growing order.
enum class FabricScope { kSameGpu, kInNode, kInterNode };

struct FabricInfo {
  FabricClass fabric;
  std::string_view name; ///< as files and flags spell it
  FabricScope scope;
  std::string_view what; ///< a few words, as the profile's fabrics section describes it
};

/// Every class, in fabrics.def's order.
inline constexpr std::array kFabrics{
#define XATTN_FABRIC(id, name, scope, what) FabricInfo{FabricClass::id, name, FabricScope::scope, what},
#include "sim/core/fabrics.def"
#undef XATTN_FABRIC
};

inline constexpr std::array<FabricClass, kFabrics.size()> kAllFabrics = [] {
  std::array<FabricClass, kFabrics.size()> all{};
  for (std::size_t i = 0; i < kFabrics.size(); ++i)
    all[i] = kFabrics[i].fabric;
  return all;
}();

constexpr const FabricInfo& fabric_info(FabricClass f)
{
  return kFabrics[static_cast<std::size_t>(f)];
}

/// "same-gpu", "nvlink", "pcie", "ib-same-leaf", "ib-spine".
constexpr std::string_view to_string(FabricClass f)
{
  return fabric_info(f).name;
}

constexpr std::optional<FabricClass> parse_fabric(std::string_view s)
{
  for (const FabricInfo& f : kFabrics)
    if (f.name == s) return f.fabric;
  return std::nullopt;
}

/// The names of the classes that cross at least `from` (kSameGpu: every class), in order: for
/// flags' choices.
std::vector<std::string> fabric_names(FabricScope from = FabricScope::kSameGpu);
/// The same joined by '|' ("same-gpu|nvlink|pcie|ib-same-leaf|ib-spine"), for schemas and messages.
std::string fabric_choices(FabricScope from = FabricScope::kSameGpu);

/// Where a transfer's dispatch runs: device-initiated (IBGDA-like) or through a CPU proxy.
enum class Transport { kGpu, kProxy };

/// "gpu" or "proxy", as files and flags spell them.
constexpr std::string_view to_string(Transport t)
{
  return t == Transport::kGpu ? "gpu" : "proxy";
}
constexpr std::optional<Transport> parse_transport(std::string_view s)
{
  if (s == "gpu") return Transport::kGpu;
  if (s == "proxy") return Transport::kProxy;
  return std::nullopt;
}

} // namespace xattn::core
