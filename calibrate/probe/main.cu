// xattn_probe: measures on whatever GPUs it finds what xattn's cost model needs, and writes one
// JSON file (schema xattn-probe/1, documented in calibrate/README.md) for `xattn calibrate fit`.
//
//   xattn_probe [--out FILE] [--quick] [--reps N] [--iters N] [--only launch,transfer,mla]
//   xattn_probe --check      GPU kernels against the CPU reference; exit 0 pass, 1 fail, 77 no GPU
#include "common.cuh"

#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <sys/utsname.h>
#include <unistd.h>

extern char** environ;

namespace
{
constexpr int kNoGpu = 77; // ctest SKIP_RETURN_CODE

std::string first_line_with(const char* file, const char* key)
{
  std::ifstream in(file);
  for (std::string l; std::getline(in, l);)
    if (l.rfind(key, 0) == 0) {
      auto colon = l.find(':');
      return colon == std::string::npos ? l : l.substr(l.find_first_not_of(" \t", colon + 1));
    }
  return "";
}

std::string host_json()
{
  char name[256] = {0};
  gethostname(name, sizeof name - 1);
  utsname u{};
  uname(&u);
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return "{\"hostname\": " + probe::quote(name) +
         ", \"cpu\": " + probe::quote(first_line_with("/proc/cpuinfo", "model name")) +
         ", \"logical_cpus\": " + std::to_string(sysconf(_SC_NPROCESSORS_ONLN)) +
         ", \"memory_B\": " + probe::num(double(pages) * double(page)) +
         ", \"os\": " + probe::quote(std::string(u.sysname) + " " + u.release + " " + u.machine) + "}";
}

std::string devices_json(int n)
{
  std::string o = "[";
  for (int d = 0; d < n; ++d) {
    cudaDeviceProp p;
    PROBE_CUDA(cudaGetDeviceProperties(&p, d));
    int clock = 0, mem_clock = 0;
    cudaDeviceGetAttribute(&clock, cudaDevAttrClockRate, d);
    cudaDeviceGetAttribute(&mem_clock, cudaDevAttrMemoryClockRate, d);
    char pci[32];
    std::snprintf(pci, sizeof pci, "%04x:%02x:%02x", p.pciDomainID, p.pciBusID, p.pciDeviceID);
    o += std::string(d ? ",\n  " : "\n  ") + "{\"index\": " + std::to_string(d) +
         ", \"name\": " + probe::quote(p.name) + ", \"cc\": \"" + std::to_string(p.major) + "." +
         std::to_string(p.minor) + "\", \"sms\": " + std::to_string(p.multiProcessorCount) +
         ", \"memory_B\": " + probe::num(double(p.totalGlobalMem)) + ", \"l2_B\": " + std::to_string(p.l2CacheSize) +
         ", \"clock_khz\": " + std::to_string(clock) + ", \"mem_clock_khz\": " + std::to_string(mem_clock) +
         ", \"bus_width_bits\": " + std::to_string(p.memoryBusWidth) + ", \"pci\": \"" + pci + "\", \"peers\": [";
    for (int e = 0, first = 1; e < n; ++e) {
      int can = 0;
      if (e != d) cudaDeviceCanAccessPeer(&can, d, e);
      if (can) {
        o += (first ? "" : ", ") + std::to_string(e);
        first = 0;
      }
    }
    o += "]}";
  }
  return o + "]";
}

std::string environment_json()
{
  int rt = 0, drv = 0;
  cudaRuntimeGetVersion(&rt);
  cudaDriverGetVersion(&drv);
  std::string vars;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    if (kv.rfind("CUDA_", 0) && kv.rfind("NCCL_", 0) && kv.rfind("NVSHMEM_", 0)) continue;
    auto eq = kv.find('=');
    vars += (vars.empty() ? "" : ", ") + probe::quote(kv.substr(0, eq)) + ": " + probe::quote(kv.substr(eq + 1));
  }
  std::time_t now = std::time(nullptr);
  char when[64];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return "{\"cuda_runtime\": " + std::to_string(rt) + ", \"cuda_driver\": " + std::to_string(drv) +
         ", \"measured_at\": \"" + when + "\", \"vars\": {" + vars + "}}";
}

int usage(const char* argv0)
{
  std::fprintf(stderr,
               "usage: %s [--out FILE] [--quick] [--reps N>=5] [--iters N] [--only launch,transfer,mla] | --check\n",
               argv0);
  return 2;
}
} // namespace

int main(int argc, char** argv)
{
  probe::Config c;
  std::string out = "xattn-probe.json", only = "launch,transfer,mla";
  bool check = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--out")
      out = value();
    else if (a == "--quick")
      c.quick = true;
    else if (a == "--check")
      check = true;
    else if (a == "--reps")
      c.reps = std::atoi(value().c_str());
    else if (a == "--iters")
      c.iters = std::atoi(value().c_str());
    else if (a == "--only")
      only = value();
    else
      return usage(argv[0]);
  }
  if (c.reps < 5 || c.iters < 1 || out.empty()) return usage(argv[0]);
  if (c.quick) c.iters = std::min(c.iters, 20);

  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess || n == 0) {
    std::fprintf(stderr, "xattn_probe: no CUDA GPU found (%s); nothing to measure. Run it on a machine with a GPU.\n",
                 err != cudaSuccess ? cudaGetErrorString(err) : "device count 0");
    return kNoGpu;
  }
  PROBE_CUDA(cudaSetDevice(0));
  if (check) return probe::mla_check() == 0 ? 0 : 1;

  std::vector<probe::Probe> probes;
  auto wanted = [&](const char* family) {
    return ("," + only + ",").find(std::string(",") + family + ",") != std::string::npos;
  };
  if (wanted("launch")) probe::launch_probes(c, probes);
  if (wanted("transfer")) probe::transfer_probes(c, probes);
  if (wanted("mla")) probe::mla_probes(c, probes);
  const char* multi = "multi-process probe: run xattn_probe_gin with two ranks (calibrate/README.md)";
  probes.push_back(probe::skipped("gin_put_gpu", "transfer", multi));
  probes.push_back(probe::skipped("gin_put_proxy", "transfer", multi));

  std::ostringstream o;
  o << "{\"schema\": \"xattn-probe/1\",\n \"tool\": {\"name\": \"xattn_probe\", \"version\": \"0.1.0\"},\n \"host\": "
    << host_json() << ",\n \"devices\": " << devices_json(n) << ",\n \"environment\": " << environment_json()
    << ",\n \"config\": {\"warmup\": " << c.warmup << ", \"iters\": " << c.iters << ", \"reps\": " << c.reps
    << ", \"quick\": " << (c.quick ? "true" : "false") << "},\n \"probes\": [\n  ";
  for (size_t i = 0; i < probes.size(); ++i)
    o << (i ? ",\n  " : "") << probe::probe_json(probes[i]);
  o << "\n ]\n}\n";
  std::string tmp = out + ".tmp";
  {
    std::ofstream f(tmp);
    f << o.str();
    if (!f) {
      std::fprintf(stderr, "xattn_probe: cannot write %s\n", tmp.c_str());
      return 2;
    }
  }
  if (std::rename(tmp.c_str(), out.c_str()) != 0) {
    std::fprintf(stderr, "xattn_probe: cannot write %s: %s\n", out.c_str(), std::strerror(errno));
    return 2;
  }
  std::fprintf(stderr, "xattn_probe: wrote %s (%zu probes)\n", out.c_str(), probes.size());
  return 0;
}
