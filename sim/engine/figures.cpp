#include "sim/engine/figures.hpp"

#include "sim/core/check.hpp"
#include "sim/core/registry.hpp"
#include "sim/core/units.hpp"

#include <fmt/format.h>

#include <vector>

namespace xattn::sim::engine
{

namespace
{
constexpr auto by_path = [](const FigureInfo& f) { return f.path; };
} // namespace

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
  return core::find_named(figures(), path, by_path);
}

const FigureInfo& figure(std::string_view path)
{
  const FigureInfo* f = find_figure(path);
  XATTN_CHECK(f != nullptr, "no figure '" + std::string(path) + "' in figures.def");
  return *f;
}

std::string figure_paths(FigureUse use, std::string_view sep)
{
  return core::joined_names(
      figures(), sep, [use](const FigureInfo& f) { return f.used_for(use); }, by_path);
}

std::string format_figure(const FigureInfo& f, double v)
{
  return f.unit == FigureUnit::kSeconds ? core::format_seconds(core::Seconds(v)) : fmt::format("{:.2f}", v);
}

} // namespace xattn::sim::engine
