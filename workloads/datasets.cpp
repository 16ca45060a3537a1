#include "workloads/datasets.hpp"
#include "sim/core/yaml.hpp"

#include "sim/core/resources.hpp"
#include "workloads/compressed_file.hpp"

#include <set>
#include <system_error>
#include <vector>

namespace xattn::workloads
{
namespace
{
namespace fs = std::filesystem;
using core::Check;
using core::FieldKind;
using core::kRequired;

const core::Schema kFile{
    {.key = "file", .kind = FieldKind::kString, .def = kRequired, .meaning = "file name in the set's folder"},
    {.key = "source", .kind = FieldKind::kString, .def = kRequired, .meaning = "path in the origin repository"},
    {.key = "blob", .kind = FieldKind::kString, .def = kRequired, .meaning = "git blob id of the original there"},
    {.key = "format",
     .kind = FieldKind::kChoice,
     .def = kRequired,
     .meaning = "trace format",
     .choices = format_names()},
    {.key = "bytes",
     .kind = FieldKind::kInteger,
     .def = kRequired,
     .meaning = "decompressed size, bytes (checked)",
     .check = Check::kPositive},
    {.key = "records",
     .kind = FieldKind::kInteger,
     .def = kRequired,
     .meaning = "requests its importer reads (checked)",
     .check = Check::kPositive},
};

const core::Schema kOrigin{
    {.key = "name", .kind = FieldKind::kString, .def = kRequired, .meaning = "the set's name: its folder's name"},
    {.key = "description", .kind = FieldKind::kString, .def = kRequired, .meaning = "what the data is, one line"},
    {.key = "origin", .kind = FieldKind::kString, .def = kRequired, .meaning = "URL of the origin repository"},
    {.key = "commit", .kind = FieldKind::kString, .def = kRequired, .meaning = "origin commit the files were taken at"},
    {.key = "licence", .kind = FieldKind::kString, .def = kRequired, .meaning = "SPDX licence id"},
    {.key = "licence_file", .kind = FieldKind::kString, .def = "LICENSE", .meaning = "the licence text, in the folder"},
    {.key = "changes", .kind = FieldKind::kString, .def = kRequired, .meaning = "what was changed from the origin"},
    {.key = "files", .kind = FieldKind::kList, .def = kRequired, .meaning = "the set's files", .sub = &kFile},
};
} // namespace

const core::Schema& data_set_schema()
{
  return kOrigin;
}

DataSet load_data_set(const fs::path& dir)
{
  const fs::path origin_file = dir / "ORIGIN.yaml";
  core::Document doc = core::load_yaml(origin_file);
  core::Diagnostics diags;
  core::Section top(doc.file, doc.root, "", kOrigin, diags);
  DataSet set;
  set.dir = dir;
  set.name = top.string("name");
  set.description = top.string("description");
  set.origin = top.string("origin");
  set.commit = top.string("commit");
  set.licence = top.string("licence");
  set.licence_file = top.string("licence_file");
  set.changes = top.string("changes");
  std::error_code ec;
  if (top.has("name") && set.name != dir.filename().string())
    top.error("name", "the set '" + set.name + "' sits in a folder named '" + dir.filename().string() + "'");
  if (!set.licence_file.empty() && !fs::is_regular_file(dir / set.licence_file, ec))
    top.error("licence_file", "no licence file '" + (dir / set.licence_file).string() + "'");
  for (core::Section& f : top.sections("files")) {
    DataFile file;
    file.file = f.string("file");
    file.source = f.string("source");
    file.blob = f.string("blob");
    file.format = parse_format(f.choice("format")).value_or(TraceFormat());
    file.bytes = static_cast<std::uint64_t>(f.integer("bytes"));
    file.records = static_cast<std::uint64_t>(f.integer("records"));
    if (!file.file.empty() && !fs::is_regular_file(dir / file.file, ec))
      f.error("file", "no such file '" + (dir / file.file).string() + "'");
    set.files.push_back(std::move(file));
  }
  diags.throw_if_any();
  return set;
}

std::vector<DataSet> find_data_sets()
{
  std::vector<DataSet> sets;
  std::set<std::string> seen;
  std::error_code ec;
  for (const fs::path& root : core::trace_data_dirs()) {
    if (!fs::is_directory(root, ec)) continue;
    std::set<fs::path> dirs; // sorted: the listing does not depend on the file system's order
    for (const auto& entry : fs::directory_iterator(root, ec))
      if (entry.is_directory(ec) && fs::is_regular_file(entry.path() / "ORIGIN.yaml", ec)) dirs.insert(entry.path());
    for (const fs::path& d : dirs)
      if (seen.insert(d.filename().string()).second) sets.push_back(load_data_set(d));
  }
  return sets;
}

Measured measure(const DataSet& set, const DataFile& file)
{
  const std::string path = (set.dir / file.file).string();
  Measured m;
  m.compressed_bytes = fs::file_size(path);
  {
    CompressedFile in(path);
    std::vector<char> buf(1 << 16);
    while (std::size_t n = in.read(buf.data(), buf.size()))
      m.bytes += n;
  }
  auto src = open_trace(path, file.format);
  Request r;
  while (src->next(r))
    ++m.records;
  return m;
}

std::vector<std::string> mismatches(const DataSet& set, const DataFile& file, const Measured& got)
{
  std::vector<std::string> out;
  const std::string where = (set.dir / file.file).string();
  if (got.bytes != file.bytes)
    out.push_back(where + ": " + std::to_string(got.bytes) + " bytes decompressed, ORIGIN.yaml says " +
                  std::to_string(file.bytes));
  if (got.records != file.records)
    out.push_back(where + ": " + std::to_string(got.records) + " records, ORIGIN.yaml says " +
                  std::to_string(file.records));
  return out;
}

} // namespace xattn::workloads
