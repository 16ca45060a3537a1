// The trace data sets that ship with xattn (workloads/data/<set>/), each described by its
// ORIGIN.yaml: where it comes from (repository, commit, path, git blob), its licence, what was
// changed, and per file the format, decompressed size and record count. `xattn data list`.
#pragma once

#include "sim/core/schema.hpp"
#include "workloads/trace_format.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace xattn::workloads
{

/// One file of a data set, as its ORIGIN.yaml declares it.
struct DataFile {
  std::string file;   ///< name inside the set's folder (compressed or plain)
  std::string source; ///< path in the origin repository
  std::string blob;   ///< git blob id of the original there (anyone can check the copy with it)
  TraceFormat format;
  std::uint64_t bytes = 0;   ///< decompressed size, bytes
  std::uint64_t records = 0; ///< requests its importer reads
};

struct DataSet {
  std::filesystem::path dir; ///< the set's folder
  std::string name, description, origin, commit, licence, licence_file, changes;
  std::vector<DataFile> files;
};

/// The schema of ORIGIN.yaml (also `xattn data list --describe`).
const core::Schema& data_set_schema();

/// Reads `dir`/ORIGIN.yaml. Throws core::InputError when it is missing or malformed, when `name`
/// is not the folder's name, or when a listed file or the licence file is absent.
DataSet load_data_set(const std::filesystem::path& dir);

/// Every data set (a sub-folder holding ORIGIN.yaml) over core::trace_data_dirs(), in lookup
/// order; a set whose name an earlier folder already gave is left out (the lookup finds the first).
std::vector<DataSet> find_data_sets();

/// What reading a data file actually gives.
struct Measured {
  std::uint64_t compressed_bytes = 0; ///< size on disk
  std::uint64_t bytes = 0;            ///< decompressed size
  std::uint64_t records = 0;          ///< requests read by the file's importer
};

/// Reads `file` of `set` through its importer (strict: a bad entry throws core::InputError).
Measured measure(const DataSet& set, const DataFile& file);

/// A line per difference between what `file` declares and `got` (empty: they agree).
std::vector<std::string> mismatches(const DataSet& set, const DataFile& file, const Measured& got);

} // namespace xattn::workloads
