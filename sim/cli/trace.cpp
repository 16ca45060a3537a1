// `xattn trace stats|convert|generate`: thin commands over the workloads library.
#include "sim/cli/command.hpp"
#include "sim/core/registry.hpp"
#include "sim/core/resources.hpp"
#include "workloads/generator.hpp"
#include "workloads/stats.hpp"
#include "workloads/trace_format.hpp"
#include "workloads/xattn_trace.hpp"

#include <iostream>
#include <memory>
#include <string>

namespace xattn::cli
{
namespace
{
using namespace xattn::workloads;

// A trace named on the command line: as given, else in the data folders, so that
// `mooncake/conversation_trace.jsonl.zst` finds the bundled trace (core::find_input).
std::string locate(const std::string& file)
{
  auto found = core::find_input(file);
  return found ? found->string() : file;
}

TraceFormat format_or_guess(const std::string& name, const std::string& path)
{
  if (name.empty()) return guess_format(path);
  if (auto f = parse_format(name)) return *f;
  core::fail("command line", 0, 0, "--format",
             "unknown format '" + name + "' (expected " + std::string(format_names()) + ")");
}

// The formats that hold one session per file, "a|b", for --session's messages.
std::string sessions_formats()
{
  return core::joined_names(trace_formats(), "|", [](const TraceFormatInfo& f) { return f.sessions; });
}

void report_skips(const RequestSource& src)
{
  if (src.skipped() == 0) return;
  std::cerr << "skipped " << src.skipped() << " unreadable entr" << (src.skipped() == 1 ? "y" : "ies") << ":\n";
  for (const std::string& m : src.skip_messages())
    std::cerr << "  " << m << "\n";
  if (src.skipped() > src.skip_messages().size())
    std::cerr << "  ... and " << src.skipped() - src.skip_messages().size() << " more\n";
}

struct Options {
  std::string file, format, out;
  bool json = false, skip_bad = false, describe = false;
  std::uint64_t requests = 0, session = 0;
};
} // namespace

void add_trace(CLI::App& app, Action& action)
{
  auto* trace = app.add_subcommand("trace", "Inspect, import and generate request traces");
  trace->require_subcommand(1);
  auto o = std::make_shared<Options>();

  auto* stats = trace->add_subcommand("stats", "Statistics of a trace: rate, lengths, block reuse, sub-agents");
  stats->add_option("file", o->file, "trace file, plain or .gz/.xz/.zst (or a bundled one: mooncake/...)")->required();
  stats->add_option("--format", o->format, std::string(format_names()) + " (default: from the file name)");
  stats->add_flag("--json", o->json, "print one JSON object");
  stats->add_flag("--skip-bad", o->skip_bad, "skip unreadable entries (counted and reported)");
  on_run(stats, action, [o] {
    const std::string file = locate(o->file);
    auto src = open_trace(file, format_or_guess(o->format, file), {.import = ImportOptions{o->skip_bad}});
    TraceStats s;
    Request r;
    while (src->next(r))
      s.add(r);
    report_skips(*src);
    std::cout << (o->json ? to_json(s.report()) + "\n" : to_text(s.report()));
    return 0;
  });

  auto* convert = trace->add_subcommand("convert", "Import a foreign trace into xattn's JSONL format");
  convert->add_option("file", o->file, "input trace")->required();
  convert->add_option("--from", o->format, std::string(format_names()))->required();
  convert->add_option("--out", o->out, "output .jsonl (written atomically)")->required();
  convert->add_flag("--skip-bad", o->skip_bad, "skip unreadable entries (counted and reported)");
  convert->add_option("--session", o->session, "session number namespacing a coding-agent session's ids");
  on_run(convert, action, [o] {
    const std::string file = locate(o->file);
    const TraceFormat from = format_or_guess(o->format, file);
    if (o->session != 0 && !from.info().sessions)
      core::fail("command line", 0, 0, "--session",
                 "a " + std::string(from.name()) + " trace holds no session per file: --session applies to " +
                     sessions_formats());
    auto src = open_trace(file, from, {.import = ImportOptions{o->skip_bad}, .session = o->session});
    XattnTraceWriter out(o->out, std::string(from.name()) + ":" + o->file);
    Request r;
    while (src->next(r))
      out.write(r);
    out.commit();
    report_skips(*src);
    std::cerr << "wrote " << out.written() << " requests to " << o->out << "\n";
    return 0;
  });

  auto* generate = trace->add_subcommand("generate", "Generate a synthetic agentic trace from a YAML config");
  generate->add_option("config", o->file, "generator config (YAML)");
  generate->add_option("--out", o->out, "output .jsonl (written atomically)");
  generate->add_option("--requests", o->requests, "override the config's request count");
  generate->add_flag("--describe", o->describe, "print the config schema and exit");
  on_run(generate, action, [o] {
    if (o->describe) {
      std::cout << describe_format("generator");
      return 0;
    }
    if (o->file.empty() || o->out.empty())
      core::fail("command line", 0, 0, "", "trace generate needs CONFIG.yaml and --out OUT.jsonl");
    GeneratorConfig c = load_generator(o->file);
    if (o->requests > 0) c.requests = o->requests;
    AgenticGenerator gen(c);
    XattnTraceWriter out(o->out, "generator:" + o->file + " seed " + std::to_string(c.seed));
    Request r;
    while (gen.next(r))
      out.write(r);
    out.commit();
    std::cerr << "wrote " << out.written() << " requests to " << o->out << "\n";
    return 0;
  });
}

} // namespace xattn::cli
