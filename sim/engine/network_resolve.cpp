// The re-solve (network.hpp): which flows an event's set reaches, and the check that grows it until
// the rates it gives are max-min fair with the flows left outside.
#include "sim/engine/network.hpp"

#include "sim/core/check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace xattn::sim::engine
{

bool Network::reach(std::uint32_t id, double t)
{
  Fluid& f = fluid_[id];
  if (f.mark == epoch_) return false;
  f.left -= f.rate * (t - f.stamp);
  f.stamp = t;
  // Its last byte moves at this instant: it leaves the links now, and that is an event of its own.
  if (f.end <= t) return false;
  f.mark = epoch_;
  set_.push_back(id); // the solver's flow set_.size() - 1 (add_flow below)
  // Into the solve, with the links it crosses that can bind (each is listed once, when the first
  // flow of the set that crosses it joins; the others its route crosses are never read).
  Hops crossed;
  std::uint32_t n = 0;
  for_binding(id, [&](std::uint32_t r) {
    const Look& k = look_[r];
    if (k.epoch != epoch_) look_at(r);
    crossed[n++] = k.local;
  });
  solver_.add_flow(f.weight, f.cap, {crossed.data(), n});
  return true;
}

double Network::top_level(const Resource& res) const
{
  // Flows at their caps are left out: one that arrived at this instant, fitting in what a flow
  // leaving at this instant freed, may run faster than those the link held back (who then rise,
  // and it joins them).
  double top = 0;
  for (const OnLink& on : res.crossing) {
    const Fluid& f = fluid_[on.transfer];
    if (MaxMinSolver::below_cap(f.rate, f.cap)) top = std::max(top, f.rate / f.weight);
  }
  return top;
}

bool Network::held_back(const Fluid& f, double top)
{
  // A full link limits the flows that run fastest on it per unit of weight, below their caps:
  // those are the ones whose rates follow its capacity. The others are held elsewhere.
  return f.rate / f.weight >= top * (1 - kTight) && MaxMinSolver::below_cap(f.rate, f.cap);
}

bool Network::reach_bottlenecked(std::uint32_t r, double t)
{
  if (look_[r].bottlenecked == epoch_) return false; // they are in the set already
  look_[r].bottlenecked = epoch_;
  const Resource& res = resources_[r];
  const double top = top_level(res);
  bool reached = false;
  for (const OnLink& on : res.crossing)
    if (held_back(fluid_[on.transfer], top)) reached = reach(on.transfer, t) || reached;
  return reached;
}

void Network::look_at(std::uint32_t r)
{
  Look& k = look_[r];
  if (k.epoch == epoch_) return;
  k.epoch = epoch_;
  k.local = kUnlisted;
  // A link that all its flows at their caps cannot fill never binds, nor one whose flows all
  // cross its (narrower) guard: the set leaves it out.
  if (!k.binds) return;
  k.local = solver_.add_link(0); // its capacity for the set once the set is known
  set_links_.push_back(r);
  XATTN_CHECK(k.local + 1 == set_links_.size(), "a link's index in the solve is its place in set_links_");
}

void Network::count_set()
{
  set_used_.assign(set_links_.size(), 0.0);
  set_count_.assign(set_links_.size(), 0);
  // By the solver's groups (a link's held-back flows are most of a set: one sum each).
  for (std::uint32_t g = 0; g < solver_.groups(); ++g) {
    double rates = 0; // the old rates: they change once the set is solved
    for (std::uint32_t local : solver_.group_members(g))
      rates += fluid_[set_[local]].rate;
    for (std::uint32_t local : solver_.group_links(g)) {
      set_used_[local] += rates;
      set_count_[local] += static_cast<std::uint32_t>(solver_.group_members(g).size());
    }
  }
}

bool Network::settle(double t)
{
  bool grew = false;
  for (std::uint32_t local = 0, n = static_cast<std::uint32_t>(set_links_.size()); local < n; ++local) {
    const std::uint32_t r = set_links_[local];
    const Resource& res = resources_[r];
    // Every flow on it is in the set: nobody outside to check.
    if (set_count_[local] == res.crossing.size()) continue;
    // The set's flows below their caps there: the highest rate per unit of weight (-1: none).
    const double set_level = solver_.top(local);
    if (solver_.load(local) >= solver_.capacity(local) * (1 - kTight)) {
      // The new rates fill the link: no flow on it may run faster per unit of weight than the
      // set's flows it holds back (those below their caps); an outside flow that does joins the set.
      if (set_level < 0) continue; // the set's flows there are all at their caps
      // The flows it held back before (the fastest per unit of weight, below their caps) must not
      // run slower than the set's now: such an outside flow joins the set too.
      const bool was_full = full(r);
      const double top = was_full ? top_level(res) : 0;
      for (const OnLink& on : res.crossing) {
        const Fluid& o = fluid_[on.transfer];
        if (o.mark == epoch_) continue;
        const double level = o.rate / o.weight;
        if (level > set_level * (1 + kTight) || (was_full && held_back(o, top) && level < set_level * (1 - kTight)))
          grew = reach(on.transfer, t) || grew;
      }
    } else if (full(r)) {
      // The link was full and no longer is: the outside flows it held back may rise.
      grew = reach_bottlenecked(r, t) || grew;
    }
  }
  return !grew;
}

void Network::resolve(double t)
{
  ++epoch_;
  set_.clear();
  set_links_.clear();
  solver_.clear();
  for (std::uint32_t id : seeds_)
    reach(id, t);
  // A newcomer on a full link takes from the flows that link holds back: they join now (the check
  // would add them after a first solve).
  for (std::uint32_t id : seeds_)
    for_binding(id, [&](std::uint32_t r) {
      if (full(r)) reach_bottlenecked(r, t);
    });
  // An ended flow freed capacity on a full link: the flows it held back there may rise.
  for (std::uint32_t r : freed_) {
    reach_bottlenecked(r, t);
    look_at(r);
  }
  freed_.clear();
  if (set_.empty()) return;
  // Solve with what the outside flows leave, check, grow, until the check holds. The set only
  // grows, and the solver with it (reach()).
  const std::vector<double>* rate = nullptr;
  do {
    // What the flows outside the set leave of each link.
    count_set();
    for (std::uint32_t local = 0; local < set_links_.size(); ++local) {
      const Resource& res = resources_[set_links_[local]];
      solver_.set_capacity(local, std::max(0.0, res.capacity - (res.used - set_used_[local])));
    }
    rate = &solver_.solve();
  } while (!settle(t));
  ++stats_.resolves;
  stats_.resolved += set_.size();
  stats_.widest = std::max<std::uint64_t>(stats_.widest, set_.size());
  // The new rates, and their changes summed by group onto the group's links (a link's held-back
  // flows are most of a set: one sum each, not one per flow).
  for (std::uint32_t g = 0; g < solver_.groups(); ++g) {
    double moved = 0;
    for (std::uint32_t local : solver_.group_members(g)) {
      const std::uint32_t id = set_[local];
      const double x = (*rate)[local], old = fluid_[id].rate;
      XATTN_CHECK(x > 0, "max-min gives every moving flow a positive rate");
      if (ends_.contains(id) && std::abs(x - old) <= 1e-12 * x) continue;
      moved += x - old;
      retime(id, x, t);
    }
    if (moved != 0)
      for (std::uint32_t local : solver_.group_links(g))
        resources_[set_links_[local]].used += moved;
  }
  // Sums of differences drift: now and then a link gets its exact sum back.
  for (std::uint32_t r : set_links_) {
    Resource& res = resources_[r];
    if (++res.updates % kResumEvery != 0) continue;
    res.used = 0;
    for (const OnLink& on : res.crossing)
      res.used += fluid_[on.transfer].rate;
  }
  if (check_solver_) check_rates(t);
}

void Network::check_rates(double t) const
{
  // Every moving flow on every link of its route, from scratch. A flow whose last byte moves at
  // this instant keeps its rate until it departs, as in the re-solve: it only takes capacity.
  MaxMinSolver full;
  absl::flat_hash_map<std::uint32_t, std::uint32_t> local; // resource -> the solve's link
  std::vector<double> leaving;                             // by the solve's link
  std::vector<std::uint32_t> ids;
  std::vector<std::uint32_t> crossed;
  for (std::uint32_t id = 0; id < transfers_.size(); ++id) {
    if (!transfers_[id].moving) continue;
    const Fluid& f = fluid_[id];
    crossed.clear();
    for (std::uint32_t r : resources(id)) {
      auto [it, added] = local.try_emplace(r, static_cast<std::uint32_t>(leaving.size()));
      if (added) {
        full.add_link(resources_[r].capacity);
        leaving.push_back(0);
      }
      crossed.push_back(it->second);
    }
    if (f.end <= t) {
      for (std::uint32_t k : crossed)
        leaving[k] += f.rate;
      continue;
    }
    ids.push_back(id);
    full.add_flow(f.weight, f.cap, crossed);
  }
  for (const auto& [r, k] : local)
    full.set_capacity(k, std::max(0.0, resources_[r].capacity - leaving[k]));
  const std::vector<double>& rate = full.solve();
  for (std::size_t k = 0; k < ids.size(); ++k) {
    const double mine = fluid_[ids[k]].rate, theirs = rate[k];
    XATTN_CHECK(std::abs(mine - theirs) <= kCheckTolerance * std::max(mine, theirs),
                "the incremental max-min rate of a flow differs from the whole solve's (engine.check_solver)");
  }
}

} // namespace xattn::sim::engine
