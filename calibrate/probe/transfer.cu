// Launch latency, GPU-to-GPU copies (copy engine; SM stores from 1..N blocks), host-staged PCIe
// copies and the copy-stream elbow.
#include "common.cuh"

#include <chrono>

namespace probe
{
namespace
{

__global__ void empty_kernel() {}

// One grid of `gridDim.x` blocks storing `bytes` from src to dst (dst may be a peer's memory):
// 16-byte vector stores, grid-stride. With one block this is the single-block dispatch case.
__global__ void sm_copy(const int4* __restrict__ src, int4* __restrict__ dst, size_t n16)
{
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n16;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

std::vector<size_t> sizes(const Config& c, size_t max_B)
{
  std::vector<size_t> out;
  for (size_t s = 1024; s <= max_B; s *= c.quick ? 16 : 2)
    out.push_back(s);
  return out;
}

// The fabric class between two GPUs as far as CUDA tells: native peer atomics come with NVLink.
std::string peer_fabric(int a, int b)
{
  int atomics = 0;
  PROBE_CUDA(cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, a, b));
  return atomics ? "nvlink" : "pcie";
}

} // namespace

void launch_probes(const Config& c, std::vector<Probe>& out)
{
  cudaStream_t s;
  PROBE_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  Probe single{"launch_single_sync", "launch", "", "", "", "ok", "", {"launches"}, {}};
  // Host-observed: enqueue n launches and wait for them (what a host-driven exchange pays).
  for (int n : {1, 2, 4, 8, 16, 32}) {
    for (int w = 0; w < c.warmup; ++w) {
      empty_kernel<<<1, 1, 0, s>>>();
      PROBE_CUDA(cudaStreamSynchronize(s));
    }
    std::vector<double> reps;
    for (int r = 0; r < c.reps; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < c.iters; ++i) {
        for (int k = 0; k < n; ++k)
          empty_kernel<<<1, 1, 0, s>>>();
        PROBE_CUDA(cudaStreamSynchronize(s));
      }
      reps.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / c.iters);
    }
    single.points.push_back(sample({double(n)}, c.iters, reps));
  }
  out.push_back(single);

  Probe b2b{"launch_back_to_back", "launch", "", "", "", "ok", "", {"launches"}, {}};
  Probe graph{"launch_graph", "launch", "", "", "", "ok", "", {"launches"}, {}};
  for (int n : {1, 4, 16, 64}) {
    b2b.points.push_back(sample({double(n)}, c.iters, time_on_stream(s, c, [&] {
                                  for (int k = 0; k < n; ++k)
                                    empty_kernel<<<1, 1, 0, s>>>();
                                })));
    cudaGraph_t g;
    cudaGraphExec_t ge;
    PROBE_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int k = 0; k < n; ++k)
      empty_kernel<<<1, 1, 0, s>>>();
    PROBE_CUDA(cudaStreamEndCapture(s, &g));
    PROBE_CUDA(cudaGraphInstantiate(&ge, g, 0));
    graph.points.push_back(sample({double(n)}, c.iters, time_on_stream(s, c, [&] { cudaGraphLaunch(ge, s); })));
    PROBE_CUDA(cudaGraphExecDestroy(ge));
    PROBE_CUDA(cudaGraphDestroy(g));
  }
  out.push_back(b2b);
  out.push_back(graph);
  PROBE_CUDA(cudaStreamDestroy(s));
}

namespace
{
// GPU 0 to GPU 1 over their peer path: a copy-engine copy, one thread block's stores, and a 64 MiB
// put over 1 to 2 x SMs blocks. Leaves `dst` (on GPU 1) allocated for the caller, or null where the
// two GPUs cannot reach each other.
void peer_probes(const Config& c, cudaStream_t s, void* src, size_t max_B, void*& dst, std::vector<Probe>& out)
{
  int n = 0;
  PROBE_CUDA(cudaGetDeviceCount(&n));
  int can = 0;
  if (n >= 2) PROBE_CUDA(cudaDeviceCanAccessPeer(&can, 0, 1));
  if (n < 2 || !can) {
    std::string why = n < 2 ? "one GPU: peer copies need two" : "GPUs 0 and 1 have no peer access";
    out.push_back(skipped("peer_ce_copy", "transfer", why));
    out.push_back(skipped("peer_sm_put_1block", "transfer", why));
    out.push_back(skipped("peer_sm_put_blocks", "other", why));
    return;
  }
  std::string fabric = peer_fabric(0, 1);
  PROBE_CUDA(cudaDeviceEnablePeerAccess(1, 0));
  PROBE_CUDA(cudaSetDevice(1));
  PROBE_CUDA(cudaMalloc(&dst, max_B));
  PROBE_CUDA(cudaSetDevice(0));
  Probe ce{"peer_ce_copy", "transfer", fabric, "", "bulk", "ok", "", {"bytes"}, {}};
  Probe one{"peer_sm_put_1block", "transfer", fabric, "gpu", "single-block", "ok", "", {"bytes"}, {}};
  for (size_t b : sizes(c, max_B)) {
    int iters = b >= (64u << 20) ? 5 : c.iters;
    ce.points.push_back(sample({double(b)}, iters,
                               time_on_stream(
                                   s, c, [&] { cudaMemcpyPeerAsync(dst, 1, src, 0, b, s); }, iters)));
    one.points.push_back(
        sample({double(b)}, iters,
               time_on_stream(
                   s, c, [&] { sm_copy<<<1, 1024, 0, s>>>((const int4*)src, (int4*)dst, b / 16); }, iters)));
  }
  out.push_back(ce);
  out.push_back(one);
  cudaDeviceProp prop;
  PROBE_CUDA(cudaGetDeviceProperties(&prop, 0));
  Probe blocks{"peer_sm_put_blocks", "other", fabric, "gpu", "", "ok", "", {"blocks", "bytes"}, {}};
  const size_t b = c.quick ? (4u << 20) : (64u << 20);
  for (int nb = 1; nb <= 2 * prop.multiProcessorCount; nb *= 2)
    blocks.points.push_back(
        sample({double(nb), double(b)}, 10,
               time_on_stream(
                   s, c, [&] { sm_copy<<<nb, 1024, 0, s>>>((const int4*)src, (int4*)dst, b / 16); }, 10)));
  out.push_back(blocks);
}

// Host-staged copy: device -> pinned host -> device (the host-mediated path between GPUs that
// cannot reach each other directly), ending on `staged_dst`; and pinned host -> device alone.
void staged_probes(const Config& c, cudaStream_t s, void* src, void* host, void* staged_dst, size_t max_B,
                   std::vector<Probe>& out)
{
  Probe staged{"host_staged_copy", "transfer", "pcie", "proxy", "bulk", "ok", "", {"bytes"}, {}};
  Probe h2d{"pcie_h2d_pinned", "other", "pcie", "", "bulk", "ok", "", {"bytes"}, {}};
  for (size_t b : sizes(c, max_B)) {
    int iters = b >= (64u << 20) ? 5 : c.iters;
    staged.points.push_back(sample({double(b)}, iters,
                                   time_on_stream(
                                       s, c,
                                       [&] {
                                         cudaMemcpyAsync(host, src, b, cudaMemcpyDeviceToHost, s);
                                         cudaMemcpyAsync(staged_dst, host, b, cudaMemcpyHostToDevice, s);
                                       },
                                       iters)));
    h2d.points.push_back(sample({double(b)}, iters,
                                time_on_stream(
                                    s, c, [&] { cudaMemcpyAsync(src, host, b, cudaMemcpyHostToDevice, s); }, iters)));
  }
  out.push_back(staged);
  out.push_back(h2d);
}

// Copy-stream elbow: K streams each copying 8 MiB at once; the makespan stays flat while the
// copy engines have room and grows past the elbow.
void elbow_probe(const Config& c, cudaStream_t s, void* src, size_t max_B, std::vector<Probe>& out)
{
  const size_t chunk = 8u << 20;
  const int kmax = 16;
  std::vector<cudaStream_t> pool(kmax);
  std::vector<cudaEvent_t> done(kmax);
  cudaEvent_t fork;
  PROBE_CUDA(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  for (int k = 0; k < kmax; ++k) {
    PROBE_CUDA(cudaStreamCreateWithFlags(&pool[k], cudaStreamNonBlocking));
    PROBE_CUDA(cudaEventCreateWithFlags(&done[k], cudaEventDisableTiming));
  }
  void* dst_pool = nullptr;
  PROBE_CUDA(cudaMalloc(&dst_pool, chunk * kmax));
  Probe elbow{"copy_stream_elbow", "copy-elbow", "", "", "", "ok", "", {"streams"}, {}};
  for (int k = 1; k <= kmax; ++k)
    elbow.points.push_back(sample({double(k)}, 10,
                                  time_on_stream(
                                      s, c,
                                      [&] {
                                        cudaEventRecord(fork, s);
                                        for (int j = 0; j < k; ++j) {
                                          cudaStreamWaitEvent(pool[j], fork, 0);
                                          cudaMemcpyAsync((char*)dst_pool + j * chunk, (char*)src + (j * chunk) % max_B,
                                                          chunk, cudaMemcpyDeviceToDevice, pool[j]);
                                          cudaEventRecord(done[j], pool[j]);
                                          cudaStreamWaitEvent(s, done[j], 0);
                                        }
                                      },
                                      10)));
  out.push_back(elbow);
  for (int k = 0; k < kmax; ++k) {
    PROBE_CUDA(cudaStreamDestroy(pool[k]));
    PROBE_CUDA(cudaEventDestroy(done[k]));
  }
  PROBE_CUDA(cudaEventDestroy(fork));
  PROBE_CUDA(cudaFree(dst_pool));
}
} // namespace

void transfer_probes(const Config& c, std::vector<Probe>& out)
{
  const size_t max_B = c.quick ? (16u << 20) : (256u << 20);
  cudaStream_t s;
  PROBE_CUDA(cudaSetDevice(0));
  PROBE_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  void *src = nullptr, *dst = nullptr, *host = nullptr;
  PROBE_CUDA(cudaMalloc(&src, max_B));
  PROBE_CUDA(cudaMemset(src, 1, max_B));
  peer_probes(c, s, src, max_B, dst, out);
  // The staged copy ends on GPU 1 when there is one, else on GPU 0.
  PROBE_CUDA(cudaMallocHost(&host, max_B));
  void* staged_dst = dst;
  if (!staged_dst) PROBE_CUDA(cudaMalloc(&staged_dst, max_B));
  staged_probes(c, s, src, host, staged_dst, max_B, out);
  elbow_probe(c, s, src, max_B, out);
  if (staged_dst != dst) PROBE_CUDA(cudaFree(staged_dst));
  if (dst) {
    PROBE_CUDA(cudaSetDevice(1));
    PROBE_CUDA(cudaFree(dst));
    PROBE_CUDA(cudaSetDevice(0));
  }
  PROBE_CUDA(cudaFreeHost(host));
  PROBE_CUDA(cudaFree(src));
  PROBE_CUDA(cudaStreamDestroy(s));
}

} // namespace probe
