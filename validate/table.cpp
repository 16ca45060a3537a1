#include "validate/table.hpp"

#include "calibrate/import_util.hpp"
#include "sim/core/error.hpp"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <unistd.h>

namespace xattn::validate
{
namespace detail = calibrate::detail;

int TableRow::column(const std::string& key) const
{
  return columns_.at(key);
}

const std::string& TableRow::cell(const std::string& key) const
{
  const int i = column(key);
  if (i >= static_cast<int>(cells_.size()))
    core::fail(path_, line_, static_cast<int>(text_.size()) + 1, key, "the row has no cell for it");
  return cells_[static_cast<std::size_t>(i)];
}

double TableRow::number(const std::string& key, const std::string& what) const
{
  const std::string& text = cell(key);
  double v = 0;
  std::size_t used = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(v)) fail(key, "'" + text + "' is not " + what);
  return v;
}

void TableRow::fail(const std::string& key, const std::string& message) const
{
  const int i = column(key);
  const int c =
      i < static_cast<int>(cells_.size()) ? detail::cell_column(text_, i) : static_cast<int>(text_.size()) + 1;
  core::fail(path_, line_, c, key, message);
}

void read_table(const std::string& path, std::initializer_list<const char*> required,
                const std::function<void(const TableRow&)>& row)
{
  std::ifstream in(path);
  if (!in) core::fail(path, 0, 0, "", "cannot read");
  std::map<std::string, int> columns;
  std::string line;
  int rows = 0;
  for (int n = 1; std::getline(in, line); ++n) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cells = detail::split_csv(line);
    for (std::string& c : cells)
      c = detail::trim(c);
    if (columns.empty()) {
      for (std::size_t i = 0; i < cells.size(); ++i)
        columns[cells[i]] = static_cast<int>(i);
      for (const char* k : required)
        if (!columns.contains(k)) core::fail(path, n, 1, k, "the header names no column '" + std::string(k) + "'");
      continue;
    }
    row(TableRow(path, n, line, cells, columns));
    ++rows;
  }
  if (rows == 0) core::fail(path, 0, 0, "", "no measurement rows");
}

ScratchDir::ScratchDir(const std::string& prefix)
    : path_(std::filesystem::temp_directory_path() / fmt::format("{}_{}", prefix, getpid()))
{
  std::filesystem::create_directories(path_);
}

ScratchDir::~ScratchDir()
{
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

} // namespace xattn::validate
