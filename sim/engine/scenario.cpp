#include "sim/engine/scenario.hpp"
#include "sim/core/yaml.hpp"
#include "sim/engine/layout.hpp"
#include "sim/engine/prefill_pool.hpp"
#include "sim/engine/run_size.hpp"
#include "sim/engine/scenario_policies.hpp"

#include "sim/model/pricing.hpp"
#include "sim/policy/policy.hpp"

#include "sim/core/check.hpp"
#include "sim/core/memory.hpp"
#include "sim/core/resources.hpp"
#include "sim/core/suggest.hpp"
#include "topologies/spec.hpp"
#include "workloads/request_id.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace xattn::sim::engine
{
namespace
{
namespace fs = std::filesystem;

std::optional<int> parse_int(std::string_view s)
{
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

// "A-B" or "A" → [A, B]
std::optional<std::pair<int, int>> parse_range(std::string_view s)
{
  auto dash = s.find('-');
  auto a = parse_int(s.substr(0, dash));
  auto b = dash == std::string_view::npos ? a : parse_int(s.substr(dash + 1));
  if (!a || !b || *b < *a) return std::nullopt;
  return std::make_pair(*a, *b);
}

// Never throws: a name the file system refuses (too long, say) is simply not found (found by
// sim/engine/scenario_fuzz; kept as validate/bad_input/scenario/name-too-long.yaml).
std::string resolve_relative(const std::string& path, const std::string& scenario_file)
{
  std::error_code ec;
  if (path.empty() || fs::path(path).is_absolute() || fs::exists(path, ec)) return path;
  fs::path beside = fs::path(scenario_file).parent_path() / path;
  return fs::exists(beside, ec) ? beside.string() : path;
}

} // namespace

std::vector<topo::GpuId> parse_gpus(const std::vector<std::string>& selectors, const topo::Topology& t,
                                    core::Section& section, std::string_view key)
{
  std::vector<topo::GpuId> out;
  const int gpn = static_cast<int>(t.spec().gpus_per_node);
  const int nodes = static_cast<int>(t.node_count());
  for (const std::string& sel : selectors) {
    std::string_view s = sel;
    auto bad = [&](const std::string& why) { section.error(key, "selector '" + sel + "': " + why); };
    if (s == "all") {
      for (topo::GpuId g = 0; g < t.gpu_count(); ++g)
        out.push_back(g);
      continue;
    }
    if (s.rfind("leaf", 0) == 0) {
      auto r = parse_range(s.substr(4));
      if (!r || r->second >= static_cast<int>(std::max<std::size_t>(1, t.leaf_count()))) {
        bad("expected leafA or leafA-B with existing leaves");
        continue;
      }
      for (int n = 0; n < nodes; ++n)
        if (t.leaf_of_node(n) >= r->first && t.leaf_of_node(n) <= r->second)
          for (int g = 0; g < gpn; ++g)
            out.push_back(static_cast<topo::GpuId>(n * gpn + g));
      continue;
    }
    if (s.rfind("node", 0) != 0) {
      bad("expected all, nodeN, nodeA-B, nodeN.gpuA-B or leafA-B");
      continue;
    }
    s.remove_prefix(4);
    auto dot = s.find('.');
    auto nr = parse_range(s.substr(0, dot));
    std::pair<int, int> gr{0, gpn - 1};
    if (dot != std::string_view::npos) {
      std::string_view g = s.substr(dot + 1);
      auto parsed = g.rfind("gpu", 0) == 0 ? parse_range(g.substr(3)) : std::nullopt;
      if (!parsed) {
        bad("expected nodeN.gpuA-B");
        continue;
      }
      gr = *parsed;
    }
    if (!nr || nr->second >= nodes || gr.second >= gpn) {
      bad("no such GPUs (the topology has " + std::to_string(nodes) + " nodes of " + std::to_string(gpn) + " GPUs)");
      continue;
    }
    for (int n = nr->first; n <= nr->second; ++n)
      for (int g = gr.first; g <= gr.second; ++g)
        out.push_back(static_cast<topo::GpuId>(n * gpn + g));
  }
  std::vector<topo::GpuId> sorted = out;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) section.error(key, "a GPU is listed twice");
  if (out.empty() && !selectors.empty()) section.error(key, "selects no GPU");
  return out;
}

namespace
{
// The file a scenario's topology name or path stands for: beside the scenario first, then a preset.
std::optional<std::filesystem::path> topology_file(const std::string& name_or_path, const std::string& scenario_file)
{
  return core::resolve_preset(resolve_relative(name_or_path, scenario_file), "topologies");
}

// `--set topology.KEY=VALUE` (or model.KEY) on a scenario that names a preset: the preset's YAML
// takes the name's place first, as if the scenario had it inline, and the override edits that.
// A name that resolves to no preset is left to be reported where it is read.
// Returns each inlined key's preset file, which names that section in messages.
std::map<std::string, std::string> inline_edited_presets(core::Document& doc, const std::vector<std::string>& overrides)
{
  std::map<std::string, std::string> inlined;
  for (const std::string key : {"topology", "model"}) {
    const std::string prefix = key + ".";
    const bool edited = std::any_of(overrides.begin(), overrides.end(),
                                    [&](const std::string& o) { return o.compare(0, prefix.size(), prefix) == 0; });
    if (!edited || !doc.root.IsMap() || !doc.root[key].IsScalar()) continue;
    const std::string preset = doc.root[key].as<std::string>();
    const auto path = key == "topology" ? topology_file(preset, doc.file) : model_file(preset);
    if (!path) continue;
    doc.root[key] = core::load_yaml(*path).root;
    inlined[key] = path->string();
  }
  return inlined;
}

// prefill.host_capacity: a tier of prefilled chunks in each node's CPU memory, within it.
void check_host_tier(const Scenario& sc, core::Section& pf)
{
  const double want = sc.prefill.host_capacity.value();
  if (want <= 0 || !sc.topology) return;
  if (!sc.prefill.enabled) {
    pf.error("host_capacity", "a host tier keeps chunks evicted from the prefilled pools: it needs prefill.enabled");
    return;
  }
  const topo::TopologySpec& t = sc.topology->spec();
  if (t.host_memory.value() <= 0)
    pf.error("host_capacity", "topology '" + t.name +
                                  "' does not describe its nodes' CPU memory (host_memory) to "
                                  "bound a host tier of " +
                                  core::format_bytes(sc.prefill.host_capacity) + " by");
  else if (want > t.host_memory.value())
    pf.error("host_capacity", core::format_bytes(sc.prefill.host_capacity) +
                                  " per node is more than the node's memory (topology '" + t.name + "': host_memory " +
                                  core::format_bytes(t.host_memory) + ")");
  else
    for (int i = 0; i < sc.requester_instances(); ++i)
      if (host_tier_chunks(sc, i) == 0) {
        const int sharing = instances_on_node(sc, i);
        pf.error("host_capacity",
                 core::format_bytes(sc.prefill.host_capacity) + " per node over its " + std::to_string(sharing) +
                     " requester instances is " + core::format_bytes(sc.prefill.host_capacity / sharing) +
                     " each, under one chunk (" + core::format_bytes(chunk_kv(sc, true)) +
                     ": corpus.chunk_tokens x layers x " + core::format_bytes(sc.model.kv_per_token()) + ")");
        break;
      }
}

} // namespace

namespace
{
// What the scenario's keys are read with: its document, the presets --set made inline (each named
// by its own file in messages), the diagnostics, the top section and the scenario's file.
struct Reading {
  core::Document& doc;
  const std::map<std::string, std::string>& inlined;
  core::Diagnostics& diags;
  core::Section& top;
  const std::string& name;
  core::Section section(const std::string& key, const core::Schema& schema) const
  {
    const auto it = inlined.find(key);
    return it == inlined.end() ? top.section(key) : core::Section(it->second, doc.root[key], key, schema, diags);
  }
};

// The model, the profile and the topology: each a preset, a file, or inline.
void read_machine(Scenario& sc, const Reading& r)
{
  core::Section& top = r.top;
  core::Diagnostics& diags = r.diags;
  const std::string& name = r.name;
  // Model: a preset, or inline.
  if (top.is_inline("model")) {
    core::Section m = r.section("model", model_schema());
    sc.model = read_model(m);
  } else if (std::string m = top.string("model"); !m.empty()) {
    try {
      sc.model = load_model(m);
    } catch (const core::InputError& e) {
      top.error("model", "no model preset or file named '" + m + "'");
    }
  }
  // Profile (a name or a path relative to the scenario).
  {
    std::string p = resolve_relative(top.string("profile"), name);
    try {
      sc.profile = calibrate::load_profile(p);
    } catch (const core::InputError& e) {
      for (const core::Diagnostic& d : e.diagnostics()) {
        if (d.file == "command line")
          top.error("profile", d.message); // at the scenario's `profile:` key
        else
          diags.add(d);
      }
    }
  }
  // Topology.
  if (top.is_inline("topology")) {
    core::Section t = r.section("topology", topo::topology_schema());
    try {
      sc.topology = std::make_shared<topo::Topology>(topo::read_topology(t));
    } catch (const core::InputError& e) {
      // The reader throws what the shared collection holds: add only what it does not yet.
      for (const core::Diagnostic& d : e.diagnostics())
        if (std::none_of(diags.list().begin(), diags.list().end(),
                         [&](const core::Diagnostic& h) { return h.str() == d.str(); }))
          diags.add(d);
    }
  } else if (std::string t = top.string("topology"); !t.empty()) {
    auto path = topology_file(t, name);
    if (!path)
      top.error("topology", core::no_preset_message("topology", t, "topologies"));
    else {
      try {
        sc.topology = std::make_shared<topo::Topology>(topo::load_topology(*path));
      } catch (const core::InputError& e) {
        for (const core::Diagnostic& d : e.diagnostics())
          diags.add(d);
      }
    }
  }
}

// The requester and holder GPUs and the instances' tensor parallelism.
void read_instances(Scenario& sc, core::Section& inst)
{
  sc.tp = inst.count("tp");
  if (sc.tp <= 0) sc.tp = 1; // already reported; keeps the instance arithmetic below from dividing by zero
  auto req_sel = inst.strings("requesters");
  auto hold_sel = inst.strings("holders");
  if (sc.topology) {
    sc.requesters = parse_gpus(req_sel, *sc.topology, inst, "requesters");
    sc.holders = parse_gpus(hold_sel, *sc.topology, inst, "holders");
    for (auto [list, key] : {std::pair{&sc.requesters, "requesters"}, std::pair{&sc.holders, "holders"}})
      if (sc.tp > 0 && list->size() % sc.tp != 0)
        inst.error(key,
                   std::to_string(list->size()) + " GPUs do not split into instances of tp = " + std::to_string(sc.tp));
    if (std::string problem = heads_split_problem(sc.model, sc.tp); !problem.empty()) inst.error("tp", problem);
  }
}

// The corpus's chunks and placement, and the selection over them.
void read_corpus_section(Scenario& sc, core::Section& top, core::Section& corpus)
{
  sc.corpus = workloads::read_corpus(corpus);
  if (corpus.has("holders")) corpus.error("holders", "set by instances.holders; leave it out");
  sc.corpus.holders = std::max(1, sc.holder_instances());
  if (!corpus.has("seed")) sc.corpus.seed = sc.seed;

  core::Section sel = top.section("selection");

  sc.selection = workloads::read_selection(sel);
  if (!sel.has("mode")) sc.selection.sparse = sc.model.index.sparse();
  if (!sel.has("top_k_tokens") && sc.model.index.sparse()) sc.selection.top_k_tokens = sc.model.index.topk;
}

// The requests: a trace (its file and format), the generator or a standing batch, and how they are
// replayed. Returns the generator's or the batch's section, if any.
std::optional<core::Section> read_workload(Scenario& sc, core::Section& wl, const std::string& name)
{
  if (wl.has("trace")) {
    // Beside the scenario, then $XATTN_DATA, then the bundled data (core::find_input).
    const std::string t = wl.string("trace");
    const auto found = core::find_input(t, fs::path(name).parent_path());
    sc.workload.trace = found ? found->string() : resolve_relative(t, name);
  }
  std::string fmt = wl.choice("format");
  std::error_code no_throw;
  if (!sc.workload.trace.empty() && !std::filesystem::is_regular_file(sc.workload.trace, no_throw)) {
    wl.error("trace", "no such file '" + sc.workload.trace + "'");
  } else if (!sc.workload.trace.empty()) {
    if (fmt == "auto") {
      try {
        sc.workload.format = workloads::guess_format(sc.workload.trace);
      } catch (const core::InputError& e) {
        wl.error("format", "cannot tell the format of '" + sc.workload.trace + "': set workload.format");
      }
    } else {
      sc.workload.format = *workloads::parse_format(fmt);
    }
  }
  std::optional<core::Section> source;
  if (wl.has("generator")) {
    core::Section& generator = source.emplace(wl.section("generator"));
    sc.workload.generator = workloads::read_generator(generator);
    if (!generator.has("seed")) // the scenario's seed drives the generated load too
      sc.workload.generator->seed = sc.seed;
  }
  if (wl.has("batch")) {
    core::Section& batch = source.emplace(wl.section("batch"));
    sc.workload.batch = workloads::read_batch(batch);
    sc.workload.batch->instances = sc.requester_instances();
    if (!batch.has("seed")) sc.workload.batch->seed = sc.seed; // the scenario's seed draws the shared contexts
    if (sc.workload.batch->requests() > workloads::ids::kSessions)
      batch.error("requests_per_instance",
                  fmt::format("{} requests on each of {} instances: more than the 2^32 sessions of the request-id "
                              "layout (workloads/request_id.hpp), each request being its own",
                              sc.workload.batch->requests_per_instance, sc.workload.batch->instances));
  }
  if (!sc.workload.trace.empty() + sc.workload.generator.has_value() + sc.workload.batch.has_value() != 1)
    wl.error("", "give exactly one of workload.trace, workload.generator and workload.batch");
  sc.workload.time_scale = wl.number("time_scale");
  sc.workload.copies = wl.count("copies"); // within the request-id layout: the field's range
  static_assert(workloads::ids::kCopies == 65536, "workload.copies's range quotes the layout");
  sc.workload.copy_offset = wl.seconds("copy_offset");
  sc.workload.max_requests = static_cast<std::uint64_t>(wl.integer("max_requests"));
  sc.workload.max_output_tokens = wl.integer("max_output_tokens");
  sc.workload.skip_bad = wl.boolean("skip_bad");
  sc.workload.prefix_sessions = wl.choice("sessions") == "prefix";
  return source;
}

void read_engine(Scenario& sc, core::Section& top, core::Section& eng)
{
  sc.granularity = eng.choice("granularity") == "layer" ? Granularity::kLayer : Granularity::kStep;
  sc.transport = eng.choice("transport") == "proxy" ? core::Transport::kProxy : core::Transport::kGpu;
  sc.max_batch = eng.count("max_batch");
  sc.cache_budget = eng.bytes("cache_budget");
  sc.fetch_blocking = eng.choice("fetch") == "blocking";
  sc.fast_path = eng.boolean("fast_path");
  sc.check_solver = eng.boolean("check_solver");
  sc.interference = eng.boolean("interference");
  sc.replica_by_load = eng.choice("replica_choice") == "load";
  sc.replication = {eng.choice("replication") == "dynamic", static_cast<int>(eng.count("replicate_after")),
                    static_cast<int>(eng.count("max_copies")), eng.bytes("replica_budget").value()};
  sc.requester_nics_node = eng.choice("requester_nics") == "node";
  if (sc.requester_nics_node && sc.topology && !sc.topology->can_stripe()) {
    // Striping relays over NVLink to another NIC of the node: without them it would do nothing.
    const topo::TopologySpec& t = sc.topology->spec();
    eng.error("requester_nics", "'node' stripes over a node's NICs through NVLink, but topology '" + t.name + "' has " +
                                    (!t.fabric   ? std::string("no fabric")
                                     : !t.nvlink ? std::string("no NVLink")
                                                 : std::to_string(t.nics->count) + " NIC per node"));
  }
  sc.predicate_prior_steps = eng.number("predicate_prior_steps");
  sc.overload_tolerance = eng.number("overload_tolerance");
  if (const std::string protocol = eng.choice("route_protocol"); protocol != "profile")
    sc.profile.route_protocol = calibrate::route_protocol_named(protocol);
  const bool routes = std::any_of(sc.policies.begin(), sc.policies.end(),
                                  [&](const std::string& p) { return sc.policy_info(p).routes; });
  if (routes && !sc.profile.name.empty() && sc.model.layers > 0)
    if (std::string missing = missing_for_protocol(sc.model, sc.profile); !missing.empty()) top.error("model", missing);
  if (eng.has("max_memory")) {
    sc.max_memory = eng.bytes("max_memory");
    sc.max_memory_origin = "engine.max_memory = " + core::format_bytes(sc.max_memory);
  } else {
    sc.max_memory = core::default_memory_limit();
    sc.max_memory_origin = "engine.max_memory's default of " + core::format_bytes(sc.max_memory) + ", " +
                           core::default_memory_limit_origin();
  }
}

// The goodput's bounds, each figure once.
void read_goodput(Scenario& sc, core::Section& top)
{
  for (core::Section& b : top.sections("goodput")) {
    const std::size_t problems = b.diagnostics().size();
    const std::optional<RequestFigure> figure = request_figure(b.choice("metric"));
    const double max_s = b.seconds("max").value();
    if (!figure || b.diagnostics().size() > problems) continue; // reported where it was read
    if (std::any_of(sc.goodput.begin(), sc.goodput.end(), [&](const RequestBound& o) { return o.figure == *figure; }))
      b.error("metric", "bounded twice: give each figure one bound");
    sc.goodput.push_back({*figure, max_s});
  }
}

// Prefill on the decoding instances, or a pool of its own.
void read_prefill(Scenario& sc, core::Section& inst, core::Section& pf)
{
  sc.prefill.enabled = pf.boolean("enabled");
  sc.prefill.max_num_batched_tokens = pf.integer("max_num_batched_tokens");
  sc.prefill.kv_capacity = pf.has("kv_capacity") ? pf.bytes("kv_capacity") : sc.batch_hbm;
  sc.prefill.host_capacity = pf.bytes("host_capacity");
  check_host_tier(sc, pf);
  read_prefill_pool(sc, inst, pf);
  if (sc.prefill.enabled) {
    // vLLM refuses a budget below max_num_seqs: the batch's decodes alone would not fit.
    if (sc.prefill.max_num_batched_tokens < sc.max_batch)
      pf.error("max_num_batched_tokens", std::to_string(sc.prefill.max_num_batched_tokens) +
                                             " tokens cannot take one decode token for each of engine.max_batch = " +
                                             std::to_string(sc.max_batch) + " requests");
    // A trace's block size is known once it is read (place_corpus checks it there).
    else if (std::string under = sc.workload.generator ? budget_under_block(sc, sc.workload.generator->block_tokens)
                                 : sc.workload.batch   ? budget_under_block(sc, sc.workload.batch->block_tokens)
                                                       : "";
             !under.empty())
      pf.error("max_num_batched_tokens", under);
    if (!sc.profile.name.empty() && sc.model.layers > 0) {
      if (std::string missing = missing_dimensions(sc.model, sc.profile); !missing.empty())
        pf.error("enabled", missing);
      else if (!sc.profile.measured.prefill && !sc.profile.gpu.given())
        pf.error("enabled", "profile '" + sc.profile.name +
                                "' has neither a gpu section (the roofline) nor a measured prefill.tokens_per_s to "
                                "price a prefill with");
    }
  }
}

void read_router(Scenario& sc, core::Section& rt)
{
  const std::string router_name = rt.choice("policy");
  for (const auto& [name, router] : kRouters)
    if (router_name == name) sc.router.policy = router;
  sc.router.cache_threshold = rt.number("cache_threshold");
  sc.router.balance_abs_threshold = rt.number("balance_abs_threshold");
  sc.router.balance_rel_threshold = rt.number("balance_rel_threshold");
  // The offline policies look ahead at where every request will run, before the run.
  if (sc.router.policy == Router::kLeastLoaded || sc.router.policy == Router::kPrefix)
    for (const std::string& p : sc.policies)
      if (sc.policy_info(p).offline)
        rt.error("policy", "'" + router_name + "' places requests by the run's load, which policy '" + p +
                               "' cannot look ahead at: use session or round-robin, or leave '" + p + "' out");
}
} // namespace

Scenario parse_scenario(const std::string& text, const std::string& name, const std::vector<std::string>& overrides)
{
  core::Document doc = core::parse_yaml(text, name);
  const std::map<std::string, std::string> inlined = inline_edited_presets(doc, overrides);
  for (const std::string& o : overrides)
    core::apply_override(doc, o);
  core::Diagnostics diags;
  core::Section top(doc.file, doc.root, "", scenario_schema(), diags);
  if (!doc.root.IsMap()) {
    if (diags.empty())
      diags.add(
          {doc.file, 0, 0, "", "empty scenario: expected a mapping with name, model, topology, instances, workload"});
    diags.throw_if_any();
  }
  Scenario sc;
  sc.file = name;
  sc.name = top.folder_name("name");
  sc.seed = static_cast<std::uint64_t>(top.integer("seed"));
  read_machine(sc, Reading{doc, inlined, diags, top, name});
  core::Section inst = top.section("instances");
  read_instances(sc, inst);
  core::Section corpus = top.section("corpus");
  read_corpus_section(sc, top, corpus);
  core::Section wl = top.section("workload");
  std::optional<core::Section> source = read_workload(sc, wl, name);
  read_policies(sc, top);
  core::Section eng = top.section("engine");
  read_engine(sc, top, eng);
  check_layout(sc, top, inst, eng);
  read_goodput(sc, top);
  core::Section pf = top.section("prefill");
  read_prefill(sc, inst, pf);
  if (sc.replication.on && sc.prefill.enabled)
    eng.error("replication", "copies chunks the corpus placed on holders; with prefill.enabled a chunk lives in "
                             "the pool that prefilled it");
  core::Section rt = top.section("router");
  read_router(sc, rt);
  core::Section wi = top.section("what_if");
  sc.what_if.collapsed_response = wi.boolean("collapsed_response");
  sc.what_if.compute_amortisation = wi.boolean("compute_amortisation");
  sc.what_if.batching = wi.boolean("batching");

  core::Section out = top.section("output");
  sc.out_dir = out.string("dir");

  if (sc.requesters.empty() && sc.topology && diags.empty()) inst.error("requesters", "no requester GPU");
  // Each key lies in its range; now their products (run_size.hpp), on values that are all valid.
  if (diags.empty()) check_run_size(sc, RunSizeKeys{wl, source ? &*source : nullptr, corpus, eng});
  diags.throw_if_any();
  return sc;
}

std::string budget_under_block(const Scenario& sc, std::int64_t block_tokens)
{
  if (!sc.prefill.enabled || sc.prefill.max_num_batched_tokens >= block_tokens) return "";
  return std::to_string(sc.prefill.max_num_batched_tokens) + " tokens is under one of the workload's " +
         std::to_string(block_tokens) + "-token blocks";
}

std::string heads_split_problem(const ModelSpec& m, int tp)
{
  if (tp <= 0) return "";
  if (m.heads > 0 && m.heads % tp != 0)
    return "the model's " + std::to_string(m.heads) + " heads do not split over tp = " + std::to_string(tp);
  // GQA's KV heads split over the ranks, or each is copied on a whole number of them.
  if (!m.mla() && m.kv_heads > 0 && m.kv_heads % tp != 0 && tp % m.kv_heads != 0)
    return "the model's " + std::to_string(m.kv_heads) + " KV heads neither split over tp = " + std::to_string(tp) +
           " nor copy evenly onto its ranks";
  return "";
}

core::Bytes chunk_kv(const Scenario& sc, bool whole)
{
  const core::Bytes per_token = whole ? sc.model.kv_per_token() : sc.model.kv_per_token_on_rank(sc.tp);
  return per_token * (static_cast<double>(sc.corpus.chunk_tokens) * sc.model.layers);
}

int instances_on_node(const Scenario& sc, int instance)
{
  const auto node = [&](int i) { return sc.topology->node_of(sc.requesters[static_cast<std::size_t>(i) * sc.tp]); };
  int sharing = 0;
  for (int i = 0; i < sc.requester_instances(); ++i)
    sharing += node(i) == node(instance) ? 1 : 0;
  return sharing;
}

std::uint64_t host_tier_chunks(const Scenario& sc, int instance)
{
  if (sc.prefill.host_capacity.value() <= 0 || !sc.topology) return 0;
  const double share = sc.prefill.host_capacity.value() / instances_on_node(sc, instance);
  return static_cast<std::uint64_t>(std::floor(share / std::max(1.0, chunk_kv(sc, true).value())));
}

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides)
{
  core::Document doc = core::load_yaml(path); // file errors (missing, binary, syntax) first
  (void)doc;
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_scenario(ss.str(), path, overrides);
}

} // namespace xattn::sim::engine
