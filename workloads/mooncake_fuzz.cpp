// libFuzzer target: the Mooncake JSONL importer (MooncakeReader) on arbitrary bytes (workloads/importer_fuzz.hpp).
#include "workloads/importer_fuzz.hpp"
#include "workloads/mooncake.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  using namespace xattn::workloads;
  return fuzz_importer(data, size, [](const std::string& path, ImportOptions opt) -> std::unique_ptr<RequestSource> {
    return std::make_unique<MooncakeReader>(path, opt);
  });
}
