// The figures of a policy's run that are one number each, from one registry (figures.def): their
// path in the policy's summary, the words text names them by, their unit, what they are used for,
// and how each is read from a PolicyResult. Ensembles (the spreads they give), the sweep table's
// and comparison's ensemble columns, the SLOs of plans and capacity studies, and the verdict read
// it. Adding a figure: a line in figures.def (its value from fields PolicyResult has).
#pragma once

#include "sim/engine/result.hpp"

#include <span>
#include <string>
#include <string_view>

namespace xattn::sim::engine
{

enum class FigureUnit { kSeconds, kBytes, kCount, kShare, kPerSecond };

/// What a figure is used for (flags).
enum FigureUse : unsigned {
  kSpread = 1, ///< an ensemble gives its spread over the members
  kBound = 2,  ///< an SLO may bound it
};

struct FigureInfo {
  std::string_view path;  ///< "step_latency_s.mean": its key in a policy's summary, then the field
  std::string_view words; ///< "mean step latency"
  FigureUnit unit = FigureUnit::kCount;
  unsigned uses = 0; ///< FigureUse flags
  double (*value)(const PolicyResult& r) = nullptr;
  bool used_for(FigureUse u) const { return (uses & u) != 0; }
};

/// Every figure, in the registry's order.
std::span<const FigureInfo> figures();
/// The figure at `path`, or null.
const FigureInfo* find_figure(std::string_view path);
/// The figure at `path`, which the code names: an internal error where the registry lacks it.
const FigureInfo& figure(std::string_view path);
/// The paths of the figures used for `use`, in the registry's order, joined by `sep`.
std::string figure_paths(FigureUse use, std::string_view sep);
/// `v` as text prints a figure of `f`'s unit: seconds with their unit (12.3ms), other figures to
/// two decimals.
std::string format_figure(const FigureInfo& f, double v);

} // namespace xattn::sim::engine
