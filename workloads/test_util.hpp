// Helpers shared by the workloads tests: fixture paths and throwaway files.
#pragma once

#include "workloads/request.hpp"
#include "workloads/trace_format.hpp"

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

namespace xattn::workloads::testing
{

/// The registered format `name`; the test fails where the registry lacks it.
inline TraceFormat format_named(std::string_view name)
{
  const auto f = parse_format(name);
  if (!f) throw std::logic_error("no trace format '" + std::string(name) + "' in formats.def");
  return *f;
}

inline std::string fixture(const std::string& name)
{
  return std::string(XATTN_SOURCE_DIR) + "/workloads/testdata/" + name;
}

/// A bundled trace (workloads/data/<set>/<file>), which every clone has.
inline std::string bundled_trace(const std::string& relative)
{
  return std::string(XATTN_SOURCE_DIR) + "/workloads/data/" + relative;
}

/// Writes `text` to a fresh file in a per-process temporary folder and returns its path.
inline std::string temp_file(const std::string& name, const std::string& text)
{
  auto dir = std::filesystem::temp_directory_path() / ("xattn_workloads_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto path = dir / name;
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

/// Every request of a source, in order.
inline std::vector<Request> drain(RequestSource& src)
{
  std::vector<Request> out;
  Request r;
  while (src.next(r))
    out.push_back(r);
  return out;
}

} // namespace xattn::workloads::testing

namespace xattn::workloads::testing
{
/// A whole file's text.
inline std::string drain_text(const std::string& path)
{
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}
} // namespace xattn::workloads::testing
