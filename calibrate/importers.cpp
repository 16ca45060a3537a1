#include "calibrate/importers.hpp"

#include "calibrate/import_util.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

namespace xattn::calibrate
{

namespace
{
constexpr std::array<std::pair<Measured, std::string_view>, 8> kMeasuredNames{{
    {Measured::kTransfer, "transfer"},
    {Measured::kKernel, "kernel"},
    {Measured::kMerge, "merge"},
    {Measured::kSplice, "splice"},
    {Measured::kLaunch, "launch"},
    {Measured::kCopyElbow, "copy-elbow"},
    {Measured::kComputeElbow, "compute-elbow"},
    {Measured::kOther, "other"},
}};
constexpr std::array<std::pair<Format, std::string_view>, 7> kFormatNames{{
    {Format::kAuto, "auto"},
    {Format::kProbe, "probe"},
    {Format::kNcclTests, "nccl-tests"},
    {Format::kNvbandwidth, "nvbandwidth"},
    {Format::kNvshmem, "nvshmem"},
    {Format::kCsv, "csv"},
    {Format::kVidur, "vidur"},
}};
} // namespace

std::string_view to_string(Measured m)
{
  for (auto& [k, v] : kMeasuredNames)
    if (k == m) return v;
  return "other";
}

std::optional<Measured> parse_measured(std::string_view s)
{
  for (auto& [k, v] : kMeasuredNames)
    if (v == s) return k;
  return std::nullopt;
}

std::string_view to_string(Format f)
{
  for (auto& [k, v] : kFormatNames)
    if (k == f) return v;
  return "auto";
}

std::vector<std::string> format_names()
{
  std::vector<std::string> out;
  for (const auto& entry : kFormatNames)
    out.emplace_back(entry.second);
  return out;
}

std::optional<Format> parse_format(std::string_view s)
{
  for (auto& [k, v] : kFormatNames)
    if (v == s) return k;
  return std::nullopt;
}

std::string transfer_series_name(core::FabricClass f, std::optional<core::Transport> t, bool single_block)
{
  std::string name(core::to_string(f));
  if (t) name += "/" + std::string(core::to_string(*t));
  return single_block ? name + "/single-block" : name;
}

std::optional<Format> detect_format(const std::string& text)
{
  auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return std::nullopt;
  if (text[first] == '{' || text[first] == '[') {
    if (text.find("\"xattn-probe/") != std::string::npos) return Format::kProbe;
    if (text.find("\"nvbandwidth\"") != std::string::npos) return Format::kNvbandwidth;
    if (text.find("\"results\"") != std::string::npos && text.find("\"nccl_version\"") != std::string::npos)
      return Format::kNcclTests;
    return std::nullopt;
  }
  std::string head = text.substr(first, text.find('\n', first) - first);
  if (head.find("time_stats.send_recv") != std::string::npos) return Format::kVidur;
  if (head.rfind("fabric,", 0) == 0) return Format::kCsv;
  if (text.find("&&&& PERF") != std::string::npos || text.find("size(B)") != std::string::npos) return Format::kNvshmem;
  return std::nullopt;
}

Measurements import_text(const std::string& text, const std::string& name, const ImportOptions& opt)
{
  Format f = opt.format;
  if (f == Format::kAuto) {
    auto d = detect_format(text);
    if (!d)
      core::fail(name, 0, 0, "",
                 "cannot tell the measurement format from the content; give --format (one of " +
                     std::string(kFormatChoices) + ")");
    f = *d;
  }
  switch (f) {
  case Format::kProbe:
    return import_probe_json(text, name);
  case Format::kNcclTests:
    return import_nccl_tests(text, name, opt);
  case Format::kNvbandwidth:
    return import_nvbandwidth(text, name, opt);
  case Format::kNvshmem:
    return import_nvshmem(text, name, opt);
  case Format::kCsv:
    return import_csv(text, name);
  case Format::kVidur:
    return import_vidur(text, name, opt);
  case Format::kAuto:
    break;
  }
  core::fail(name, 0, 0, "", "no importer for this format");
}

Measurements import_file(const std::filesystem::path& path, const ImportOptions& opt)
{
  std::ifstream in(path, std::ios::binary);
  if (!in || std::filesystem::is_directory(path)) core::fail(path.string(), 0, 0, "", "cannot open measurement file");
  std::stringstream ss;
  ss << in.rdbuf();
  return import_text(ss.str(), path.string(), opt);
}

namespace detail
{

std::string trim(std::string_view s)
{
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return "";
  auto e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

std::vector<std::string> split_csv(std::string_view line)
{
  std::vector<std::string> out;
  while (true) {
    auto comma = line.find(',');
    out.push_back(trim(line.substr(0, comma)));
    if (comma == std::string_view::npos) return out;
    line.remove_prefix(comma + 1);
  }
}

int cell_column(std::string_view line, int index)
{
  std::size_t at = 0;
  for (int k = 0; k < index && at != std::string_view::npos; ++k)
    if ((at = line.find(',', at)) != std::string_view::npos) ++at;
  if (at == std::string_view::npos) return 0;
  while (at < line.size() && (line[at] == ' ' || line[at] == '\t'))
    ++at;
  return static_cast<int>(at) + 1;
}

std::vector<std::string> lines_of(const std::string& text)
{
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string l; std::getline(ss, l);) {
    if (!l.empty() && l.back() == '\r') l.pop_back();
    out.push_back(l);
  }
  return out;
}

double number(std::string_view cell, const std::string& file, int line, const std::string& key)
{
  std::string s = trim(cell);
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v))
    core::fail(file, line, 0, key, "expected a number, got '" + s + "'");
  return v;
}

core::FabricClass fabric(std::string_view s, const std::string& file, int line, const std::string& key)
{
  auto f = core::parse_fabric(trim(s));
  if (!f)
    core::fail(file, line, 0, key,
               "unknown fabric class '" + trim(s) + "' (expected one of " + core::fabric_choices() + ")");
  return *f;
}

core::FabricClass required_fabric(const std::optional<core::FabricClass>& f, const std::string& file,
                                  std::string_view format)
{
  if (!f)
    core::fail(file, 0, 0, "--fabric",
               std::string(format) + " output does not say which fabric it crossed: give --fabric (one of " +
                   core::fabric_choices() + ")");
  return *f;
}

} // namespace detail
} // namespace xattn::calibrate
