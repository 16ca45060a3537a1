// Importers: read the outputs of tools users already run into Measurements.
//
//   probe       xattn's own CUDA harness (calibrate/probe, schema in calibrate/README.md)
//   nccl-tests  NVIDIA nccl-tests JSON (`-J FILE`, file version 2): one series per test program
//   nvbandwidth NVIDIA nvbandwidth JSON (`-j`): one series per testcase, sizes from `bufferSize`
//   nvshmem     NVSHMEM perftest stdout (table or NVSHMEM_MACHINE_READABLE_OUTPUT=1 lines)
//   csv         plain `fabric,bytes,latency` (+ optional transport, dispatch columns); units in cells
//   vidur       vidur's network profiling CSV (time_stats.send_recv.* in ms, devices_per_node)
//
// Bad input throws core::InputError with file and line.
#pragma once

#include "calibrate/measurements.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace xattn::calibrate
{

enum class Format { kAuto, kProbe, kNcclTests, kNvbandwidth, kNvshmem, kCsv, kVidur };

inline constexpr std::string_view kFormatChoices = "auto|probe|nccl-tests|nvbandwidth|nvshmem|csv|vidur";
std::string_view to_string(Format f);
std::optional<Format> parse_format(std::string_view s);
/// Every format's name, auto first: the choices of a --format flag.
std::vector<std::string> format_names();

struct ImportOptions {
  Format format = Format::kAuto;
  /// Fabric class for formats that do not say (nccl-tests, nvbandwidth, nvshmem); required there.
  std::optional<core::FabricClass> fabric;
  /// vidur: the class of a one-rank-per-node pair (devices_per_node = 1).
  core::FabricClass inter_node_fabric = core::FabricClass::kIbSameLeaf;
};

/// Detects the format from the content (when opt.format is kAuto) and imports.
Measurements import_file(const std::filesystem::path& path, const ImportOptions& opt = {});
Measurements import_text(const std::string& text, const std::string& name, const ImportOptions& opt = {});

/// The format `text` looks like, or nullopt.
std::optional<Format> detect_format(const std::string& text);

// The importers, one per format (text = the whole file; name = the file in diagnostics).
Measurements import_probe_json(const std::string& text, const std::string& name);
Measurements import_nccl_tests(const std::string& text, const std::string& name, const ImportOptions& opt);
Measurements import_nvbandwidth(const std::string& text, const std::string& name, const ImportOptions& opt);
Measurements import_nvshmem(const std::string& text, const std::string& name, const ImportOptions& opt);
Measurements import_csv(const std::string& text, const std::string& name);
Measurements import_vidur(const std::string& text, const std::string& name, const ImportOptions& opt);

} // namespace xattn::calibrate
