// Importer of the Azure LLM inference traces (Azure/AzurePublicDataset): CSV with the header
// TIMESTAMP,ContextTokens,GeneratedTokens and timestamps "YYYY-MM-DD HH:MM:SS[.fraction]".
#pragma once

#include "workloads/line_reader.hpp"
#include "workloads/request.hpp"

#include <optional>

namespace xattn::workloads
{

/// Streams an Azure trace. Arrivals count from the first row; the format carries no block ids
/// (block_tokens 0, blocks empty: such a trace needs a synthetic corpus) and no sessions (each
/// request its own session and agent). Errors name the file, line and column.
class AzureReader : public LineRequestSource
{
public:
  explicit AzureReader(const std::string& path, ImportOptions options = {});

private:
  bool read_line(std::string_view line, Request& out) override;
  bool have_origin_ = false;
  std::int64_t origin_whole_s_ = 0;
  double origin_frac_s_ = 0.0, last_s_ = 0.0;
};

/// A point in time split so that sub-microsecond fractions survive: whole seconds since
/// 1970-01-01 (UTC, proleptic Gregorian) plus the fraction, s.
struct DateTime {
  std::int64_t whole_s = 0;
  double frac_s = 0.0;
};
/// Reads "YYYY-MM-DD HH:MM:SS[.fraction]" (or with 'T'); nullopt when malformed.
std::optional<DateTime> parse_datetime(std::string_view text);

} // namespace xattn::workloads
