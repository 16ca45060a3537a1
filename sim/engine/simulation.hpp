// One simulation: one scenario under one policy, in one process (SimGrid allows one engine per
// process; the driver forks one child per policy). Requests arrive from the stream, sessions stay
// on one requester instance, and each requester decodes its active requests in iterations: one
// decode step for every request of the batch, its remote chunks served by the policy (sim/engine/README.md,
// "The model"). Results are JSON plus CSV fragments written by the child.
#pragma once

#include "sim/engine/cache.hpp"
#include "sim/engine/compute.hpp"
#include "sim/engine/homes.hpp"
#include "sim/engine/kv_pool.hpp"
#include "sim/engine/load.hpp"
#include "sim/engine/network.hpp"
#include "sim/engine/posting.hpp"
#include "sim/engine/result.hpp"
#include "sim/engine/scenario.hpp"
#include "sim/engine/session_history.hpp"
#include "sim/engine/timeline.hpp"
#include "sim/model/cost_model.hpp"
#include "sim/model/pricing.hpp"
#include "sim/policy/policy.hpp"
#include "workloads/corpus.hpp"
#include "workloads/selection.hpp"

#include <simgrid/s4u/Engine.hpp>

#include <cstdio>
#include <memory>
#include <unordered_map>
#include <vector>

namespace xattn::sim::engine
{

/// Corpus and placement, computed once before the simulations fork (a prescan when needed).
struct PlacedCorpus {
  std::int64_t block_tokens = 0;
  std::shared_ptr<workloads::Corpus> corpus; ///< null: discovered as the stream goes
  std::shared_ptr<workloads::Placement> placement;
  std::vector<std::uint64_t> hot_chunks;
  std::uint64_t total_chunks = 0;
  /// selection.index_keys requester: the copy of the corpus's index keys each requester GPU keeps,
  /// which the batch's own KV shares the HBM with.
  core::Bytes index_copy{0};
};
/// Reads the stream's block size (and, when placement needs it, the whole stream) and checks
/// holder capacity, and a requester's copy of the index keys against its HBM. Throws
/// core::InputError.
PlacedCorpus place_corpus(const Scenario& sc);

struct SimulationOptions {
  std::string requests_csv; ///< where to write this policy's requests.csv rows ("" = none)
  std::string links_csv;    ///< this policy's links.csv rows ("" = none)
  std::string holders_csv;  ///< this policy's holders.csv rows ("" = none)
  bool progress = false;    ///< progress lines on stderr
  TimelineSetup timeline;   ///< this policy's timeline fragment (path "": none)
  /// A driver's child: SIGINT and SIGTERM stop the run with its figures so far (stop.hpp), SimGrid's
  /// own SIGINT handler notwithstanding.
  bool catch_signals = false;
};

class FutureReads; // future.hpp
class Replicas;    // replicas.hpp

/// The GPUs a call may go to and what serves calls on them.
struct HolderGpus {
  /// Holder instance-major (tp each): the corpus holders, then with prefill every requester
  /// instance (Simulation::choose_holder).
  std::vector<topo::GpuId> gpus;
  std::vector<topo::GpuId> slots;                    ///< each holder GPU once: its compute and copy streams
  std::vector<std::unique_ptr<ComputeUnit>> compute; ///< per slot
  std::vector<std::unique_ptr<StreamPool>> streams;  ///< per slot
  std::vector<int> index_of_gpu;                     ///< GPU -> slot, -1 if none
};

/// What a run's iterations count as they go; its results read them at the end.
struct RunCounts {
  std::uint64_t steps = 0, iterations = 0;
  Decisions decisions;                                ///< per chunk a step needed: how it was served
  std::uint64_t hbm_bound_steps = 0, hbm_waiting = 0; ///< MemoryCounters
  PrefillCounters prefill;
  std::vector<float> step_latency;
  std::vector<float> itl; ///< every gap between two tokens of a request
  /// Per GPU and step with tokens to decode, summed over the step's MoE rounds: its dispatch (the
  /// round's exchange start to its last incoming token) and its combine (its experts' end to its
  /// tokens' last result back), s.
  std::vector<float> ep_dispatch, ep_combine;
  double split_gemm = 0, split_moe = 0; ///< summed over request steps (summary step_split_s)
  std::uint64_t invariant_violations = 0;
  std::vector<std::string> problems; ///< the first few
};

class Simulation
{
public:
  /// `policy`: a name in the policy registry (the scenario loader checked it).
  Simulation(const Scenario& sc, const std::string& policy, const PlacedCorpus& corpus, SimulationOptions opt);
  ~Simulation();
  /// Runs to the end; returns this policy's summary (the `policies.NAME` object of summary.json
  /// plus `invariants`, `links` and `holders` for the driver).
  PolicyResult run();
  /// The figures so far, for a run stopped part-way (a signal, the memory guard): requests done,
  /// latencies of the steps and requests done, the simulated time reached; marked partial. Callable
  /// after run() threw.
  PolicyResult partial_results();

  struct Active;          ///< a request being decoded (state.hpp)
  struct Instance;        ///< a requester instance (state.hpp)
  struct PrefillInstance; ///< instances.prefill: a prefill instance (state.hpp)
  struct PrefillGroup;    ///< instances.prefill: the instances that iterate together (state.hpp)

  const Scenario& scenario() const { return sc_; }
  /// Later calls expected to attend chunk `key` on `in`: online, its active requests' (finished
  /// requests' mean output length); with `oracle`, their true remaining steps plus every read
  /// that requests yet to arrive on `in` will make (future.hpp).
  double reuse_estimate(const Instance& in, const Active& a, std::uint64_t key, bool oracle) const;
  /// Later calls expected from the later turns of request `a`'s session, to one of its chunks:
  /// the turns the sessions seen so far had past as many as it has had, times the share of a
  /// turn's chunks the next turn read again, times a request's expected steps and the chance a
  /// step selects a given block (online: session_history.hpp).
  double session_reuse(const Active& a) const;
  /// The path between two GPUs as the cost model sees it (relayed where the requester stripes).
  PathCost path_cost(topo::GpuId from, topo::GpuId to);
  /// One request's routed call from GPU `me` to holder GPU `holder`, one layer: `rows` query rows
  /// over `tokens` cached tokens, as the pricing gives it.
  ExchangePrice one_call(topo::GpuId me, topo::GpuId holder, double rows, double tokens);
  /// What a policy sees now around such a call from instance `in` to `holder`, with `copies`
  /// fetches from it planned this step and not asked for yet (policy::Need::load).
  policy::Load load_around(const Instance& in, topo::GpuId holder, double rows, double tokens, int copies);

  // What the iteration code (iteration.hpp, iteration_steps.hpp, moe.hpp, prefill_iteration.cpp)
  // works with: the run's parts and counts, and the calls back into the run it makes.
  struct Group; ///< the GPUs of one expert-parallel serving instance (moe.hpp)
  Network& network() { return *net_; }
  Posting& posting() { return *posting_; }
  Timeline* timeline() { return timeline_.get(); } ///< null unless a timeline was asked for
  policy::Policy& policy() { return *policy_; }
  const PlacedCorpus& placed_corpus() const { return placed_; }
  workloads::Corpus& corpus() { return *corpus_; }
  LoadRecorder& load() { return load_; }
  HolderGpus& holders() { return holders_; }
  RunCounts& counts() { return counts_; }
  std::vector<std::unique_ptr<Instance>>& instances() { return instances_; }
  std::vector<std::unique_ptr<Group>>& groups() { return groups_; }
  std::vector<std::unique_ptr<PrefillInstance>>& prefill_instances() { return prefill_instances_; }
  /// One MoE message from GPU `from` to GPU `to` carrying `pairs` token-expert pairs of each of
  /// `layers` MoE layers at once (step granularity), priced as DeepEP's kernels move it
  /// (sim::price_ep) in `streams` equal flows (sim::Flow), then `then`. Posted from the GPU: it
  /// never waits for a proxy.
  void send_ep(topo::GpuId from, topo::GpuId to, double pairs, double layers, int streams, EpOp op, Callback then);
  /// `work` seconds of prefill instance `p`'s compute, then `done`: on its GPUs' shared compute
  /// where they serve calls as holders (prefill.handoff none), else alone.
  void compute_on(int p, double work, Callback done);
  void start_iteration(int inst);
  /// A GPU of a group ended its step: the group's next step starts once all of them did.
  void group_member_done(int inst);
  void record_finished(Active& a, double finish);
  /// The holder instance a call or fetch of `chunk` by instance `inst` goes to this step.
  int choose_holder(int inst, std::uint64_t chunk);
  /// Holder instance `h` serves instance `inst` a routed call to `chunk` or a fetch of it: with
  /// engine.replication dynamic, a read that may earn the chunk a copy (replicate.cpp).
  void count_read(int inst, std::uint64_t chunk, int h);

private:
  /// Finished requests' mean output length (the engine's prior before the first): the steps a
  /// request is expected to take.
  double mean_output() const;

  void schedule_next_arrival();
  /// The requester instance request `r` goes to (router.cpp).
  int place_request(const workloads::Request& r);
  /// prefill.enabled: what request `r`'s prompt leaves `a` to prefill, the blocks it prefills kept
  /// in pool `pool` (its requester instance's, or with prefill.handoff none its prefill
  /// instance's: requester instances + its index) (prefill.cpp).
  void admit_prompt(Active& a, const workloads::Request& r, int pool);
  /// prefill.enabled: each instance's pool and host tier of prefilled chunks, and the time to read
  /// a chunk back from the host tier (prefill.cpp).
  void make_kv_pool();
  void on_arrival();
  /// Request `a` joins its instance's batch, which steps if it was idle (an expert-parallel group
  /// once start_idle_groups runs: every request of the instant joins its step).
  void enqueue(std::unique_ptr<Active> a);
  void start_idle_groups();
  // instances.prefill (handoff.cpp): the prefill pool's instances, a prompt's way there (the
  // instance with the fewest tokens left to prefill), its iterations of prefill chunks
  // (prefill_iteration.cpp, a data-parallel group's together), and the hand-off of its KV to its
  // requester instance, after which it decodes there.
  void make_prefill_pool();
  int pick_prefill_instance() const;
  void to_prefill_pool(std::unique_ptr<Active> a, int p);
  /// The next iteration of prefill group `g`, if any of its instances has prompts queued.
  void start_prefill(int g);
  /// Prefill instance `p` ended an iteration of `chunks` (its queue's first prompts' tokens).
  void end_prefill(int p, const std::vector<double>& chunks);
  /// Sends each layer's KV of `q`'s chunk of `tokens` tokens as prefill instance `p` computes it,
  /// over `work` seconds from now (prefill.handoff layer).
  void send_layers(Active* q, int p, double tokens, double work);
  /// Sends `tokens` tokens' KV of `layers` layers of `a`'s prompt from prefill instance `p` to its
  /// requester instance: each rank its share from a rank of `p`.
  void send_kv(Active* a, int p, double tokens, double layers);
  /// A hand-off's `tokens` tokens' worth of KV (one layer) from GPU `src` to GPU `dst`.
  MovePrice handoff_price(topo::GpuId src, topo::GpuId dst, double tokens);
  /// One transfer of `a`'s hand-off landed.
  void piece_landed(Active* a);
  /// `a` decodes on its requester instance once its prefill ended and all of its KV landed.
  void land_if_whole(Active* a);
  /// engine.step full with ep > 1: the instance's GPUs step together (moe.cpp).
  void start_group(int group);
  void finish_iteration(int inst);
  PolicyResult figures(); ///< the counts and statistics common to results() and partial_results()
  PolicyResult results();
  /// The run's invariants into `r.invariants`, and its busiest resource (docs/architecture.md,
  /// "Invariants").
  void check_invariants(PolicyResult& r) const;
  void write_links_csv(double makespan) const;   ///< opt_.links_csv: bytes and utilisation per link direction
  void write_holders_csv(double makespan) const; ///< opt_.holders_csv: per holder GPU

  /// Every holder instance with a copy of `chunk` into `out`: the placement's (its primary first),
  /// then those engine.replication made since.
  void holders_with(std::uint64_t chunk, std::vector<int>& out) const;
  /// Among holder instances `options` (each with a copy of a chunk), the one a call of instance
  /// `inst` goes to (engine.replica_choice).
  int pick_copy(int inst, const std::vector<int>& options);
  /// engine.replication dynamic: a new copy of `chunk`, from holder instance `from` (replicate.cpp).
  void replicate(int inst, std::uint64_t chunk, int from, const std::vector<int>& options);

  const Scenario& sc_;
  std::string policy_name_;
  std::unique_ptr<policy::Policy> policy_;
  const PlacedCorpus& placed_;
  SimulationOptions opt_;
  std::unique_ptr<simgrid::s4u::Engine> engine_;
  topo::Platform platform_;
  std::unique_ptr<Network> net_;
  std::unique_ptr<Posting> posting_; ///< when each message leaves its sender (posting.hpp)
  HolderGpus holders_;
  std::shared_ptr<workloads::Corpus> corpus_;
  std::unique_ptr<workloads::RequestSource> source_;
  workloads::Request pending_;
  bool pending_live_ = false;
  std::vector<std::unique_ptr<Instance>> instances_;
  std::vector<std::unique_ptr<PrefillInstance>> prefill_instances_; ///< instances.prefill
  std::vector<PrefillGroup> prefill_groups_;
  /// Prompts whose prefill ended and whose KV is still on its way, by request id.
  std::unordered_map<std::uint64_t, std::unique_ptr<Active>> handing_off_;
  std::vector<std::unique_ptr<Group>> groups_;
  /// Groups that requests arrived at this instant: started once the instant's arrivals are in.
  std::vector<int> idle_groups_;
  Homes homes_;
  std::unique_ptr<FutureReads> future_; ///< offline policies only
  FILE* requests_csv_ = nullptr;
  std::unique_ptr<Timeline> timeline_; ///< null unless a timeline was asked for

  // Statistics.
  std::uint64_t arrived_ = 0, finished_ = 0;
  RunCounts counts_;
  std::unique_ptr<KvPool> kv_pool_;    ///< prefill.enabled: where each chunk's KV lives
  std::unique_ptr<Replicas> replicas_; ///< engine.replication dynamic
  /// prefill.enabled: every block some prompt prefilled, and the request that first did.
  std::unordered_map<std::uint64_t, std::uint64_t> prefilled_blocks_;
  std::vector<float> ttft_, e2e_;   ///< per finished request
  std::vector<float> tpot_;         ///< per finished request with two tokens or more
  std::vector<float> handoff_wait_; ///< instances.prefill: per prompt, prefill end to its KV landed
  std::uint64_t good_ = 0;          ///< finished requests within every goodput bound
  double completed_output_ = 0;     ///< sum of output lengths of finished requests (predicate)
  SessionHistory sessions_;         ///< the turns seen so far, by session (session_reuse)
  LoadRecorder load_;               ///< offered against delivered load (load.hpp)
  double last_progress_ = 0;        ///< wall time of the last progress line
  bool progress_shown_ = false;
};

} // namespace xattn::sim::engine
