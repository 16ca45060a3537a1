// libFuzzer target: the Azure CSV importer (AzureReader) on arbitrary bytes, read to the end, with
// and without --skip-bad (the first byte chooses), and every request checked for what the
// importers promise downstream. A finding is a crash, a sanitizer report, an exception other than
// core::InputError, or a request with a negative or non-finite arrival.
#include "sim/core/error.hpp"
#include "sim/core/fuzz_file.hpp"
#include "workloads/azure.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>

using namespace xattn;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  const bool skip_bad = size > 0 && (data[0] & 1);
  (void)skip_bad;
  core::FuzzFile file(data, size);
  try {
    workloads::AzureReader src(file.path(), workloads::ImportOptions{skip_bad});
    workloads::Request r;
    while (src.next(r))
      if (!std::isfinite(r.arrival.value()) || r.arrival.value() < 0) std::abort();
  } catch (const core::InputError&) {
  }
  return 0;
}
