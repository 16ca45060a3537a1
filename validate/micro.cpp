#include "validate/micro.hpp"

#include "sim/core/plausible.hpp"

#include "calibrate/fitter.hpp"
#include "sim/core/error.hpp"
#include "sim/core/resources.hpp"
#include "sim/engine/driver.hpp"
#include "topologies/topology.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <set>
#include <unistd.h>

namespace xattn::validate
{
namespace fs = std::filesystem;
using nlohmann::json;

namespace
{
const char* kFast = "100TBps"; // links that must never bind

std::string absolute_preset(const std::string& name, const char* folder, const char* what)
{
  auto p = core::resolve_preset(name, folder);
  if (!p) core::fail("command line", 0, 0, what, "no " + std::string(what) + " preset or file named '" + name + "'");
  return fs::absolute(*p).lexically_normal().string();
}

json value_of(const std::string& text)
{
  double d = 0;
  const char* e = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), e, d);
  if (ec == std::errc() && ptr == e) return std::floor(d) == d ? json(static_cast<long long>(d)) : json(d);
  return text;
}
/// The nominal InfiniBand topology of a micro-scenario: the requesters and holders `m.fabric` apart
/// (same leaf, or leaves joined by one spine), every link but the NIC cables never binding. With one
/// NIC per node each GPU is a node; with `requester_nics_node`, two nodes of max(R, H, 2) GPUs, a NIC
/// per GPU, NVLink at `nvlink_bw`: the requesters are GPUs 0.. of one, the holders of the other.
void nominal_ib(const Micro& m, const std::string& bw, const std::string& nvlink_bw, json& t,
                std::vector<std::string>& req, std::vector<std::string>& hold)
{
  const int R = m.requesters, H = m.holders;
  const bool spine = m.fabric == core::FabricClass::kIbSpine;
  const bool multi = m.requester_nics_node;
  const int per = multi ? 1 : (spine ? std::max(R, H) : R + H); // nodes per leaf
  const int gpn = multi ? std::max({R, H, 2}) : 1;              // striping needs NICs to stripe over
  t["nodes"] = multi ? 2 : (spine ? 2 * per : per), t["gpus_per_node"] = gpn;
  if (multi) t["nvlink"] = {{"bandwidth", nvlink_bw}, {"latency", "0s"}, {"switch_latency", "0s"}};
  t["nics"] = {{"count", gpn}, {"latency", "0s"}};
  t["fabric"] = {{"nodes_per_leaf", multi && !spine ? 2 : per},
                 {"leaves", spine ? 2 : 1},
                 {"spines", 1},
                 {"link", {{"bandwidth", bw}, {"latency", "0s"}}},
                 {"switch_latency", "0s"}};
  auto name = [&](int node, int gpu) {
    return multi ? "node" + std::to_string(node) + ".gpu" + std::to_string(gpu) : "node" + std::to_string(node);
  };
  for (int i = 0; i < R; ++i)
    req.push_back(multi ? name(0, i) : name(i, 0));
  for (int i = 0; i < H; ++i)
    hold.push_back(multi ? name(1, i) : name(spine ? per + i : R + i, 0));
}
} // namespace

const PolicyOutcome& MicroOutcome::at(const std::string& p) const
{
  auto it = policy.find(p);
  if (it == policy.end()) throw std::logic_error("micro-scenario did not run policy " + p);
  return it->second;
}

Micro transfer_micro(core::FabricClass fabric, double bytes, int blocks, int concurrency, core::Transport transport)
{
  Micro m;
  m.fabric = fabric;
  m.requesters = std::max(1, concurrency);
  m.holders = 1;
  m.rows = 1;
  // A one-chunk corpus whose latent rows (kv_lora_rank + rope_dim bf16 values a token) are the
  // message: one token up to kMaxRow values, then as many tokens of equal rows as a larger message
  // needs (a row's size off by at most one value in kMaxRow: 2^-28 of the message).
  constexpr long long kMaxRow = 1LL << 28;
  const auto values = std::max<long long>(2, std::llround(bytes / 2.0));
  const long long tokens = (values + kMaxRow - 1) / kMaxRow;
  const long long row = std::max<long long>(2, std::llround(static_cast<double>(values) / static_cast<double>(tokens)));
  m.rope_dim = static_cast<int>(std::min<long long>(64, row - 1));
  m.kv_lora_rank = static_cast<int>(row - m.rope_dim);
  m.chunk_tokens = tokens;
  m.requests.clear();
  for (int r = 0; r < m.requesters; ++r)
    m.requests.push_back({0.0, r, {0}, 1});
  m.policies = {"fetch"};
  m.transport = transport;
  for (const char* k : {"splice.fixed", "splice.per_token", "holder.kernel_fixed", "holder.kernel_per_token",
                        "holder.kernel_per_token_row", "step.other_compute"})
    m.profile_set[k] = "0s";
  if (blocks > 0) m.profile_set["dispatch.fetch_blocks"] = std::to_string(blocks);
  return m;
}

MicroRunner::MicroRunner(std::string profile, std::string topology)
{
  profile_path_ = absolute_preset(profile, "calibrate/profiles", "profile");
  profile_ = calibrate::load_profile(profile_path_);
  if (!topology.empty()) {
    topology_ = absolute_preset(topology, "topologies", "topology");
    user_topology_ = std::make_shared<topo::Topology>(topo::load_topology(topology_));
  }
  static int counter = 0;
  dir_ = fs::temp_directory_path() / ("xattn-validate-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
  fs::create_directories(dir_);
}

MicroRunner::~MicroRunner()
{
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

std::string MicroRunner::profile_file(const Micro& m)
{
  if (m.profile_set.empty()) return profile_path_;
  json doc;
  std::string key;
  for (const auto& [k, v] : m.profile_set) {
    key += k + "=" + v + ";";
    const auto dot = k.find('.');
    if (dot == std::string::npos)
      doc[k] = value_of(v);
    else
      doc[k.substr(0, dot)][k.substr(dot + 1)] = value_of(v);
  }
  auto it = override_files_.find(key);
  if (it != override_files_.end()) return it->second;
  doc["name"] = profile_.name + "-micro" + std::to_string(override_files_.size());
  doc["extends"] = profile_path_;
  const fs::path p = dir_ / ("profile" + std::to_string(override_files_.size()) + ".yaml");
  std::ofstream(p) << doc.dump(1) << "\n";
  override_files_[key] = p.string();
  return p.string();
}

std::string MicroRunner::topology_yaml(const Micro& m, std::vector<std::string>& req,
                                       std::vector<std::string>& hold) const
{
  const int R = m.requesters, H = m.holders;
  if (user_topology_) {
    const topo::Topology& t = *user_topology_;
    if (!m.requester_gpus.empty()) {
      req = {m.requester_gpus};
      hold = {m.holder_gpus};
      return json(topology_).dump();
    }
    const auto n = static_cast<topo::GpuId>(t.gpu_count());
    for (topo::GpuId r0 = 0; r0 < n; ++r0) {
      std::vector<topo::GpuId> hs, rs{r0};
      for (topo::GpuId h = 0; h < n && static_cast<int>(hs.size()) < H; ++h)
        if (h != r0 && t.fabric_class(r0, h) == m.fabric) hs.push_back(h);
      if (static_cast<int>(hs.size()) < H) continue;
      for (topo::GpuId r = 0; r < n && static_cast<int>(rs.size()) < R; ++r) {
        if (r == r0 || std::find(hs.begin(), hs.end(), r) != hs.end()) continue;
        if (std::all_of(hs.begin(), hs.end(), [&](topo::GpuId h) { return t.fabric_class(r, h) == m.fabric; }))
          rs.push_back(r);
      }
      if (static_cast<int>(rs.size()) < R) continue;
      for (auto g : rs)
        req.push_back(t.gpu_name(g));
      for (auto g : hs)
        hold.push_back(t.gpu_name(g));
      return json(topology_).dump();
    }
    core::fail(topology_, 0, 0, "",
               "no " + std::to_string(R) + " requester and " + std::to_string(H) + " holder GPUs all pairwise on " +
                   std::string(core::to_string(m.fabric)) + ": give the endpoints (src, dst) in the measured data");
  }
  // Nominal topology from the profile.
  const std::string bw = calibrate::rate_text(profile_.fabric(m.fabric).nominal().value());
  json t;
  t["name"] = "nominal-" + std::string(core::to_string(m.fabric));
  json fast_pcie = {{"switches", 1},          {"bandwidth", kFast},      {"latency", "0s"},
                    {"switch_latency", "0s"}, {"host_bandwidth", kFast}, {"host_latency", "0s"}};
  switch (m.fabric) {
  case core::FabricClass::kNvlink:
    t["nodes"] = 1, t["gpus_per_node"] = R + H;
    t["nvlink"] = {{"bandwidth", bw}, {"latency", "0s"}, {"switch_latency", "0s"}};
    t["pcie"] = fast_pcie;
    for (int i = 0; i < R + H; ++i)
      (i < R ? req : hold).push_back("node0.gpu" + std::to_string(i));
    break;
  case core::FabricClass::kPcie:
    t["nodes"] = 1, t["gpus_per_node"] = R + H;
    t["pcie"] = fast_pcie;
    t["pcie"]["bandwidth"] = bw;
    for (int i = 0; i < R + H; ++i)
      (i < R ? req : hold).push_back("node0.gpu" + std::to_string(i));
    break;
  case core::FabricClass::kIbSameLeaf:
  case core::FabricClass::kIbSpine:
    nominal_ib(m, bw, calibrate::rate_text(profile_.fabric(core::FabricClass::kNvlink).nominal().value()), t, req,
               hold);
    t["pcie"] = fast_pcie;
    break;
  default:
    core::fail("command line", 0, 0, "fabric", "micro-scenarios need two GPUs: fabric class same-gpu is not supported");
  }
  return t.dump();
}

std::string MicroRunner::scenario_text(const Micro& m, const fs::path& trace, const std::string& profile) const
{
  std::vector<std::string> req, hold;
  const std::string topo = topology_yaml(m, req, hold);
  json sc;
  sc["name"] = "micro";
  sc["seed"] = 1;
  sc["model"] = {{"name", "micro"},
                 {"layers", m.layers},
                 {"heads", m.rows},
                 {"kv_lora_rank", m.kv_lora_rank},
                 {"rope_dim", m.rope_dim}};
  sc["profile"] = profile;
  sc["topology"] = json::parse(topo);
  sc["instances"] = {{"requesters", req}, {"holders", hold}};
  sc["corpus"] = {{"chunk_tokens", m.chunk_tokens}, {"placement", "round-robin"}, {"holder_hbm", "1PB"}};
  sc["selection"] = {{"mode", "dense"}};
  sc["workload"] = {{"trace", trace.string()}, {"format", "xattn"}};
  json pol = json::array();
  for (const std::string& p : m.policies)
    pol.push_back(p);
  sc["policies"] = pol;
  // A fetch's latency is measured as the step that waits for it, as the paper's prototype did. A
  // routed message is the prototype's absorbed query (a measured transfer's size is its rows).
  sc["engine"] = {{"route_protocol", "absorbed"}, {"transport", m.transport == core::Transport::kGpu ? "gpu" : "proxy"},
                  {"fetch", "blocking"},          {"max_batch", m.max_batch},
                  {"cache_budget", "1PB"},        {"requester_nics", m.requester_nics_node ? "node" : "own"}};
  sc["what_if"] = {{"batching", m.batching}};
  return sc.dump(1);
}

MicroOutcome MicroRunner::run(const Micro& m)
{
  // The micro-scenario's nominal links are made too fast to bind on purpose: not the user's input.
  const core::NoPlausibilityChecks unchecked;
  const int id = runs_++;
  // The trace: one block per chunk, block id = chunk index; sessions = requesters, first seen in order.
  std::vector<MicroRequest> rq = m.requests;
  std::stable_sort(rq.begin(), rq.end(), [](const auto& a, const auto& b) { return a.arrival_s < b.arrival_s; });
  int next_session = 0, next_chunk = 0;
  const fs::path trace = dir_ / ("trace" + std::to_string(id) + ".jsonl");
  {
    std::ofstream out(trace);
    out << json{{"xattn_trace", 1}, {"source", "xattn validate micro-scenario"}}.dump() << "\n";
    for (std::size_t i = 0; i < rq.size(); ++i) {
      const MicroRequest& r = rq[i];
      if (r.requester > next_session || r.requester >= m.requesters)
        throw std::logic_error("micro-scenario: requester " + std::to_string(r.requester) + " appears out of order");
      next_session = std::max(next_session, r.requester + 1);
      for (int c : r.chunks) {
        if (c > next_chunk)
          throw std::logic_error("micro-scenario: chunk " + std::to_string(c) + " appears out of order");
        next_chunk = std::max(next_chunk, c + 1);
      }
      out << json{{"id", i},
                  {"t", r.arrival_s},
                  {"session", r.requester},
                  {"agent", i},
                  {"block_tokens", m.chunk_tokens},
                  {"blocks", r.chunks},
                  {"in", static_cast<std::int64_t>(r.chunks.size()) * m.chunk_tokens},
                  {"out", r.steps}}
                 .dump()
          << "\n";
    }
  }
  const std::string text = scenario_text(m, trace, profile_file(m));
  sim::engine::Scenario sc =
      sim::engine::parse_scenario(text, (dir_ / ("micro" + std::to_string(id) + ".yaml")).string());
  sim::engine::RunOptions opt;
  opt.out_dir = (dir_ / ("out" + std::to_string(id))).string();
  opt.progress = false;
  sim::engine::RunOutcome o = sim::engine::run_scenario(sc, opt);
  MicroOutcome r;
  r.invariants_ok = o.exit_code == 0 && o.result.ok;
  for (const auto& [name, p] : o.result.policies) {
    PolicyOutcome po;
    po.step_mean_s = p.step_latency_s.mean;
    po.step_p50_s = p.step_latency_s.p50;
    po.step_max_s = p.step_latency_s.max;
    po.request_mean_s = p.e2e_s.mean;
    po.wire_bytes = static_cast<double>(p.wire_bytes);
    po.steps = static_cast<std::int64_t>(p.steps);
    po.requests = static_cast<std::int64_t>(p.requests);
    r.policy[name] = po;
  }
  std::error_code ec;
  fs::remove_all(opt.out_dir, ec);
  fs::remove(trace, ec);
  return r;
}

} // namespace xattn::validate
