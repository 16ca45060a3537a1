// xattn_probe_gin: GPU-initiated puts through NCCL's device API (GIN, NCCL 2.28) between two
// processes (two GPUs, usually on two nodes): a one-thread kernel ping-pongs a put of `bytes`
// with a remote signal, so half a round trip is one device-initiated exchange. The back end is
// NCCL's: NCCL_GIN_TYPE=3 (GDAKI: the GPU drives the NIC) for --transport gpu, NCCL_GIN_TYPE=2
// (a CPU proxy thread) for --transport proxy; run once for each.
//
//   rank 0: xattn_probe_gin --rank 0 --id-file /shared/gin.id --transport gpu --out gin-gpu.json
//   rank 1: xattn_probe_gin --rank 1 --id-file /shared/gin.id --transport gpu
//
// The output uses the probe harness's schema (xattn-probe/1), one transfer probe; rank 0 writes it.
// Status: compiled against NCCL 2.28's nccl_device.h, never run here (no GPU, no NIC).
#include "common.cuh"

#include <nccl.h>
#include <nccl_device.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>

namespace
{

#define GIN_NCCL(call)                                                                                                 \
  do {                                                                                                                 \
    ncclResult_t r_ = (call);                                                                                          \
    if (r_ != ncclSuccess) {                                                                                           \
      std::fprintf(stderr, "xattn_probe_gin: %s: %s (%s)\n", #call, ncclGetErrorString(r_),                            \
                   ncclGetLastError(nullptr));                                                                         \
      std::exit(3);                                                                                                    \
    }                                                                                                                  \
  } while (0)

// Rank 0 puts and waits for the answer; rank 1 waits and answers. Signal 0 counts arrivals.
__global__ void ping_pong(ncclDevComm comm, ncclDevResourceHandle buf, int iters, size_t bytes)
{
  ncclTeam world = ncclTeamWorld(comm);
  ncclGin gin(comm, 0);
  const size_t off = ncclGetResourceBufferOffset(buf);
  const int peer = 1 - comm.rank;
  const uint64_t at = gin.readSignal(0);
  for (int i = 0; i < iters; ++i) {
    if (comm.rank == 1) gin.waitSignal(ncclCoopThread{}, 0, at + i + 1);
    gin.put(world, peer, comm.resourceWindow, off, comm.resourceWindow, off, bytes, ncclGin_SignalInc{0});
    if (comm.rank == 0) gin.waitSignal(ncclCoopThread{}, 0, at + i + 1);
  }
  gin.flush(ncclCoopThread{});
}

int usage()
{
  std::fprintf(stderr, "usage: xattn_probe_gin --rank 0|1 --id-file PATH --transport gpu|proxy [--fabric CLASS] "
                       "[--out FILE] [--quick]\n");
  return 2;
}
} // namespace

int main(int argc, char** argv)
{
  int rank = -1;
  std::string id_file, transport, fabric = "ib-spine", out = "xattn-probe-gin.json";
  probe::Config c;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--rank")
      rank = std::atoi(value().c_str());
    else if (a == "--id-file")
      id_file = value();
    else if (a == "--transport")
      transport = value();
    else if (a == "--fabric")
      fabric = value();
    else if (a == "--out")
      out = value();
    else if (a == "--quick")
      c.quick = true;
    else
      return usage();
  }
  if ((rank != 0 && rank != 1) || id_file.empty() || (transport != "gpu" && transport != "proxy")) return usage();
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    std::fprintf(stderr, "xattn_probe_gin: no CUDA GPU found; nothing to measure.\n");
    return 77;
  }
  // Before any NCCL call: NCCL reads its environment once.
  setenv("NCCL_GIN_TYPE", transport == "gpu" ? "3" : "2", 1);
  PROBE_CUDA(cudaSetDevice(rank % n));

  ncclUniqueId id;
  if (rank == 0) {
    GIN_NCCL(ncclGetUniqueId(&id));
    std::ofstream(id_file + ".tmp", std::ios::binary).write(reinterpret_cast<const char*>(&id), sizeof id);
    std::rename((id_file + ".tmp").c_str(), id_file.c_str());
  } else {
    for (int tries = 0;; ++tries) {
      std::ifstream in(id_file, std::ios::binary);
      if (in.read(reinterpret_cast<char*>(&id), sizeof id)) break;
      if (tries > 600) {
        std::fprintf(stderr, "xattn_probe_gin: no id in %s after 60 s\n", id_file.c_str());
        return 3;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  ncclComm_t comm;
  GIN_NCCL(ncclCommInitRank(&comm, 2, id, rank));

  const size_t max_B = c.quick ? (1u << 20) : (64u << 20);
  ncclDevResourceHandle buf;
  ncclDevCommRequirements reqs;
  std::memset(&reqs, 0, sizeof reqs);
  reqs.ginForceEnable = true;
  reqs.ginContextCount = 1;
  reqs.ginSignalCount = 1;
  ncclDevResourceRequirements res;
  std::memset(&res, 0, sizeof res);
  res.bufferSize = max_B;
  res.bufferAlign = 4096;
  res.outBufferHandle = &buf;
  reqs.resourceRequirementsList = &res;
  ncclDevComm dcomm;
  GIN_NCCL(ncclDevCommCreate(comm, &reqs, &dcomm));

  cudaStream_t s;
  PROBE_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  probe::Probe p{"gin_put_" + transport, "transfer", fabric, transport, "single-block", "ok", "", {"bytes"}, {}};
  const int round_trips = c.quick ? 100 : 1000;
  for (size_t b = 8; b <= max_B; b *= c.quick ? 8 : 2) {
    const int iters = b >= (8u << 20) ? 10 : round_trips;
    probe::Config one = c;
    one.iters = 1; // one kernel per repetition; it runs `iters` round trips inside
    std::vector<double> per_kernel =
        probe::time_on_stream(s, one, [&] { ping_pong<<<1, 1, 0, s>>>(dcomm, buf, iters, b); });
    for (double& t : per_kernel)
      t /= 2.0 * iters; // one way: half a round trip
    p.points.push_back(probe::sample({double(b)}, iters, per_kernel));
  }
  GIN_NCCL(ncclDevCommDestroy(comm, &dcomm));
  GIN_NCCL(ncclCommDestroy(comm));
  if (rank != 0) return 0;
  std::ofstream f(out);
  f << "{\"schema\": \"xattn-probe/1\", \"tool\": {\"name\": \"xattn_probe_gin\", \"version\": \"0.1.0\"},\n"
    << " \"environment\": {\"NCCL_GIN_TYPE\": \"" << (transport == "gpu" ? 3 : 2) << "\"},\n"
    << " \"probes\": [" << probe::probe_json(p) << "]}\n";
  std::fprintf(stderr, "xattn_probe_gin: wrote %s\n", out.c_str());
  return f ? 0 : 2;
}
