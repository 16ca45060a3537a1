// What every registry of named variants does with its entries (policies, trace formats, figures):
// find one by its name, list the names. Each registry is a list of entries made once from its .def
// file; `Name` reads an entry's name (its `name` field unless given).
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace xattn::core
{

struct ByName {
  template <class Info>
  std::string_view operator()(const Info& i) const
  {
    return i.name;
  }
};

/// The entry of `all` named `name`, or null.
template <class Info, class Name = ByName>
const Info* find_named(std::span<const Info> all, std::string_view name, Name of = {})
{
  for (const Info& i : all)
    if (of(i) == name) return &i;
  return nullptr;
}

/// The names of the entries of `all` that `keep` keeps, in order, joined by `sep`.
template <class Info, class Keep, class Name = ByName>
std::string joined_names(std::span<const Info> all, std::string_view sep, Keep keep, Name of = {})
{
  std::string out;
  for (const Info& i : all)
    if (keep(i)) out += (out.empty() ? "" : std::string(sep)) + std::string(of(i));
  return out;
}
template <class Info>
std::string joined_names(std::span<const Info> all, std::string_view sep)
{
  return joined_names(all, sep, [](const Info&) { return true; });
}

} // namespace xattn::core
