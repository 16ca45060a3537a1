// Policies: who decides, for each chunk a decoding step needs from a remote holder, whether the
// query goes to the chunk (route), the chunk comes to the query (fetch), or the requester
// recomputes it (local). One interface, one file per policy, chosen by name from one registry
// (policies.def), the way SimGrid picks an lmm solver variant. A policy reads what `Need` offers and
// nothing else of the engine; the engine runs what it decides and prices it with the cost module.
//
// Adding a policy: a file `sim/policy/<name>.cpp` defining `PolicyInfo info_<name>()` (with the
// schema of its own parameters, if it has any), one line in policies.def, the file in
// sim/CMakeLists.txt. `xattn run --describe`, the scenario schema and
// the docs list what the registry holds.
#pragma once

#include "sim/core/schema.hpp"
#include "sim/model/cost_model.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace xattn::sim::policy
{

/// What a live scheduler sees of the system now around one need: nothing from the future.
struct Load {
  /// How many times slower than alone this call's routed kernel would run if it started on its
  /// holder now: the shares of the kernels running there, and its own, past a full GPU (1: room).
  double route_slowdown = 1;
  /// The busiest link between the requester and the holder, either way: the rates of the flows on
  /// it now over its capacity (0 idle, 1 full), and how many flows there are.
  double path_busy = 0;
  int path_flows = 0;
  /// How many copies' time a fetch from this holder would wait for one of its copy streams: the
  /// copies running, waiting and planned this step before it, past the streams, over the streams
  /// (0: a stream is left for it).
  double fetch_queue = 0;
};

/// One chunk one request's step needs, on a remote holder, not in the requester's cache.
class Need
{
public:
  virtual ~Need() = default;
  /// The requester instance (its cache is where a fetched chunk goes).
  virtual int instance() const = 0;
  /// The chunk (corpus index).
  virtual std::uint64_t chunk() const = 0;
  /// The closed form of serving this need on its path, one attention call (one layer). Fetch's
  /// splice and local's re-prefill include their wait for the requester's GPU (its queued splices
  /// and re-prefills), a layer's share of it.
  virtual CallCost price() const = 0;
  /// Later calls expected to attend these tokens again, estimated online from what finished
  /// requests did (no knowledge of the future).
  virtual double expected_reuse() const = 0;
  /// Later calls expected from the later turns of this request's session, estimated online from
  /// the sessions seen so far: how many more turns sessions with as many turns went on to have,
  /// how much of a turn's context the next turn read again, a request's expected steps.
  virtual double session_reuse() const = 0;
  /// The same from the trace's future (the live requests' true remaining steps and the reads of
  /// the requests yet to arrive on this requester): only an offline policy may read it.
  virtual double true_reuse() const = 0;
  /// What the system looks like now around this need (read only when a policy asks).
  virtual Load load() const = 0;
};

class Policy
{
public:
  virtual ~Policy() = default;
  /// Decides how to serve `need`. Called once per need, in simulated-time order.
  virtual Primitive decide(const Need& need) = 0;
};

/// A policy's own parameters by key, every key of its `params` schema with its value (or default).
using Params = std::map<std::string, double, std::less<>>;

struct PolicyInfo {
  std::string_view name;
  std::string_view summary; ///< one line, for --describe and the docs
  bool offline = false;     ///< reads the future (Need::true_reuse): a reference, not a deployable policy
  std::unique_ptr<Policy> (*make)(const Params& params) = nullptr;
  /// Its own parameters (numbers, each with a default), which a scenario's `policy_variants` may
  /// set; null: none.
  const core::Schema* params = nullptr;
  /// Whether it may route, and whether it may recompute (re-prefill) a chunk: what its pricing
  /// needs of the model (the scenario checks the model has it).
  bool routes = true, recomputes = true;
};

/// `info`'s policy with `given` parameters, each of its others at its schema's default.
/// REQUIRES: every key of `given` is one of its parameters.
std::unique_ptr<Policy> make(const PolicyInfo& info, const Params& given = {});
/// Parameter `key` of `params` (make() filled every one in). REQUIRES: it is there.
double param(const Params& params, std::string_view key);

/// Every policy, in the registry's order.
std::span<const PolicyInfo> registry();
/// The policy named `name`, or null.
const PolicyInfo* find(std::string_view name);
/// The names joined by `sep` ("route, fetch, ...").
std::string names(std::string_view sep = ", ");
/// The names, in the registry's order.
std::vector<std::string> name_list();

} // namespace xattn::sim::policy
