// The measurements that run SimGrid, each meant for its own process (in_child): platform build,
// the bare comm loop (the ceiling for the engine), and the engine itself through `xattn run`.
#include "sim/bench/bench.hpp"
#include "sim/engine/result.hpp"
#include "topologies/platform.hpp"

#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

namespace xattn::bench
{
namespace fs = std::filesystem;

nlohmann::json in_child(const std::function<nlohmann::json()>& measure)
{
  int fds[2];
  if (pipe(fds) != 0) return {{"ok", false}, {"error", "pipe failed"}};
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    std::string text;
    int code = 0;
    try {
      text = measure().dump();
    } catch (const std::exception& e) {
      text = nlohmann::json{{"error", e.what()}}.dump();
      code = 1;
    }
    for (std::size_t done = 0; done < text.size();) {
      const ssize_t n = write(fds[1], text.data() + done, text.size() - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    close(fds[1]);
    _exit(code);
  }
  close(fds[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;)
    text.append(buf, static_cast<std::size_t>(n));
  close(fds[0]);
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  nlohmann::json j = text.empty() ? nlohmann::json::object() : nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) j = {{"error", "unreadable result"}};
  j["ok"] = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  j["peak_rss_mib"] = static_cast<double>(usage.ru_maxrss) / 1024.0;
  if (!WIFEXITED(status)) j["error"] = "the measuring process died (status " + std::to_string(status) + ")";
  return j;
}

namespace
{
// SimGrid's command line: quiet logs.
int g_argc = 2;
char g_name[] = "xattn_bench";
char g_quiet[] = "--log=root.thres:critical";
char* g_argv[] = {g_name, g_quiet, nullptr};
} // namespace

nlohmann::json platform_build(const std::string& topology)
{
  auto start = std::chrono::steady_clock::now();
  const topo::Topology t = topo::load_topology(topology);
  const double graph_s = since(start);
  simgrid::s4u::Engine engine(&g_argc, g_argv);
  start = std::chrono::steady_clock::now();
  topo::build_platform(t, engine, {});
  const double platform_s = since(start);
  return {{"topology", topology}, {"gpus", t.gpu_count()},    {"links", t.link_count()},
          {"graph_s", graph_s},   {"platform_s", platform_s}, {"total_s", graph_s + platform_s}};
}

nlohmann::json bare_simgrid(const std::string& topology, std::uint64_t messages, std::uint64_t bytes, int in_flight)
{
  const topo::Topology t = topo::load_topology(topology);
  simgrid::s4u::Engine engine(&g_argc, g_argv);
  const topo::Platform p = topo::build_platform(t, engine, {});
  // The replay's shape: the first eighth of the GPUs request, the rest hold; pairs drawn with a
  // fixed seed, so every run sends the same messages.
  const std::size_t gpus = t.gpu_count();
  const std::size_t requesters = std::max<std::size_t>(1, gpus / 8);
  std::mt19937_64 rng(42);
  std::vector<simgrid::s4u::CommPtr> slots(static_cast<std::size_t>(in_flight));
  std::vector<simgrid::s4u::CommPtr> retired; // a comm must outlive its own completion callback
  std::uint64_t started = 0, completed = 0;
  auto launch = [&](std::size_t slot) {
    const std::size_t a = rng() % requesters;
    const std::size_t b = requesters + rng() % (gpus - requesters);
    auto c = simgrid::s4u::Comm::sendto_init(p.hosts[a], p.hosts[b]);
    c->set_payload_size(bytes);
    c->set_data(reinterpret_cast<void*>(slot + 1));
    c->start();
    slots[slot] = c;
    ++started;
  };
  simgrid::s4u::Activity::on_completion_cb([&](const simgrid::s4u::Activity& a) {
    const auto tag = reinterpret_cast<std::uintptr_t>(a.get_data<void>());
    if (tag == 0) return;
    retired.clear();
    ++completed;
    const std::size_t slot = tag - 1;
    retired.push_back(std::move(slots[slot]));
    if (started < messages) launch(slot);
  });
  for (std::size_t s = 0; s < slots.size() && started < messages; ++s)
    launch(s);
  const auto start = std::chrono::steady_clock::now();
  engine.run();
  const double s = since(start);
  return {{"topology", topology},
          {"messages", completed},
          {"bytes_each", bytes},
          {"max_in_flight", in_flight},
          {"wall_s", s},
          {"simulated_s", simgrid::s4u::Engine::get_clock()},
          {"messages_per_s", static_cast<double>(completed) / s}};
}

nlohmann::json engine_replay(const std::string& xattn, const std::string& scenario, const std::string& policy,
                             const std::string& extra_args)
{
  const fs::path out = fs::temp_directory_path() / ("xattn-bench-" + std::to_string(getpid()));
  const std::string cmd = xattn + " run " + scenario + " --out " + out.string() +
                          " --quiet --replace --workers 1 --policy " + policy + " " + extra_args;
  const auto start = std::chrono::steady_clock::now();
  const int rc = std::system(cmd.c_str());
  const double s = since(start);
  rusage children{};
  getrusage(RUSAGE_CHILDREN, &children); // call in_child: then this is the xattn run's largest process
  nlohmann::json j{{"scenario", scenario},
                   {"policy", policy},
                   {"command", cmd},
                   {"wall_s", s},
                   {"exit", WIFEXITED(rc) ? WEXITSTATUS(rc) : -1},
                   {"xattn_peak_rss_mib", static_cast<double>(children.ru_maxrss) / 1024.0}};
  if (fs::exists(out / "summary.json")) {
    const sim::engine::RunResult summary = sim::engine::read_run_result(out / "summary.json");
    if (const sim::engine::PolicyResult* p = summary.find(policy)) {
      const sim::engine::EngineCounters& e = p->engine;
      j["requests"] = p->requests;
      j["steps"] = p->steps;
      j["engine"] = sim::engine::to_json(*p)["engine"];
      // bytes handed to SimGrid, for the ceiling's message size
      j["engine"]["simgrid_bytes"] = p->invariants.simgrid_bytes_handed;
      j["exchanges_per_s"] = static_cast<double>(e.transfers) / s;
      j["simgrid_comms_per_s"] = static_cast<double>(e.simgrid_comms) / s;
      j["steps_per_s"] = static_cast<double>(p->steps) / s;
      j["invariants_ok"] = summary.ok;
    }
  }
  std::error_code ec;
  fs::remove_all(out, ec);
  return j;
}

} // namespace xattn::bench
