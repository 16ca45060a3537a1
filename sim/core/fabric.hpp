// The one vocabulary of fabric classes, shared by profiles (keys), topologies (path classes),
// `--fabric`, `topo --path` and `wire_bytes_by_fabric` (docs/file-formats.md).
#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace xattn::core
{

enum class FabricClass { kSameGpu, kNvlink, kPcie, kIbSameLeaf, kIbSpine };

inline constexpr std::array<FabricClass, 5> kAllFabrics{FabricClass::kSameGpu, FabricClass::kNvlink, FabricClass::kPcie,
                                                        FabricClass::kIbSameLeaf, FabricClass::kIbSpine};

/// "same-gpu", "nvlink", "pcie", "ib-same-leaf", "ib-spine".
constexpr std::string_view to_string(FabricClass f)
{
  switch (f) {
  case FabricClass::kSameGpu:
    return "same-gpu";
  case FabricClass::kNvlink:
    return "nvlink";
  case FabricClass::kPcie:
    return "pcie";
  case FabricClass::kIbSameLeaf:
    return "ib-same-leaf";
  case FabricClass::kIbSpine:
    return "ib-spine";
  }
  return "?";
}

constexpr std::optional<FabricClass> parse_fabric(std::string_view s)
{
  for (FabricClass f : kAllFabrics)
    if (to_string(f) == s) return f;
  return std::nullopt;
}

/// "same-gpu|nvlink|pcie|ib-same-leaf|ib-spine", for schemas and help texts.
inline constexpr std::string_view kFabricChoices = "same-gpu|nvlink|pcie|ib-same-leaf|ib-spine";

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
