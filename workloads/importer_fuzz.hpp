// The body every importer's libFuzzer target shares: the input as a file, read to the end by the
// importer (with and without --skip-bad: the first byte chooses, where the importer has it), and
// every request checked for what importers promise downstream. A finding is a crash, a sanitizer
// report, an exception other than core::InputError, or a negative or non-finite arrival.
#pragma once

#include "sim/core/error.hpp"
#include "sim/core/fuzz_file.hpp"
#include "workloads/request.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>

namespace xattn::workloads
{

/// `open(path, options)` makes the importer under test.
inline int fuzz_importer(const std::uint8_t* data, std::size_t size,
                         const std::function<std::unique_ptr<RequestSource>(const std::string&, ImportOptions)>& open)
{
  const bool skip_bad = size > 0 && (data[0] & 1);
  core::FuzzFile file(data, size);
  try {
    std::unique_ptr<RequestSource> src = open(file.path(), ImportOptions{skip_bad});
    Request r;
    while (src->next(r))
      if (!std::isfinite(r.arrival.value()) || r.arrival.value() < 0) std::abort();
  } catch (const core::InputError&) {
  }
  return 0;
}

} // namespace xattn::workloads
