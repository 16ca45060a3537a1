// libFuzzer target: the scenario loader (sim::engine::parse_scenario) on arbitrary YAML: the schema,
// preset lookups (models, profiles, topologies from the source tree), inline topologies, GPU
// selectors, the generator section. A finding is a crash, a sanitizer report, or an exception
// other than core::InputError.
#include "sim/engine/scenario.hpp"

#include <cstdint>
#include <string>

using namespace xattn;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)sim::engine::parse_scenario(text, "fuzz.yaml");
  } catch (const core::InputError&) {
  }
  return 0;
}
