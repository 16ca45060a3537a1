// The scenario file's schema: every key, its unit, default, range and meaning (sim/engine/scenario.hpp
// reads a scenario against it; --describe renders it).
#include "sim/engine/result.hpp"
#include "sim/engine/scenario.hpp"
#include "sim/policy/policy.hpp"

#include "sim/core/check.hpp"

#include <algorithm>

namespace xattn::sim::engine
{
namespace
{
using core::Check;
using core::Dimension;
using core::FieldKind;
using core::kNoDefault;

// Tensor parallelism's bounds, for the requester instances and the prefill pool alike.
const core::Range kTpRange{1, 1024, "tensor parallelism spans a node or an NVLink domain (8 to 72 GPUs)"};

const core::Schema kPrefillPoolSchema{
    {.key = "gpus", .kind = FieldKind::kList, .meaning = "GPU selectors of the prefill instances"},
    {.key = "tp",
     .kind = FieldKind::kInteger,
     .def = "1",
     .meaning = "GPUs per prefill instance (heads, MLPs and experts split over them)",
     .check = Check::kPositive,
     .range = kTpRange},
    {.key = "dp_attention",
     .kind = FieldKind::kInteger,
     .def = "1",
     .meaning = "prefill instances (of tp = 1) that iterate together as one data-parallel group, each with its own "
                "prompts and token budget, as DeepSeek prefills (its MoE layers wait for the group's slowest GPU)",
     .check = Check::kPositive,
     .range = {1, 65536, "DeepSeek prefills on 32 GPUs per instance"}},
    {.key = "ep",
     .kind = FieldKind::kInteger,
     .def = "1",
     .meaning = "GPUs of the group the routed experts split over: 1, or dp_attention; each iteration's tokens then "
                "go to their experts' GPUs and back over the network (the MoE layers' dispatch and combine)",
     .check = Check::kPositive,
     .range = {1, 65536, "expert parallelism spans a prefill group"}},
};

const core::Schema kInstancesSchema{
    {.key = "requesters",
     .kind = FieldKind::kList,
     .meaning = "GPU selectors: all, node3, node0-7, node2.gpu0-3, leaf1"},
    {.key = "holders", .kind = FieldKind::kList, .meaning = "GPU selectors of the corpus holders"},
    {.key = "tp",
     .kind = FieldKind::kInteger,
     .def = "1",
     .meaning = "GPUs per instance (heads split evenly)",
     .check = Check::kPositive,
     .range = kTpRange},
    {.key = "dp_attention",
     .kind = FieldKind::kInteger,
     .def = "1",
     .meaning = "engine.step full: GPUs of one serving instance, each decoding its own batch (data-parallel "
                "attention), stepping together",
     .check = Check::kPositive,
     .range = {1, 65536, "DeepSeek decodes on 144 to 320 GPUs per instance"}},
    {.key = "ep",
     .kind = FieldKind::kInteger,
     .def = "1",
     .meaning = "engine.step full: GPUs the routed experts split over (1, or dp_attention: every GPU of the instance)",
     .check = Check::kPositive,
     .range = {1, 65536, "expert parallelism spans a serving instance"}},
    {.key = "micro_batches",
     .kind = FieldKind::kInteger,
     .def = "1",
     .meaning =
         "ep > 1: micro-batches each GPU splits its batch into, 1 or 2. 2 (engine.granularity layer): as DeepSeek "
         "serves, each layer's compute runs as two halves, each sending its dispatch as it ends, so that one "
         "micro-batch's all-to-all is on the wire while the other computes, as far as each layer's dependencies "
         "allow (each micro-batch reads the weights again; the calls to holders stay before the compute)",
     .check = Check::kPositive,
     .range = {1, 2, "DeepSeek's serving overlaps two"}},
    {.key = "expert_routing",
     .kind = FieldKind::kChoice,
     .def = "expected",
     .meaning = "ep > 1: which experts each token picks. expected: every GPU sends each peer its expected share; "
                "drawn per token and MoE layer from the run's seed: uniform (every expert alike, as DeepEP's "
                "benchmarks route), zipf (popularity 1 / rank^expert_skew over shuffled experts), balanced (that "
                "popularity with redundant_experts extra copies placed as DeepSeek's EPLB places them)",
     .choices = expert_routing_names()},
    {.key = "expert_skew",
     .def = "1",
     .meaning = "zipf, balanced: the experts' popularity exponent (0: uniform)",
     .range = {0, 4, "past 4 one expert takes nearly every token"}},
    {.key = "redundant_experts",
     .kind = FieldKind::kInteger,
     .def = "0",
     .meaning = "balanced: extra copies of the most loaded experts, each GPU holding (experts + these) / ep "
                "(DeepSeek-V3 decodes with 32 over EP 320: arXiv 2412.19437 §3.4.2)",
     .range = {0, 65536, "a copy or more of every expert"}},
    {.key = "prefill",
     .kind = FieldKind::kSection,
     .def = kNoDefault,
     .meaning = "prefill.enabled: a pool of prefill instances (disaggregated serving, xPyD): each prompt is "
                "prefilled there, in iterations of prefill chunks under prefill.max_num_batched_tokens, and its KV "
                "handed off to its requester instance, which decodes it; absent: every requester instance prefills "
                "its own prompts",
     .sub = &kPrefillPoolSchema},
};

const core::Schema& workload_schema()
{
  static const std::string formats = "auto|" + std::string(workloads::format_names());
  static const core::Schema s{
      {.key = "trace",
       .kind = FieldKind::kString,
       .def = kNoDefault,
       .meaning = "trace file: beside the scenario, else under $XATTN_DATA, else the bundled data (xattn data list)"},
      {.key = "format", .kind = FieldKind::kChoice, .def = "auto", .meaning = "trace format", .choices = formats},
      {.key = "generator",
       .kind = FieldKind::kSection,
       .def = "",
       .meaning = "synthetic agentic load (instead of a trace)",
       .sub = &workloads::generator_schema()},
      {.key = "batch",
       .kind = FieldKind::kSection,
       .def = kNoDefault,
       .meaning = "a standing batch (instead of a trace): as many requests on every requester instance, all at t = "
                  "0, each context its own or drawn from a shared corpus",
       .sub = &workloads::batch_schema()},
      {.key = "time_scale",
       .def = "1",
       .meaning = "arrivals happen this many times faster",
       .check = Check::kPositive,
       .range = {0.01, 1e6,
                 "at most 100 times slower (an hour of trace then spans four days) and a million times faster"}},
      {.key = "copies",
       .kind = FieldKind::kInteger,
       .def = "1",
       .meaning = "overlaid copies of the trace",
       .check = Check::kPositive,
       .range = {1, 65536, "copy ids take 16 bits of a request id (workloads/request_id.hpp)"}},
      {.key = "copy_offset",
       .dim = Dimension::kSeconds,
       .def = "0s",
       .meaning = "time shift between copies",
       .range = {0, kMaxSimulatedTimeS,
                 "simulated time stays below 1e6 s, where a double still resolves a step's microseconds"}},
      {.key = "max_requests",
       .kind = FieldKind::kInteger,
       .def = "0",
       .meaning = "stop after this many requests (0: all)",
       .range = {0, 9007199254740992.0, "0: all; a whole number a double holds exactly (2^53)"}},
      {.key = "max_output_tokens",
       .kind = FieldKind::kInteger,
       .def = "0",
       .meaning = "cap decode steps per request (0: none)",
       .range = {0, 16777216, "0: none; 2^24 tokens is past every model's context window"}},
      {.key = "sessions",
       .kind = FieldKind::kChoice,
       .def = "request",
       .meaning = "a trace format without sessions (mooncake): request, each request its own session; prefix, a "
                  "request whose block ids begin with the whole of an earlier request's continues that session "
                  "(the longest such)",
       .choices = "request|prefix"},
      {.key = "skip_bad",
       .kind = FieldKind::kBool,
       .def = "false",
       .meaning = "skip unreadable trace entries (counted)"},
  };
  return s;
}

// An expected output length: a request's steps.
constexpr core::Range kPriorStepsRange{0, 16777216, "an output of 2^24 tokens is past every context window"};

const core::Schema kEngineSchema{
    {.key = "granularity",
     .kind = FieldKind::kChoice,
     .def = "step",
     .meaning = "step: one exchange per holder per step; layer: one per layer",
     .choices = "step|layer"},
    {.key = "transport",
     .kind = FieldKind::kChoice,
     .def = "gpu",
     .meaning = "device-initiated or CPU-proxy dispatch",
     .choices = "gpu|proxy"},
    {.key = "max_batch",
     .kind = FieldKind::kInteger,
     .def = "64",
     .meaning = "requests decoded together on one requester",
     .check = Check::kPositive,
     .range = {1, 65536, "serving engines batch at most a few thousand requests"}},
    {.key = "cache_budget",
     .dim = Dimension::kBytes,
     .def = "16GB",
     .meaning = "HBM per requester GPU for fetched chunks (LRU)",
     .range = {0, 1e15, "HBM per GPU: 80GB (H100) to 288GB (B300); a PB is a typo"}},
    {.key = "fetch",
     .kind = FieldKind::kChoice,
     .def = "blocking",
     .meaning = "blocking: the step waits for every fetch and its splice; background: it waits only for a fetch "
                "served sooner than a routed call, and otherwise goes on while the chunk is in flight (its calls "
                "routed until it lands)",
     .choices = "background|blocking"},
    {.key = "fast_path",
     .kind = FieldKind::kBool,
     .def = "true",
     .meaning = "the engine's own incremental max-min sharing; false: every transfer as SimGrid comms (the reference)"},
    {.key = "replica_choice",
     .kind = FieldKind::kChoice,
     .def = "load",
     .meaning = "which copy of a chunk placed on several holders (corpus.placement hot-replicated) a call goes to: "
                "load, the one whose routed call would end first now (idle on its path, plus what the kernels "
                "running on that holder slow its kernel by); nearest, the nearest by fabric class",
     .choices = "load|nearest"},
    {.key = "replication",
     .kind = FieldKind::kChoice,
     .def = "none",
     .meaning = "dynamic: a chunk read engine.replicate_after times since its last copy gets one more, moved from "
                "the holder serving the read to the holder nearest the reader that has none (priced as a fetch "
                "there), up to engine.max_copies beyond its placement's, each holder keeping its copies in "
                "engine.replica_budget (least recently read out first); calls then go to the copy "
                "engine.replica_choice picks. none: chunks stay where the placement put them",
     .choices = "none|dynamic"},
    {.key = "replicate_after",
     .kind = FieldKind::kInteger,
     .def = "64",
     .meaning = "replication dynamic: reads of a chunk (a routed call to it or a fetch of it) since its last copy "
                "that earn it another",
     .check = Check::kPositive,
     .range = {1, 1e9, "reads of one chunk"}},
    {.key = "max_copies",
     .kind = FieldKind::kInteger,
     .def = "3",
     .meaning = "replication dynamic: copies of a chunk beyond its placement's",
     .check = Check::kPositive,
     .range = {1, 65536, "copies of one chunk, at most one a holder"}},
    {.key = "replica_budget",
     .dim = Dimension::kBytes,
     .def = "8GB",
     .meaning = "replication dynamic: HBM per holder GPU for the copies it receives (LRU)",
     .range = {0, 1e15, "HBM per GPU: 80GB (H100) to 288GB (B300); a PB is a typo"}},
    {.key = "interference",
     .kind = FieldKind::kBool,
     .def = "false",
     .meaning = "a requester GPU that also holds chunks (listed among the holders too, or prefilled pools) runs "
                "its own kernels on the same compute as the calls it serves for others, and each slows the other "
                "while they overlap; false: they run apart, each at full speed"},
    {.key = "check_solver",
     .kind = FieldKind::kBool,
     .def = "false",
     .meaning = "a check for tests and debugging, slow: after every re-solve of the incremental max-min sharing, "
                "solve every moving transfer from scratch and stop with an internal error (exit 3) where a rate "
                "differs by more than one part in a million; after every event, check the network's bookkeeping "
                "(sim/engine/network_check.cpp)"},
    {.key = "requester_nics",
     .kind = FieldKind::kChoice,
     .def = "own",
     .meaning =
         "own: a requester uses its own NIC; node: all of its node's NICs, the holder's rail reached over NVLink (PXN; "
         "needs NVLink and several NICs per node; a requester that is also a holder keeps its own NIC)",
     .choices = "own|node"},
    {.key = "predicate_prior_steps",
     .def = "256",
     .meaning = "the online reuse estimate's expected output length before any request finished (a policy "
                "variant's prior_steps in its run)",
     .check = Check::kPositive,
     .range = kPriorStepsRange},
    {.key = "route_protocol",
     .kind = FieldKind::kChoice,
     .def = "profile",
     .meaning = "what a routed query carries: profile (the profile's dispatch.route_protocol, which `xattn describe "
                "profile` explains), or absorbed or compressed in its place",
     .choices = "profile|absorbed|compressed"},
    {.key = "overload_tolerance",
     .def = "0.1",
     .meaning = "a policy that delivers fewer output tokens than (1 - this) of those offered over the second half "
                "of the arrival window is overloaded: its backlog grew, its latencies are a growing queue's and are "
                "not ranked",
     .range = {0, 1, "a share of the offered tokens"}},
    {.key = "step",
     .kind = FieldKind::kChoice,
     .def = "attention",
     .meaning = "attention: a step is cross-instance attention and the profile's step.other_compute; full: the "
                "whole model's layers by the roofline, the MoE layers' expert-parallel dispatch and combine on the "
                "network (instances.dp_attention, instances.ep)",
     .choices = "attention|full"},
    {.key = "max_memory",
     .dim = Dimension::kBytes,
     .def = kNoDefault,
     .meaning =
         "stop the run cleanly (exit 1, figures so far in summary.interrupted.json) when it holds more; unset: "
         "half of the memory available at the start (MemAvailable or the cgroup's limit), at most 3/4 of ulimit -v",
     .range = {64 * 1048576.0, 1125899906842624.0, "the simulator itself needs tens of MiB; no machine has a PiB"}}};

const core::Schema kWhatIfSchema{
    {.key = "collapsed_response",
     .kind = FieldKind::kBool,
     .def = "true",
     .meaning = "holder issues the response (no second probe)"},
    {.key = "compute_amortisation",
     .kind = FieldKind::kBool,
     .def = "true",
     .meaning = "one holder kernel per exchange"},
    {.key = "batching",
     .kind = FieldKind::kBool,
     .def = "true",
     .meaning = "one exchange per holder per step for all requests"},
};

const core::Schema kPrefillSchema{
    {.key = "enabled",
     .kind = FieldKind::kBool,
     .def = "false",
     .meaning = "a request first prefills, on its instance, the prompt tokens no instance's pool holds (its blocks "
                "never prefilled or evicted since, and its tokens past its last block; at least its last token), in "
                "chunks mixed into the decode iterations, and makes its first token in the iteration that ends its "
                "prefill; a chunk then lives in the pool of the instance that prefilled it, and calls to it go "
                "there; false: every block already sits on its corpus holder and decoding starts on arrival"},
    {.key = "max_num_batched_tokens",
     .kind = FieldKind::kInteger,
     .def = "8192",
     .meaning =
         "an iteration's token budget, as vLLM schedules it: one token for each decoding request of the batch "
         "first, then prefill chunks in arrival order up to the rest (the default is vLLM's for its API server on "
         "GPUs of 70 GiB or more: vllm/engine/arg_utils.py, get_batch_defaults)",
     .check = Check::kPositive,
     .range = {1, 16777216, "2^24 tokens is past every model's context window"}},
    {.key = "kv_capacity",
     .dim = Dimension::kBytes,
     .def = kNoDefault,
     .meaning = "HBM per requester GPU for the prefilled chunks, least recently used out (a chunk a request being "
                "served attends stays); unset: what the GPU has beside the weights and engine.cache_budget (the "
                "profile's gpu.hbm_capacity); 0B: unbounded",
     .range = {0, 1e15, "HBM per GPU: 80GB (H100) to 288GB (B300); a PB is a typo"}},
    {.key = "handoff",
     .kind = FieldKind::kChoice,
     .def = "layer",
     .meaning = "instances.prefill: when a prompt's KV leaves its prefill instance for its requester instance. "
                "layer: each layer's KV as the layer is computed, behind the prefill (as vLLM's KV connectors and "
                "Mooncake's transfer engine pipeline it); after: all of it once the prompt's prefill ends; none: it "
                "stays in the prefill instance's pool, whose GPUs serve calls as holders do, and each decode step "
                "the policy routes attention to it, fetches it or prefills it again, as any remote chunk (the "
                "prefill pool's tp must be instances.tp)",
     .choices = "layer|after|none"},
    {.key = "block_tokens",
     .kind = FieldKind::kInteger,
     .def = "16",
     .meaning = "instances.prefill: the KV cache's block, in tokens (vLLM's block_size, 16 on GPUs): a hand-off "
                "moves whole blocks, those of the prompt and of the slot its first decoded token takes (a 128-token "
                "prompt moves 9 blocks, 144 tokens)",
     .check = Check::kPositive,
     .range = {1, 4096, "vLLM's blocks hold 1 to a few hundred tokens"}},
    {.key = "host_capacity",
     .dim = Dimension::kBytes,
     .def = "0B",
     .meaning = "CPU memory per node for chunks evicted from the requester GPUs' pools: a second tier, shared evenly "
                "by the node's requester instances, each keeping its own, least recently used out. A prompt that "
                "finds a chunk in its instance's tier reads it back into HBM over PCIe, each rank its share over "
                "its PCIe link and its switch's host uplink, before its first prefill chunk runs (as vLLM's KV "
                "offloading loads it before the forward pass); at most the topology's host_memory; 0B: no host tier",
     .range = core::kHostMemoryRange},
};

const core::Schema& router_schema()
{
  static const std::string names = core::choices_of(kRouters);
  static const core::Schema s{
      {.key = "policy",
       .kind = FieldKind::kChoice,
       .def = "session",
       .meaning = "the requester instance a request goes to. session: a session stays on one, new sessions and "
                  "sub-agents in turn; round-robin: every request the next in turn; least-loaded: the one serving "
                  "the fewest requests; prefix: SGLang's cache-aware router, the least loaded when the load is out "
                  "of balance, else the one holding the most of the prompt when that is over cache_threshold of it "
                  "(with prefill.enabled its cached prefix in the instances' pools and host tiers; without, the "
                  "blocks its fetch cache kept), else the least loaded",
       .choices = names},
      {.key = "cache_threshold",
       .def = "0.5",
       .meaning = "prefix: the share of a prompt's blocks an instance must hold, of its cached prefix, to be chosen "
                  "for them (SGLang's default)",
       .range = {0, 1, "a share of the prompt"}},
      {.key = "balance_abs_threshold",
       .def = "32",
       .meaning = "prefix: the load is out of balance when the busiest instance serves more than this many requests "
                  "over the idlest and more than balance_rel_threshold times as many (SGLang's default)",
       .range = {0, 1e9, "requests"}},
      {.key = "balance_rel_threshold",
       .def = "1.0001",
       .meaning = "prefix: the ratio of loads past which, with balance_abs_threshold, the load is out of balance "
                  "(SGLang's default)",
       .range = {1, 1e9, "a ratio of loads"}},
  };
  return s;
}

const core::Schema kOutputSchema{
    {.key = "dir", .kind = FieldKind::kString, .def = kNoDefault, .meaning = "output folder (default out/<name>)"},
};

// One bound of goodput (result.hpp, RequestBound).
const core::Schema& request_bound_schema()
{
  static const std::string figures = request_figure_names("|");
  static const core::Schema s{
      {.key = "metric",
       .kind = FieldKind::kChoice,
       .meaning = "the request's figure bounded: time to first token, time per output token, end to end",
       .choices = figures},
      {.key = "max",
       .dim = Dimension::kSeconds,
       .meaning = "its bound (inclusive)",
       .check = core::Check::kPositive,
       .range = {0, 86400, "a request answered after a day is not served"}},
  };
  return s;
}

const core::Schema& corpus_section_schema()
{
  return workloads::corpus_schema();
}

} // namespace

// A policy variant: the policy, the prior of its run, and every policy's own parameters (the
// scenario checks that those it sets are its policy's).
const core::Schema& policy_variant_schema()
{
  static const std::string choices = policy::names("|");
  static const std::vector<std::string> meanings = [] {
    std::vector<std::string> out;
    for (const policy::PolicyInfo& p : policy::registry())
      if (p.params != nullptr)
        for (const core::Field& f : *p.params)
          out.push_back(std::string(p.name) + ": " + std::string(f.meaning));
    return out;
  }();
  static const core::Schema s = [] {
    core::Schema out{
        {.key = "policy",
         .kind = FieldKind::kChoice,
         .def = core::kRequired,
         .meaning = "the policy it runs, under the parameters below",
         .choices = choices},
        {.key = "prior_steps",
         .def = core::kNoDefault,
         .meaning = "the online reuse estimate's expected output length before any request finished, in its run "
                    "(default: engine.predicate_prior_steps)",
         .check = Check::kPositive,
         .range = kPriorStepsRange},
    };
    std::size_t k = 0;
    for (const policy::PolicyInfo& p : policy::registry())
      if (p.params != nullptr)
        for (core::Field f : *p.params) {
          XATTN_CHECK(std::none_of(out.begin(), out.end(), [&](const core::Field& o) { return o.key == f.key; }),
                      "two policies' parameters share the key " + std::string(f.key));
          f.meaning = meanings[k++];
          out.push_back(f);
        }
    return out;
  }();
  return s;
}

const core::Schema& scenario_schema()
{
  static const std::string policies_meaning =
      "policies compared (" + policy::names("|") + ", or labels of policy_variants); default: all of them";
  static const core::Schema s{
      {.key = "name", .kind = FieldKind::kString, .meaning = "study name (names the output folder)"},
      {.key = "seed",
       .kind = FieldKind::kInteger,
       .def = "1",
       .meaning = "seed of every random draw",
       .range = core::kSeedRange},
      {.key = "model",
       .kind = FieldKind::kNameOrSection,
       .meaning = "model preset or inline model",
       .sub = &model_schema()},
      {.key = "profile",
       .kind = FieldKind::kString,
       .def = "h100-ndr200-ibgda",
       .meaning = "calibration profile (name or path)"},
      {.key = "topology",
       .kind = FieldKind::kNameOrSection,
       .meaning = "topology preset or inline topology",
       .sub = &topo::topology_schema()},
      {.key = "instances",
       .kind = FieldKind::kSection,
       .meaning = "requester and holder GPUs",
       .sub = &kInstancesSchema},
      {.key = "corpus",
       .kind = FieldKind::kSection,
       .def = "",
       .meaning = "chunks and their placement",
       .sub = &corpus_section_schema()},
      {.key = "selection",
       .kind = FieldKind::kSection,
       .def = "",
       .meaning = "which blocks a step attends",
       .sub = &workloads::selection_schema()},
      {.key = "workload",
       .kind = FieldKind::kSection,
       .meaning = "trace or generator, and load shaping",
       .sub = &workload_schema()},
      {.key = "policies", .kind = FieldKind::kList, .def = core::kNoDefault, .meaning = policies_meaning},
      {.key = "policy_variants",
       .kind = FieldKind::kMap,
       .def = core::kNoDefault,
       .meaning = "LABEL: a policy under parameters of its own, run and reported as LABEL where `policies` names it",
       .sub = &policy_variant_schema()},
      {.key = "engine", .kind = FieldKind::kSection, .def = "", .meaning = "simulation options", .sub = &kEngineSchema},
      {.key = "what_if",
       .kind = FieldKind::kSection,
       .def = "",
       .meaning = "host-overhead reductions",
       .sub = &kWhatIfSchema},
      {.key = "prefill",
       .kind = FieldKind::kSection,
       .def = "",
       .meaning = "prefill on the decoding instances (co-located) or on a pool of its own (instances.prefill), chunked "
                  "under a token budget",
       .sub = &kPrefillSchema},
      {.key = "router",
       .kind = FieldKind::kSection,
       .def = "",
       .meaning = "which requester instance each request goes to",
       .sub = &router_schema()},
      {.key = "goodput",
       .kind = FieldKind::kList,
       .def = "[{metric: ttft_s, max: 2s}, {metric: tpot_s, max: 80ms}]",
       .meaning = "the bounds a finished request meets to count as good (goodput, as vLLM's benchmark counts it); "
                  "the default is MLPerf Inference's for DeepSeek-R1 served online (loadgen/mlperf.conf, "
                  "deepseek-r1.Server); [] counts every finished request",
       .sub = &request_bound_schema()},
      {.key = "output", .kind = FieldKind::kSection, .def = "", .meaning = "where results go", .sub = &kOutputSchema},
  };
  return s;
}

} // namespace xattn::sim::engine
