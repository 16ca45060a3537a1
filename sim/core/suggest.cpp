#include "sim/core/suggest.hpp"

#include <algorithm>

namespace xattn::core
{

std::size_t edit_distance(std::string_view a, std::string_view b)
{
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t prev = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cur = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] == b[j - 1] ? 0 : 1)});
      prev = cur;
    }
  }
  return row[b.size()];
}

std::string closest(std::string_view typed, const std::vector<std::string>& candidates)
{
  std::string best;
  std::size_t best_d = 3;
  for (const std::string& c : candidates)
    if (const std::size_t d = edit_distance(typed, c); d < best_d) {
      best_d = d;
      best = c;
    }
  return best;
}

std::string hint_and_list(std::string_view typed, const std::vector<std::string>& candidates, std::string_view label)
{
  std::string msg = "(";
  if (const std::string best = closest(typed, candidates); !best.empty()) msg += "did you mean '" + best + "'?; ";
  msg += std::string(label) + ": ";
  for (std::size_t i = 0; i < candidates.size(); ++i)
    msg += (i == 0 ? "" : ", ") + candidates[i];
  return msg + ")";
}

std::string unknown_name(std::string_view kind, std::string_view typed, const std::vector<std::string>& candidates)
{
  return "unknown " + std::string(kind) + " '" + std::string(typed) + "' " +
         hint_and_list(typed, candidates, "expected one of");
}

} // namespace xattn::core
