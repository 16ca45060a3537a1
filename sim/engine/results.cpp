// The end of a simulation: statistics, invariants (sim/engine/README.md, "Invariants"), CSV fragments.
#include "sim/engine/clock.hpp"
#include "sim/engine/replicas.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/engine/state.hpp"

#include "sim/core/check.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

namespace xattn::sim::engine
{
namespace
{

LatencyStats latency_stats(std::vector<float>& v)
{
  LatencyStats st;
  if (v.empty()) return st;
  double sum = 0;
  for (float x : v)
    sum += x;
  auto q = [&v](double f) {
    // Nearest-rank quantile: the smallest value with at least f of the samples at or below it.
    auto k = static_cast<std::size_t>(std::ceil(f * static_cast<double>(v.size()))) - 1;
    k = std::min(k, v.size() - 1);
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
    return static_cast<double>(v[k]);
  };
  st.mean = sum / static_cast<double>(v.size());
  st.p50 = q(0.50);
  st.p90 = q(0.90);
  st.p99 = q(0.99);
  st.max = static_cast<double>(*std::max_element(v.begin(), v.end()));
  return st;
}

// Bytes per fabric class, for the conservation invariant's message.
std::string bytes_line(const std::array<double, core::kAllFabrics.size()>& by_fabric)
{
  std::string out;
  for (core::FabricClass f : core::kAllFabrics)
    out += (out.empty() ? "" : " ") + std::string(core::to_string(f)) + " " +
           std::to_string(by_fabric[static_cast<std::size_t>(f)]);
  return out;
}

} // namespace

PolicyResult Simulation::figures()
{
  const NetworkStats& ns = net_->stats();
  XATTN_CHECK(finished_ <= arrived_, "more requests finished than arrived");
  PolicyResult r;
  r.requests = finished_;
  r.arrived = arrived_;
  r.steps = counts_.steps;
  r.iterations = counts_.iterations;
  r.step_latency_s = latency_stats(counts_.step_latency);
  r.ttft_s = latency_stats(ttft_);
  r.tpot_s = latency_stats(tpot_);
  r.itl_s = latency_stats(counts_.itl);
  r.e2e_s = latency_stats(e2e_);
  r.handoff_wait_s = latency_stats(handoff_wait_);
  r.goodput.bounds = sc_.goodput;
  // Over the requests that made a token (one with no output has no TTFT).
  if (!ttft_.empty()) r.goodput.share = static_cast<double>(good_) / static_cast<double>(ttft_.size());
  if (now() > 0) r.goodput.requests_per_s = static_cast<double>(good_) / now();
  r.expert_parallel = sc_.grouped();
  r.full_step = sc_.full_step;
  if (counts_.steps > 0) {
    r.split_gemm_s = counts_.split_gemm / static_cast<double>(counts_.steps);
    r.split_moe_s = counts_.split_moe / static_cast<double>(counts_.steps);
    r.split_attention_s = std::max(0.0, r.step_latency_s.mean - r.split_gemm_s - r.split_moe_s);
  }
  r.ep_dispatch_s = latency_stats(counts_.ep_dispatch);
  r.ep_combine_s = latency_stats(counts_.ep_combine);
  r.interference = sc_.interference;
  {
    double steps = 0, held = 0;
    for (const auto& in : instances_) {
      if (std::none_of(in->own.begin(), in->own.end(), [](const OwnCompute& c) { return c.shared(); })) continue;
      double delay = 0;
      for (const OwnCompute& c : in->own)
        delay = std::max(delay, c.delay());
      steps += in->step_s;
      held += delay;
    }
    if (steps > held && held > 0) r.holder_tpot_inflation = steps / (steps - held);
  }
  std::vector<topo::GpuId> gpus = sc_.requesters;
  gpus.insert(gpus.end(), sc_.holders.begin(), sc_.holders.end());
  std::sort(gpus.begin(), gpus.end());
  gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());
  r.load = load_.figures(sc_.overload_tolerance, gpus.size());
  if (now() > 0 && !gpus.empty())
    r.output_tokens_per_s_per_gpu = static_cast<double>(counts_.steps) / now() / static_cast<double>(gpus.size());
  double wire = 0;
  for (core::FabricClass f : core::kAllFabrics) {
    const double b = ns.bytes_by_fabric[static_cast<std::size_t>(f)];
    wire += b;
    r.wire_bytes_by_fabric[static_cast<std::size_t>(f)] = static_cast<std::uint64_t>(std::llround(b));
  }
  r.wire_bytes = static_cast<std::uint64_t>(std::llround(wire));
  r.decisions = counts_.decisions;
  r.simulated_time_s = now();
  r.engine = {.transfers = ns.transfers,
              .fluid = ns.fluid,
              .simgrid = ns.simgrid,
              .resolves = ns.resolves,
              .resolved = ns.resolved,
              .widest_resolve = ns.widest,
              .max_in_flight = ns.max_in_flight,
              .simgrid_comms = ns.comms,
              .max_comms_in_flight = ns.max_comms_in_flight,
              .relayed = ns.relayed};
  r.prefill = sc_.prefill.enabled;
  r.prefill_counts = counts_.prefill;
  if (kv_pool_) {
    r.prefill_counts.pool_chunks = kv_pool_->capacity();
    r.prefill_counts.host_chunks = kv_pool_->host_capacity(0);
    r.pools = kv_pool_->counts();
  }
  r.memory.hbm_bound_steps = counts_.hbm_bound_steps;
  r.memory.hbm_waiting = counts_.hbm_waiting;
  for (const auto& in : instances_)
    r.memory.cache_evictions += in->cache->evictions();
  if (replicas_) {
    r.memory.replica_copies = replicas_->made();
    r.memory.replica_evictions = replicas_->evicted();
  }
  r.skipped_trace_entries = source_->skipped();
  return r;
}

PolicyResult Simulation::partial_results()
{
  PolicyResult r = figures();
  r.partial = true;
  // Only the checks that hold part-way: unfinished requests are expected, bytes may be in flight.
  Invariants& inv = r.invariants;
  inv.problems = counts_.problems;
  inv.unfinished = arrived_ - finished_;
  inv.all_requests_finished = inv.unfinished == 0;
  inv.step_bound_violations = counts_.invariant_violations;
  inv.ok = inv.problems.empty() && counts_.invariant_violations == 0;
  return r;
}

PolicyResult Simulation::results()
{
  PolicyResult r = figures();
  check_invariants(r);
  const double makespan = std::max(now(), 1e-12);
  if (!opt_.links_csv.empty()) write_links_csv(makespan);
  if (!opt_.holders_csv.empty()) write_holders_csv(makespan);
  return r;
}

void Simulation::check_invariants(PolicyResult& r) const
{
  const NetworkStats& ns = net_->stats();
  // Invariants (docs/architecture.md, "Invariants"); each problem starts with the invariant's name.
  Invariants& inv = r.invariants;
  inv.problems = counts_.problems;
  const std::uint64_t unfinished = arrived_ - finished_;
  if (unfinished > 0) {
    std::string ids;
    int shown = 0;
    for (const auto& in : instances_)
      for (const auto& a : in->active)
        if (shown++ < 10) ids += (ids.empty() ? "" : ", ") + std::to_string(a->id);
    inv.problems.push_back(invariant_problem(kRequestsFinished, std::to_string(unfinished) + " of " +
                                                                    std::to_string(arrived_) +
                                                                    " requests arrived but did not finish (the "
                                                                    "simulation stalled): " +
                                                                    ids));
  }
  bool bytes_ok = std::abs(ns.simgrid_bytes_handed - ns.simgrid_bytes_completed) <= 0.5;
  for (std::size_t f = 0; f < ns.bytes_by_fabric.size(); ++f)
    bytes_ok = bytes_ok && std::abs(ns.bytes_by_fabric[f] - ns.bytes_done_by_fabric[f]) <=
                               1e-6 * std::max(1.0, ns.bytes_by_fabric[f]);
  if (!bytes_ok)
    inv.problems.push_back(invariant_problem(
        kBytesAccounted, "bytes not conserved: handed to transfers " + bytes_line(ns.bytes_by_fabric) + ", arrived " +
                             bytes_line(ns.bytes_done_by_fabric) + "; handed to SimGrid " +
                             std::to_string(ns.simgrid_bytes_handed) + ", SimGrid completed " +
                             std::to_string(ns.simgrid_bytes_completed)));
  bool caches_ok = true;
  for (const auto& in : instances_) {
    // Within rounding of the sums of entry sizes.
    if (in->cache->peak() <= in->cache->budget() * (1 + 1e-9)) continue;
    caches_ok = false;
    inv.problems.push_back(
        invariant_problem(kCachesWithinBudget, "requester " + std::to_string(in->index) + "'s cache held " +
                                                   std::to_string(in->cache->peak()) + " bytes, over its budget of " +
                                                   std::to_string(in->cache->budget()) + " (engine.cache_budget)"));
  }
  // No GPU computed for longer than the run lasted: a holder's kernels used at most one GPU's
  // time (the sum of their full-speed durations x shares), a requester's own work ran one piece
  // at a time. Within rounding of the sums.
  bool gpus_ok = true;
  const double wall = now();
  int gpu_problems = 0; // listed up to 10, whatever other invariants listed before
  auto within = [&](double used, const std::string& gpu) {
    if (used <= wall * (1 + 1e-9) + 1e-12) return;
    gpus_ok = false;
    if (gpu_problems++ < 10)
      inv.problems.push_back(invariant_problem(kGpusWithinWall, gpu + " computed for " + std::to_string(used) +
                                                                    " s of GPU time in a run of " +
                                                                    std::to_string(wall) + " s"));
  };
  // The busiest resource: where a queue grows when its share of the run nears 1.
  auto busiest = [&](double used, auto name) {
    const double share = used / std::max(wall, 1e-12);
    if (share > r.busiest_share) r.busiest_share = share, r.busiest = name();
  };
  for (std::size_t i = 0; i < holders_.slots.size(); ++i) {
    const double used = holders_.compute[i]->stats().gpu_s;
    within(used, "holder " + sc_.topology->gpu_name(holders_.slots[i]));
    busiest(used, [&] { return "holder " + sc_.topology->gpu_name(holders_.slots[i]) + " kernels"; });
  }
  for (const auto& in : instances_)
    for (std::size_t k = 0; k < in->gpus.size(); ++k) {
      within(in->own[k].busy(), "requester " + sc_.topology->gpu_name(in->gpus[k]));
      busiest(in->own[k].busy(), [&] { return "requester " + sc_.topology->gpu_name(in->gpus[k]) + " compute"; });
    }
  {
    const auto& bytes = net_->link_bytes();
    for (topo::LinkId id = 0; id < sc_.topology->link_count(); ++id)
      for (int d = 0; d < 2; ++d) {
        const topo::Link& l = sc_.topology->link(id);
        busiest(bytes[2 * id + d] / l.bandwidth.value(), [&] { return "link " + l.name + (d == 0 ? " up" : " down"); });
      }
  }
  inv.gpus_within_wall = gpus_ok;
  inv.all_requests_finished = unfinished == 0;
  inv.unfinished = unfinished;
  inv.bytes_accounted = bytes_ok;
  inv.caches_within_budget = caches_ok;
  inv.simgrid_bytes_handed = ns.simgrid_bytes_handed;
  inv.simgrid_bytes_completed = ns.simgrid_bytes_completed;
  inv.step_bound_violations = counts_.invariant_violations;
  inv.ok = inv.problems.empty() && counts_.invariant_violations == 0;
}

void Simulation::write_links_csv(double makespan) const
{
  FILE* f = std::fopen(opt_.links_csv.c_str(), "w");
  if (f == nullptr) core::fail(opt_.links_csv, 0, 0, "", "cannot write");
  const std::string& pol = policy_name_;
  const auto& bytes = net_->link_bytes();
  for (topo::LinkId id = 0; id < sc_.topology->link_count(); ++id)
    for (int d = 0; d < 2; ++d) {
      const double b = bytes[2 * id + d];
      if (b <= 0) continue;
      const topo::Link& l = sc_.topology->link(id);
      std::fprintf(f, "%s,%s,%s,%s,%.0f,%.9g\n", pol.c_str(), l.name.c_str(), d == 0 ? "up" : "down",
                   std::string(topo::to_string(l.kind)).c_str(), b, b / (l.bandwidth.value() * makespan));
    }
  std::fclose(f);
}

void Simulation::write_holders_csv(double makespan) const
{
  FILE* f = std::fopen(opt_.holders_csv.c_str(), "w");
  if (f == nullptr) core::fail(opt_.holders_csv, 0, 0, "", "cannot write");
  const std::string& pol = policy_name_;
  // A holder that decodes too: its own compute (own_compute.hpp), by GPU.
  std::vector<const OwnCompute*> own(sc_.topology->gpu_count(), nullptr);
  for (const auto& in : instances_)
    for (std::size_t k = 0; k < in->gpus.size(); ++k)
      own[in->gpus[k]] = &in->own[k];
  for (std::size_t i = 0; i < holders_.slots.size(); ++i) {
    const ComputeStats& c = holders_.compute[i]->stats();
    const StreamStats& s = holders_.streams[i]->stats();
    const OwnCompute* mine = own[holders_.slots[i]];
    std::fprintf(f, "%s,%s,%llu,%.9g,%.9g,%.9g,%d,%llu,%.9g,%d,%.9g,%.9g\n", pol.c_str(),
                 sc_.topology->gpu_name(holders_.slots[i]).c_str(), static_cast<unsigned long long>(c.kernels),
                 c.busy_s / makespan, c.work_s, c.delay_s, c.max_concurrent, static_cast<unsigned long long>(s.copies),
                 s.wait_s, s.max_queue, mine != nullptr ? mine->busy() : 0.0, mine != nullptr ? mine->delay() : 0.0);
  }
  std::fclose(f);
}

} // namespace xattn::sim::engine
