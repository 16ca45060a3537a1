#include "sim/engine/simulation.hpp"
#include "sim/engine/prefill_pool.hpp"
#include "sim/engine/replicas.hpp"

#include "sim/engine/clock.hpp"
#include "sim/engine/future.hpp"
#include "sim/engine/iteration.hpp"
#include "sim/engine/moe.hpp"
#include "sim/engine/source.hpp"
#include "sim/engine/state.hpp"
#include "sim/engine/stop.hpp"

#include "sim/core/check.hpp"

#include <xbt/log.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <unistd.h>

XBT_LOG_NEW_DEFAULT_CATEGORY(xattn_engine, "xattn simulation engine");

namespace xattn::sim::engine
{
namespace
{
double wall_now()
{
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
} // namespace

PlacedCorpus place_corpus(const Scenario& sc)
{
  PlacedCorpus placed;
  auto src = open_workload(sc);
  workloads::Request r;
  if (!src->next(r)) core::fail(sc.file, 0, 0, "workload", "the workload has no requests");
  placed.block_tokens = r.block_tokens;
  if (placed.block_tokens <= 0)
    core::fail(sc.file, 0, 0, "workload.trace",
               "this trace has no block ids (an arrivals-only trace such as Azure's): use workload.generator");
  if (std::string under = budget_under_block(sc, placed.block_tokens); !under.empty())
    core::fail(sc.file, 0, 0, "prefill.max_num_batched_tokens", under);
  check_decode_room(sc);
  if (sc.corpus.chunk_tokens % placed.block_tokens != 0)
    core::fail(sc.file, 0, 0, "corpus.chunk_tokens",
               "c_t = " + std::to_string(sc.corpus.chunk_tokens) + " is not a multiple of the trace's " +
                   std::to_string(placed.block_tokens) + "-token blocks");
  const bool need_scan = sc.corpus.prescan || sc.corpus.placement == workloads::PlacementStrategy::kContiguous ||
                         sc.corpus.placement == workloads::PlacementStrategy::kHotReplicated;
  if (need_scan) {
    // Copies repeat one copy's blocks: scanning one finds the same chunks in the same order, each
    // referenced `copies` times as often, hence the same hot set (unless max_requests cuts the
    // stream part-way through the copies).
    auto again = open_workload(sc, sc.workload.max_requests == 0 ? Copies::kOne : Copies::kAll);
    workloads::CorpusScan scan = workloads::prescan(*again, sc.corpus.chunk_tokens, placed.block_tokens);
    placed.total_chunks = scan.corpus.chunks();
    placed.hot_chunks = scan.hot_chunks(sc.corpus.hot_set_fraction); // also the selection's hot blocks
    placed.corpus = std::make_shared<workloads::Corpus>(std::move(scan.corpus));
  }
  placed.placement = std::make_shared<workloads::Placement>(sc.corpus, placed.total_chunks, placed.hot_chunks);
  // The holders must hold the whole shared corpus the generator or the batch declares, read or not
  // (a live system cannot know which chunks will be read); a scanned trace's chunks are all it has.
  const std::int64_t declared_tokens = sc.workload.generator ? sc.workload.generator->corpus_tokens
                                       : sc.workload.batch   ? sc.workload.batch->corpus_tokens()
                                                             : 0;
  const auto declared =
      static_cast<std::uint64_t>((declared_tokens + sc.corpus.chunk_tokens - 1) / sc.corpus.chunk_tokens);
  const std::uint64_t chunks = std::max(placed.total_chunks, declared);
  if (need_scan || declared > 0)
    workloads::check_capacity(*placed.placement, chunks, sc.corpus,
                              sc.model.kv_per_token_on_rank(sc.tp) * static_cast<double>(sc.model.layers), sc.file);
  // Index keys on the requester: a copy of those of every chunk a request may read, beside the
  // weights and the cache.
  if (sc.selection.sparse && sc.selection.index_on_requester && chunks > 0) {
    const double tokens = static_cast<double>(chunks) * static_cast<double>(sc.corpus.chunk_tokens);
    placed.index_copy = sc.model.index_key_per_token() * (tokens * sc.model.layers);
    if (sc.batch_hbm.value() > 0 && placed.index_copy >= sc.batch_hbm)
      throw core::FitError(core::Diagnostic{
          sc.file, 0, 0, "selection.index_keys",
          "a requester keeps a copy of the index keys of the " + std::to_string(chunks) + " chunks of " +
              std::to_string(sc.corpus.chunk_tokens) + " tokens its requests may read (" +
              core::format_bytes(sc.model.index_key_per_token()) + " a token and layer, " +
              std::to_string(sc.model.layers) + " layers): " + core::format_bytes(placed.index_copy) +
              ", more than the " + core::format_bytes(sc.batch_hbm) +
              " its GPU has beside the weights and engine.cache_budget (gpu.hbm_capacity of profile '" +
              sc.profile.name +
              "'): keep them with the holders (index_keys: holders) or lower the cache "
              "budget"});
  }
  return placed;
}

Simulation::Simulation(const Scenario& sc, const std::string& policy, const PlacedCorpus& placed, SimulationOptions opt)
    : sc_(sc), policy_name_(policy), policy_(policy::make(sc.policy_info(policy), sc.policy_params(policy))),
      placed_(placed), opt_(std::move(opt)), homes_(sc.requester_instances(), sc.router.policy == Router::kRoundRobin)
{
  if (sc.policy_info(policy).offline) future_ = std::make_unique<FutureReads>(sc, placed);
  // SimGrid solves max-min sharing and dates its events to 1e-5 by default: enough to make two
  // otherwise equal runs of a congested cluster pick different batches (docs/architecture.md,
  // "Fused and all-SimGrid"). The reference path solves to 1e-10, as the engine's own solver
  // solves to 1e-9 (MaxMinSolver::kAtCap).
  int argc = 4;
  const char* argv[5] = {"xattn", "--log=root.thresh:warning", "--cfg=maxmin/precision:1e-10",
                         "--cfg=surf/precision:1e-10", nullptr};
  engine_ = std::make_unique<simgrid::s4u::Engine>(&argc, const_cast<char**>(argv));
  if (opt_.catch_signals) StopSignals::reinstall();
  topo::HostSpec host;
  // One dispatch link per GPU and class (InfiniBand: one for both IB classes, whose block rates a
  // profile keeps equal: one thread block issues both).
  host.dispatch = {sc.profile.fabric(core::FabricClass::kNvlink).block_rate,
                   sc.profile.fabric(core::FabricClass::kPcie).block_rate,
                   sc.profile.fabric(core::FabricClass::kIbSpine).block_rate};
  host.copy_engine_hosts = true;
  if (sc.requester_nics_node)
    // A GPU that also holds chunks keeps its own NIC: the relay must sit on the requester's side
    // of every exchange, and such a GPU is on both sides.
    for (topo::GpuId g : sc.requesters)
      if (std::find(sc.holders.begin(), sc.holders.end(), g) == sc.holders.end()) host.striping.push_back(g);
  platform_ = topo::build_platform(*sc.topology, *engine_, host);
  // Latency is the engine's delay (a transfer's tail), not SimGrid's: both paths pay it once.
  for (simgrid::s4u::Link* l : platform_.links)
    l->set_latency(0);
  net_ = std::make_unique<Network>(*sc.topology, platform_, sc.fast_path);
  posting_ = std::make_unique<Posting>(sc.profile, *sc.topology);
  net_->set_check_solver(sc.check_solver);

  // The corpus holders' instances, then with prefill every requester instance: a chunk lives where
  // it was prefilled, and a call to it goes there.
  holders_.gpus = sc.holders;
  if (sc.prefill.enabled) holders_.gpus.insert(holders_.gpus.end(), sc.requesters.begin(), sc.requesters.end());
  if (sc.prefill.kept_in_pool()) // the prefill instances' pools are called too
    holders_.gpus.insert(holders_.gpus.end(), sc.prefill.pool.begin(), sc.prefill.pool.end());
  holders_.index_of_gpu.assign(sc.topology->gpu_count(), -1);
  for (topo::GpuId g : holders_.gpus) {
    if (holders_.index_of_gpu[g] >= 0) continue; // a requester that holds corpus chunks too
    holders_.index_of_gpu[g] = static_cast<int>(holders_.slots.size());
    holders_.slots.push_back(g);
    holders_.compute.push_back(std::make_unique<ComputeUnit>());
    holders_.streams.push_back(std::make_unique<StreamPool>(sc.profile.copy_streams));
  }
  if (sc.replication.on)
    replicas_ = std::make_unique<Replicas>(sc.holder_instances(), sc.replication.budget_B, sc.replication.after,
                                           sc.replication.max_copies);
  for (int i = 0; i < sc.requester_instances(); ++i) {
    auto in = std::make_unique<Instance>();
    in->index = i;
    in->gpus.assign(sc.requesters.begin() + i * sc.tp, sc.requesters.begin() + (i + 1) * sc.tp);
    in->cache = std::make_unique<LruCache>(sc.cache_budget.value());
    for (topo::GpuId g : in->gpus) // engine.interference: a GPU that serves calls shares its compute with them
      in->own.emplace_back(sc.interference && holders_.index_of_gpu[g] >= 0
                               ? holders_.compute[static_cast<std::size_t>(holders_.index_of_gpu[g])].get()
                               : nullptr);
    instances_.push_back(std::move(in));
  }
  if (sc.grouped())
    for (int g = 0; g < sc.requester_instances() / sc.dp_attention; ++g) {
      auto group = std::make_unique<Group>();
      for (int k = 0; k < sc.dp_attention; ++k) {
        group->members.push_back(g * sc.dp_attention + k);
        instances_[g * sc.dp_attention + k]->group = g;
      }
      if (sc.expert_routing.mode != ExpertRouting::kExpected) // each group its own stream of draws
        group->draws = std::make_unique<ExpertDraws>(sc.model, sc.ep, sc.expert_routing, sc.seed, g);
      groups_.push_back(std::move(group));
    }
  if (sc.prefill.enabled) make_kv_pool();
  if (sc.prefill.disaggregated()) make_prefill_pool();
  corpus_ = placed.corpus ? std::make_shared<workloads::Corpus>(*placed.corpus)
                          : std::make_shared<workloads::Corpus>(sc.corpus.chunk_tokens, placed.block_tokens);
  source_ = open_workload(sc);
  if (!opt_.timeline.path.empty()) timeline_ = std::make_unique<Timeline>(opt_.timeline, policy_name_, sc, *net_);
  if (!opt_.requests_csv.empty()) {
    requests_csv_ = std::fopen(opt_.requests_csv.c_str(), "w");
    if (requests_csv_ == nullptr) core::fail(opt_.requests_csv, 0, 0, "", "cannot write");
  }
}

Simulation::~Simulation()
{
  if (requests_csv_ != nullptr) std::fclose(requests_csv_);
}

PolicyResult Simulation::run()
{
  last_progress_ = wall_now();
  pending_live_ = source_->next(pending_);
  if (pending_live_) after(pending_.arrival.value(), [this] { on_arrival(); });
  if (sc_.fast_path)
    run_events(); // SimGrid moves nothing: its main loop would only follow the queue's dates
  else
    engine_->run();
  if (timeline_) timeline_->finish();
  if (progress_shown_ && isatty(STDERR_FILENO)) std::fputc('\n', stderr); // end the line rewritten in place
  return results();
}

void Simulation::schedule_next_arrival()
{
  pending_live_ = source_->next(pending_);
  if (!pending_live_) return;
  after(std::max(0.0, pending_.arrival.value() - now()), [this] { on_arrival(); });
}

void Simulation::on_arrival()
{
  XATTN_CHECK(pending_live_ && pending_.arrival.value() <= now() * (1 + 1e-12) + 1e-12,
              "a request arrives at the time the stream gave it");
  auto a = std::make_unique<Active>(pending_, sc_, *corpus_, placed_.hot_chunks);
  ++arrived_;
  sessions_.arrive(a->session, a->sorted_chunks);
  load_.arrival(now(), static_cast<double>(std::max<std::int64_t>(0, a->steps_total)));
  a->home = place_request(pending_);
  const int p = sc_.prefill.disaggregated() ? pick_prefill_instance() : -1;
  if (sc_.prefill.enabled)
    admit_prompt(*a, pending_, p >= 0 && sc_.prefill.kept_in_pool() ? sc_.requester_instances() + p : a->home);
  if (a->steps_total <= 0) {
    // Nothing to decode: done on arrival.
    record_finished(*a, now());
  } else if (p >= 0) {
    to_prefill_pool(std::move(a), p);
  } else {
    enqueue(std::move(a));
  }
  schedule_next_arrival();
  if (!(pending_live_ && pending_.arrival.value() <= now() * (1 + 1e-12) + 1e-12)) start_idle_groups();
  // Progress for runs longer than a few seconds: rewritten in place on a terminal, one line per
  // 10 s in a log.
  const bool tty = isatty(STDERR_FILENO) != 0;
  if (opt_.progress && wall_now() - last_progress_ > (tty ? 2.0 : 10.0)) {
    last_progress_ = wall_now();
    std::fprintf(stderr, "%s[%s] simulated %.1f s, %llu requests arrived, %llu finished, %llu steps%s", tty ? "\r" : "",
                 policy_name_.c_str(), now(), static_cast<unsigned long long>(arrived_),
                 static_cast<unsigned long long>(finished_), static_cast<unsigned long long>(counts_.steps),
                 tty ? "   " : "\n");
    progress_shown_ = true;
  }
}

void Simulation::enqueue(std::unique_ptr<Active> a)
{
  const int inst = a->home;
  Instance& in = *instances_[inst];
  in.active.push_back(std::move(a));
  if (in.group >= 0) {
    // An expert-parallel group's step takes every request that arrives at this instant (started
    // once the instant's arrivals are in: on_arrival); a hand-off that lands starts it at once.
    if (!in.busy && std::find(idle_groups_.begin(), idle_groups_.end(), in.group) == idle_groups_.end())
      idle_groups_.push_back(in.group);
  } else if (!in.busy) {
    start_iteration(inst);
  }
}

void Simulation::start_idle_groups()
{
  for (int g : idle_groups_)
    if (!instances_[groups_[g]->members.front()]->busy) start_group(g); // not started since by a step's end
  idle_groups_.clear();
}

void Simulation::start_iteration(int inst)
{
  Instance& in = *instances_[inst];
  if (in.group >= 0) {
    start_group(in.group);
    return;
  }
  if (in.active.empty()) {
    in.busy = false;
    if (timeline_ && std::none_of(instances_.begin(), instances_.end(), [](const auto& i) { return i->busy; }))
      timeline_->idle();
    return;
  }
  in.busy = true;
  if (timeline_) timeline_->busy();
  ++counts_.iterations;
  IterationRunner::start(*this, inst);
}

void Simulation::record_finished(Active& a, double finish)
{
  if (kv_pool_)
    for (std::uint64_t c : a.chunks)
      kv_pool_->unpin(c);
  ++finished_;
  load_.finished(finish);
  completed_output_ += static_cast<double>(a.steps_total);
  // The request's figures in RequestFigure's order; TPOT is 0 with one token, as vLLM counts it.
  const double tpot = a.steps_done >= 2 ? (finish - a.first_token) / static_cast<double>(a.steps_done - 1) : 0.0;
  const std::array<double, kRequestFigures.size()> figure{a.steps_done > 0 ? a.first_token - a.arrival : 0.0, tpot,
                                                          finish - a.arrival};
  e2e_.push_back(static_cast<float>(figure[static_cast<std::size_t>(RequestFigure::kE2e)]));
  if (a.steps_done >= 1) ttft_.push_back(static_cast<float>(figure[static_cast<std::size_t>(RequestFigure::kTtft)]));
  if (a.steps_done >= 2) tpot_.push_back(static_cast<float>(tpot));
  const bool good =
      a.steps_done >= 1 && std::all_of(sc_.goodput.begin(), sc_.goodput.end(), [&](const RequestBound& b) {
        return figure[static_cast<std::size_t>(b.figure)] <= b.max_s;
      });
  good_ += good ? 1 : 0;
  if (requests_csv_ != nullptr)
    std::fprintf(requests_csv_,
                 "%s,%llu,%llu,%llu,%d,%.9g,%.9g,%.9g,%lld,%.9g,%.9g,%llu,%llu,%llu,%llu,%.9g,%.9g,%.9g,%d\n",
                 policy_name_.c_str(), static_cast<unsigned long long>(a.id),
                 static_cast<unsigned long long>(a.session), static_cast<unsigned long long>(a.agent), a.home,
                 a.arrival, a.first_start < 0 ? a.arrival : a.first_start, finish, static_cast<long long>(a.steps_done),
                 a.steps_done > 0 ? a.sum_step / static_cast<double>(a.steps_done) : 0.0, a.max_step,
                 static_cast<unsigned long long>(a.routed), static_cast<unsigned long long>(a.fetched),
                 static_cast<unsigned long long>(a.prefilled), static_cast<unsigned long long>(a.cached), figure[0],
                 figure[1], figure[2], good ? 1 : 0);
}

PathCost Simulation::path_cost(topo::GpuId from, topo::GpuId to)
{
  return net_->path_cost(from, to); // relayed where the requester stripes
}

ExchangePrice Simulation::one_call(topo::GpuId me, topo::GpuId holder, double rows, double tokens)
{
  const ExchangeShape one{rows, tokens, tokens * rows, 1, sc_.selection.sparse};
  return price_exchange(sc_.model, sc_.profile, one, path_cost(me, holder), path_cost(holder, me),
                        iteration::pricing_options(sc_));
}

policy::Load Simulation::load_around(const Instance& in, topo::GpuId holder, double rows, double tokens, int copies)
{
  const auto slot = static_cast<std::size_t>(holders_.index_of_gpu[holder]);
  const Network::Busy path = net_->busiest(in.gpus[0], holder);
  return {.route_slowdown = holders_.compute[slot]->slowdown(one_call(in.gpus[0], holder, rows, tokens).kernel.share),
          .path_busy = path.share,
          .path_flows = path.flows,
          .fetch_queue = holders_.streams[slot]->ahead(copies)};
}

int Simulation::choose_holder(int inst, std::uint64_t chunk)
{
  if (kv_pool_) { // where it was prefilled, here first (pinned while this request is served)
    const int home = kv_pool_->home(chunk, inst);
    XATTN_CHECK(home >= 0, "a chunk a request attends lives in no pool");
    return sc_.holder_instances() + home;
  }
  if (sc_.corpus.placement != workloads::PlacementStrategy::kHotReplicated && !replicas_)
    return placed_.placement->primary(chunk);
  thread_local std::vector<int> options;
  holders_with(chunk, options);
  return pick_copy(inst, options);
}

void Simulation::holders_with(std::uint64_t chunk, std::vector<int>& out) const
{
  placed_.placement->holders_of(chunk, out);
  XATTN_CHECK(!out.empty(), "a chunk has no holder");
  if (!replicas_) return;
  const std::vector<int>& copies = replicas_->copies(chunk);
  out.insert(out.end(), copies.begin(), copies.end());
}

int Simulation::pick_copy(int inst, const std::vector<int>& options)
{
  const topo::GpuId me = instances_[inst]->gpus[0];
  int best = options[0];
  if (!sc_.replica_by_load) { // the nearest replica (fabric class order), the primary among equals
    auto rank = [&](int h) { return static_cast<int>(sc_.topology->fabric_class(me, sc_.holders[h * sc_.tp])); };
    for (int h : options)
      if (rank(h) < rank(best)) best = h;
    return best;
  }
  // The replica whose routed call would end first if sent now: one request's call to the whole
  // chunk (one layer), idle on its path, plus what the kernels running on that holder slow its
  // kernel by (processor sharing, compute.hpp); the primary among equals. Every policy's calls and
  // fetches of the chunk go there this step.
  const double rows = static_cast<double>(sc_.model.heads) / sc_.tp;
  double least = std::numeric_limits<double>::infinity();
  for (int h : options) {
    const topo::GpuId gpu = sc_.holders[h * sc_.tp];
    const ExchangePrice x = one_call(me, gpu, rows, static_cast<double>(sc_.corpus.chunk_tokens));
    const ComputeUnit& unit = *holders_.compute[static_cast<std::size_t>(holders_.index_of_gpu[gpu])];
    const double end = x.idle().value() + x.kernel.work.value() * (unit.slowdown(x.kernel.share) - 1);
    if (end < least) least = end, best = h;
  }
  return best;
}

double Simulation::mean_output() const
{
  return finished_ > 0 ? completed_output_ / static_cast<double>(finished_) : sc_.prior_steps(policy_name_);
}

double Simulation::session_reuse(const Active& a) const
{
  return sessions_.remaining_turns(sessions_.turns(a.session)) * sessions_.carried() * mean_output() *
         a.select_probability;
}

double Simulation::reuse_estimate(const Instance& in, const Active& a, std::uint64_t chunk, bool oracle) const
{
  const double mean_output = this->mean_output();
  double reuse = 0;
  for (const auto& other : in.active) {
    if (!std::binary_search(other->sorted_chunks.begin(), other->sorted_chunks.end(), chunk)) continue;
    const double done = static_cast<double>(other->steps_done);
    const double remaining =
        oracle ? static_cast<double>(other->steps_total) - done - 1.0 : std::max(1.0, mean_output - done);
    // This step's use is the current call, not a reuse.
    reuse += std::max(0.0, remaining) * other->select_probability;
  }
  (void)a;
  if (oracle && future_) reuse += future_->after(in.index, chunk, arrived_);
  return std::max(0.0, reuse);
}

} // namespace xattn::sim::engine
