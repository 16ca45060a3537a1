#include "workloads/azure.hpp"
#include "workloads/trace_format.hpp"

#include "workloads/request_id.hpp"

#include <charconv>
#include <optional>

namespace xattn::workloads
{
namespace
{
// Days since 1970-01-01 of a civil date (Howard Hinnant's days_from_civil).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d)
{
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

bool digits(std::string_view s, std::size_t pos, std::size_t n, int& out)
{
  if (pos + n > s.size()) return false;
  auto r = std::from_chars(s.data() + pos, s.data() + pos + n, out);
  return r.ec == std::errc() && r.ptr == s.data() + pos + n;
}

bool integer(std::string_view s, std::int64_t& out)
{
  while (!s.empty() && s.front() == ' ')
    s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ')
    s.remove_suffix(1);
  auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size() && out >= 0;
}
} // namespace

std::optional<DateTime> parse_datetime(std::string_view s)
{
  int y, mo, d, h, mi, sec;
  if (s.size() < 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' || s[16] != ':')
    return std::nullopt;
  if (!digits(s, 0, 4, y) || !digits(s, 5, 2, mo) || !digits(s, 8, 2, d) || !digits(s, 11, 2, h) ||
      !digits(s, 14, 2, mi) || !digits(s, 17, 2, sec))
    return std::nullopt;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return std::nullopt;
  double frac = 0.0;
  if (s.size() > 19) {
    if (s[19] != '.' || s.size() == 20) return std::nullopt;
    double scale = 0.1;
    for (std::size_t i = 20; i < s.size(); ++i, scale *= 0.1) {
      if (s[i] < '0' || s[i] > '9') return std::nullopt;
      frac += (s[i] - '0') * scale;
    }
  }
  return DateTime{days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec, frac};
}

AzureReader::AzureReader(const std::string& path, ImportOptions options) : LineRequestSource(path, options)
{
  std::string_view header;
  if (!lines_.next(header))
    core::fail(path, 0, 0, "", "empty file: expected the header TIMESTAMP,ContextTokens,GeneratedTokens");
  if (header.substr(0, 3) == "\xEF\xBB\xBF") // a UTF-8 byte order mark
    header.remove_prefix(3);
  if (header != "TIMESTAMP,ContextTokens,GeneratedTokens")
    core::fail(path, 1, 1, "",
               "expected the header TIMESTAMP,ContextTokens,GeneratedTokens, got '" +
                   std::string(header.substr(0, 80)) + "'");
}

bool AzureReader::read_line(std::string_view line, Request& out)
{
  const int n = static_cast<int>(lines_.line_number());
  auto bad = [&](int column, std::string key, std::string message) {
    skips_.bad({lines_.path(), n, column, std::move(key), std::move(message)});
    return false;
  };
  std::size_t c1 = line.find(',');
  std::size_t c2 = c1 == std::string_view::npos ? c1 : line.find(',', c1 + 1);
  if (c2 == std::string_view::npos || line.find(',', c2 + 1) != std::string_view::npos)
    return bad(1, "", "expected 3 comma-separated fields, got '" + std::string(line.substr(0, 80)) + "'");
  std::string_view ts = line.substr(0, c1);
  std::optional<DateTime> dt = parse_datetime(ts);
  if (!dt) return bad(1, "TIMESTAMP", "expected YYYY-MM-DD HH:MM:SS[.fraction], got '" + std::string(ts) + "'");
  std::int64_t in = 0, gen = 0;
  if (!integer(line.substr(c1 + 1, c2 - c1 - 1), in))
    return bad(static_cast<int>(c1 + 2), "ContextTokens", "expected a non-negative integer");
  if (!integer(line.substr(c2 + 1), gen))
    return bad(static_cast<int>(c2 + 2), "GeneratedTokens", "expected a non-negative integer");
  if (!have_origin_) {
    have_origin_ = true;
    origin_whole_s_ = dt->whole_s;
    origin_frac_s_ = dt->frac_s;
  }
  const double t = static_cast<double>(dt->whole_s - origin_whole_s_) + (dt->frac_s - origin_frac_s_);
  if (t < last_s_) return bad(1, "TIMESTAMP", "timestamps must not decrease");
  last_s_ = t;
  if (!ids::session_fits(next_id_))
    return bad(1, "",
               "more than 2^32 requests, each its own session: past the request-id layout (workloads/request_id.hpp)");
  out.id = next_id_++;
  out.arrival = core::Seconds(t);
  out.session = out.id;
  out.agent = ids::agent_id(out.session, 0);
  out.parent_agent = kNoAgent;
  out.block_tokens = 0;
  out.blocks.clear();
  out.input_tokens = in;
  out.output_tokens = gen;
  out.think = core::Seconds(0.0);
  return true;
}

// The registry's entry (formats.def).
TraceFormatInfo format_azure()
{
  return {.name = "azure",
          .extension = ".csv",
          .first_line_mark = "",
          .sessions = false,
          .open = [](const std::string& path, const OpenOptions& o) -> std::unique_ptr<RequestSource> {
            return std::make_unique<AzureReader>(path, o.import);
          }};
}

} // namespace xattn::workloads
