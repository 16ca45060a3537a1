// What the validations that read a published table share (validate/expert_parallel.cpp,
// validate/handoff.cpp): a CSV table of named columns read row by row, each cell's errors at its
// file, line and column; and a scratch folder for the scenarios they build, removed on every path.
#pragma once

#include <filesystem>
#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

namespace xattn::validate
{

/// One data row of a table: its cells by column name.
class TableRow
{
public:
  TableRow(const std::string& path, int line, const std::string& text, const std::vector<std::string>& cells,
           const std::map<std::string, int>& columns)
      : path_(path), line_(line), text_(text), cells_(cells), columns_(columns)
  {
  }
  int line() const { return line_; }
  /// The header names column `key`.
  bool has(const std::string& key) const { return columns_.contains(key); }
  /// Its cell of column `key` (trimmed); InputError where the row is too short.
  const std::string& cell(const std::string& key) const;
  /// Its cell as a finite number; InputError "'TEXT' is not WHAT" at the cell.
  double number(const std::string& key, const std::string& what) const;
  /// Throws InputError at the cell of column `key`.
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;

private:
  int column(const std::string& key) const;
  const std::string& path_;
  int line_;
  const std::string& text_;
  const std::vector<std::string>& cells_;
  const std::map<std::string, int>& columns_;
};

/// Reads `path`: `#` lines are comments, the first other line the header, which must name every
/// column of `required`; calls `row` for each data row, then fails where there was none.
void read_table(const std::string& path, std::initializer_list<const char*> required,
                const std::function<void(const TableRow&)>& row);

/// A folder of its own under the system's temporary one, removed with everything in it when this
/// goes out of scope.
class ScratchDir
{
public:
  explicit ScratchDir(const std::string& prefix);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

private:
  std::filesystem::path path_;
};

} // namespace xattn::validate
