// libFuzzer target: YAML parsing (core::parse_yaml) and the schema reader (core::Section) over a
// schema that holds every field kind, nested, so that every accessor meets every node shape.
// A finding is a crash, a sanitizer report, or an exception other than core::InputError.
#include "sim/core/yaml.hpp"

#include <cstdint>
#include <string>

using namespace xattn::core;

namespace
{
const Schema kLeaf{
    {.key = "size", .dim = Dimension::kBytes, .def = "1MiB", .meaning = "a size", .check = Check::kPositive},
    {.key = "count", .kind = FieldKind::kInteger, .def = "1", .meaning = "a count"},
};
const Schema kTop{
    {.key = "name", .kind = FieldKind::kString, .meaning = "a name"},
    {.key = "time", .dim = Dimension::kSeconds, .def = "16us", .meaning = "a time"},
    {.key = "rate", .dim = Dimension::kBytesPerSec, .def = kNoDefault, .meaning = "a rate"},
    {.key = "flops", .dim = Dimension::kFlopsPerSec, .def = "1Tflops", .meaning = "compute"},
    {.key = "ratio", .def = "1", .meaning = "a number", .check = Check::kPositive},
    {.key = "n", .kind = FieldKind::kInteger, .def = "0", .meaning = "an integer"},
    {.key = "flag", .kind = FieldKind::kBool, .def = "false", .meaning = "a bool"},
    {.key = "mode", .kind = FieldKind::kChoice, .def = "a", .meaning = "a choice", .choices = "a|b|c"},
    {.key = "sub", .kind = FieldKind::kSection, .def = "", .meaning = "a section", .sub = &kLeaf},
    {.key = "items", .kind = FieldKind::kList, .def = kNoDefault, .meaning = "a list of sections", .sub = &kLeaf},
    {.key = "named", .kind = FieldKind::kMap, .def = kNoDefault, .meaning = "a map", .sub = &kLeaf},
    {.key = "times", .kind = FieldKind::kList, .def = kNoDefault, .meaning = "a list of times"},
    {.key = "tags", .kind = FieldKind::kList, .def = kNoDefault, .meaning = "a list of strings"},
    {.key = "either", .kind = FieldKind::kNameOrSection, .def = "x", .meaning = "a name or a section", .sub = &kLeaf},
};

void read_leaf(Section s)
{
  (void)s.bytes("size");
  (void)s.integer("count");
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    Document doc = parse_yaml(text, "fuzz.yaml");
    if (size > 0 && data[0] == '#') // sometimes also through an override
      apply_override(doc, "sub.count=3");
    Diagnostics diags;
    Section top(doc.file, doc.root, "", kTop, diags);
    (void)top.string("name");
    (void)top.seconds("time");
    (void)top.rate("rate");
    (void)top.flops("flops");
    (void)top.number("ratio");
    (void)top.integer("n");
    (void)top.boolean("flag");
    (void)top.choice("mode");
    read_leaf(top.section("sub"));
    for (Section& s : top.sections("items"))
      read_leaf(s);
    for (auto& [name, s] : top.named_sections("named"))
      read_leaf(s);
    (void)top.numbers("times", Dimension::kSeconds);
    (void)top.strings("tags");
    if (top.is_inline("either"))
      read_leaf(top.section("either"));
    else
      (void)top.string("either");
    for (const Diagnostic& d : diags.list())
      (void)d.str();
    diags.throw_if_any();
  } catch (const InputError&) {
  }
  return 0;
}
