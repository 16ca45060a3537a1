#include "sim/engine/figures.hpp"

#include "sim/core/check.hpp"
#include "sim/core/units.hpp"

#include <fmt/format.h>

#include <vector>

namespace xattn::sim::engine
{

std::span<const FigureInfo> figures()
{
  using enum FigureUnit;
  static const std::vector<FigureInfo> all{
#define XATTN_FIGURE(path, words, unit, uses, expr)                                                                    \
  FigureInfo{path, words, unit, uses, [](const PolicyResult& r) -> double { return expr; }},
#include "sim/engine/figures.def"
#undef XATTN_FIGURE
  };
  return all;
}

const FigureInfo* find_figure(std::string_view path)
{
  for (const FigureInfo& f : figures())
    if (f.path == path) return &f;
  return nullptr;
}

const FigureInfo& figure(std::string_view path)
{
  const FigureInfo* f = find_figure(path);
  XATTN_CHECK(f != nullptr, "no figure '" + std::string(path) + "' in figures.def");
  return *f;
}

std::string figure_paths(FigureUse use, std::string_view sep)
{
  std::string out;
  for (const FigureInfo& f : figures())
    if (f.used_for(use)) out += (out.empty() ? "" : std::string(sep)) + std::string(f.path);
  return out;
}

std::string format_figure(const FigureInfo& f, double v)
{
  return f.unit == FigureUnit::kSeconds ? core::format_seconds(core::Seconds(v)) : fmt::format("{:.2f}", v);
}

} // namespace xattn::sim::engine
