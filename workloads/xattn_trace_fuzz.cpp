// libFuzzer target: the own trace importer (XattnTraceReader, JSONL version 1; always strict) on
// arbitrary bytes (workloads/importer_fuzz.hpp).
#include "workloads/importer_fuzz.hpp"
#include "workloads/xattn_trace.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  using namespace xattn::workloads;
  return fuzz_importer(data, size, [](const std::string& path, ImportOptions) -> std::unique_ptr<RequestSource> {
    return std::make_unique<XattnTraceReader>(path);
  });
}
