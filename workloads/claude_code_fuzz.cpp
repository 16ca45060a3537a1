// libFuzzer target: the coding-agent session JSON importer (ClaudeCodeReader) on arbitrary bytes
// (workloads/importer_fuzz.hpp).
#include "workloads/claude_code.hpp"
#include "workloads/importer_fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  using namespace xattn::workloads;
  return fuzz_importer(data, size, [](const std::string& path, ImportOptions opt) -> std::unique_ptr<RequestSource> {
    return std::make_unique<ClaudeCodeReader>(path, opt);
  });
}
