// `xattn data list`: the trace data sets xattn finds (bundled in workloads/data/, installed with
// the binary, or under $XATTN_DATA), each with its size, records, origin and licence, every file
// read through its importer and checked against its ORIGIN.yaml.
#include "sim/cli/command.hpp"
#include "sim/core/failure.hpp"
#include "sim/core/resources.hpp"
#include "workloads/datasets.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

namespace xattn::cli
{
namespace
{
using namespace xattn::workloads;

struct DataFlags {
  bool json = false, describe = false;
};

std::string kilobytes(std::uint64_t bytes)
{
  return fmt::format("{:.1f} kB", static_cast<double>(bytes) / 1e3);
}

int list_data_sets(const DataFlags& f)
{
  const std::vector<DataSet> sets = find_data_sets();
  nlohmann::json out = nlohmann::json::array();
  std::vector<std::string> problems;
  std::uint64_t total_compressed = 0;
  std::size_t total_files = 0;
  if (!f.json)
    std::cout << fmt::format("{:<12} {:>5} {:>11} {:>8}  {:<11} {}\n", "set", "files", "compressed", "records",
                             "licence", "origin (commit)");
  for (const DataSet& s : sets) {
    Measured sum;
    nlohmann::json files = nlohmann::json::array();
    for (const DataFile& file : s.files) {
      const Measured m = measure(s, file);
      for (std::string& p : mismatches(s, file, m))
        problems.push_back(std::move(p));
      sum.compressed_bytes += m.compressed_bytes;
      sum.bytes += m.bytes;
      sum.records += m.records;
      files.push_back({{"file", file.file},
                       {"format", file.format.name()},
                       {"source", file.source},
                       {"blob", file.blob},
                       {"compressed_bytes", m.compressed_bytes},
                       {"bytes", m.bytes},
                       {"records", m.records}});
    }
    total_compressed += sum.compressed_bytes;
    total_files += s.files.size();
    out.push_back({{"name", s.name},
                   {"dir", s.dir.string()},
                   {"description", s.description},
                   {"origin", s.origin},
                   {"commit", s.commit},
                   {"licence", s.licence},
                   {"licence_file", (s.dir / s.licence_file).string()},
                   {"changes", s.changes},
                   {"compressed_bytes", sum.compressed_bytes},
                   {"bytes", sum.bytes},
                   {"records", sum.records},
                   {"files", files}});
    if (!f.json)
      std::cout << fmt::format("{:<12} {:>5} {:>11} {:>8}  {:<11} {} ({})\n", s.name, s.files.size(),
                               kilobytes(sum.compressed_bytes), sum.records, s.licence, s.origin,
                               s.commit.substr(0, 10))
                << fmt::format("{:<12} {}\n", "", s.description) << fmt::format("{:<12} in {}\n", "", s.dir.string());
  }
  if (f.json)
    std::cout << nlohmann::json{{"sets", out}, {"compressed_bytes", total_compressed}}.dump(2) << "\n";
  else
    std::cout << fmt::format("{} sets, {} files, {} compressed\n", sets.size(), total_files,
                             kilobytes(total_compressed));
  if (sets.empty()) {
    std::cerr << "xattn data list: no data set found; looked in:\n";
    for (const auto& d : core::trace_data_dirs())
      std::cerr << "  " << d.string() << "\n";
    return core::code(core::ExitCode::kCheckFailed);
  }
  for (const std::string& p : problems)
    std::cerr << "xattn data list: " << p << "\n";
  return core::code(problems.empty() ? core::ExitCode::kOk : core::ExitCode::kCheckFailed);
}
} // namespace

void add_data(CLI::App& app, Action& action)
{
  auto* data = app.add_subcommand("data", "The trace data sets that ship with xattn (origin, licence, size)");
  data->require_subcommand(1);
  auto f = std::make_shared<DataFlags>();
  auto* list = data->add_subcommand(
      "list", "Each data set found (workloads/data/, the installed data, $XATTN_DATA): size, records, origin, licence");
  list->add_flag("--json", f->json, "print one JSON object");
  list->add_flag("--describe", f->describe, "print the schema of a data set's ORIGIN.yaml and exit");
  on_run(list, action, [f] {
    if (f->describe) {
      std::cout << describe_format("origin");
      return 0;
    }
    return list_data_sets(*f);
  });
}

} // namespace xattn::cli
