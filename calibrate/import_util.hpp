// Helpers shared by the importers and validate's reader of measured rows (validate/measured.cpp).
#pragma once

#include "calibrate/measurements.hpp"
#include "sim/core/error.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace xattn::calibrate::detail
{

/// Splits one CSV line at commas (no quoting: none of the supported formats quotes).
std::vector<std::string> split_csv(std::string_view line);
/// The 1-based column where split_csv's cell `index` of `line` starts, past its leading blanks.
int cell_column(std::string_view line, int index);
std::string trim(std::string_view s);
/// The text's lines, without their line ends.
std::vector<std::string> lines_of(const std::string& text);
/// A strictly parsed finite number, or throws InputError at (file, line).
double number(std::string_view cell, const std::string& file, int line, const std::string& key);
/// The fabric class named by `s`, or throws InputError.
core::FabricClass fabric(std::string_view s, const std::string& file, int line, const std::string& key);
/// opt.fabric, or an InputError saying the format needs --fabric.
core::FabricClass required_fabric(const std::optional<core::FabricClass>& f, const std::string& file,
                                  std::string_view format);

} // namespace xattn::calibrate::detail
