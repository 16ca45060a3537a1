// The MLA decode kernels the cost model prices (absorbed MLA: latent 512 + rope 64, bf16): partial
// attention of M_q rows over c_t cached tokens, the online-softmax merge of P partials, the RoPE
// splice of a fetched chunk; their timing probes, the compute elbow, and --check, which compares
// them with the CPU reference (calibrate/reference/mla_reference.cpp, compiled into this binary).
#include "common.cuh"

#include "calibrate/reference/mla_reference.hpp"

#include <cuda_bf16.h>

#include <cmath>
#include <random>

namespace probe
{
namespace
{
namespace ref = xattn::calibrate::ref;

constexpr int kD = ref::kQkDim, kDv = ref::kLatent, kRope = ref::kRope;
constexpr int kTile = 32, kWarps = 8; // tokens per shared-memory tile; rows per block (one per warp)

// Partial attention. grid (ceil(rows / 8), splits); split y attends tokens [y·chunk, (y+1)·chunk).
// Writes out[y][row][512] (float) and lse[y][row]. Online softmax per warp, one row per warp.
__global__ void __launch_bounds__(kWarps * 32)
    mla_partial(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ kv, int rows, int tokens,
                int chunk, float scale, float* __restrict__ out, float* __restrict__ lse)
{
  __shared__ __align__(16) __nv_bfloat16 tile[kTile * kD];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int row = blockIdx.x * kWarps + warp;
  const int begin = blockIdx.y * chunk, end = min(tokens, begin + chunk);
  float qr[kD / 32], acc[kDv / 32];
  for (int i = 0; i < kD / 32; ++i)
    qr[i] = row < rows ? __bfloat162float(q[static_cast<size_t>(row) * kD + lane + 32 * i]) * scale : 0.f;
  for (int i = 0; i < kDv / 32; ++i)
    acc[i] = 0.f;
  float m = -INFINITY, l = 0.f;
  for (int t0 = begin; t0 < end; t0 += kTile) {
    const int n = min(kTile, end - t0);
    const int4* src = reinterpret_cast<const int4*>(kv + static_cast<size_t>(t0) * kD);
    int4* dst = reinterpret_cast<int4*>(tile);
    for (int i = threadIdx.x; i < n * kD / 8; i += blockDim.x)
      dst[i] = src[i];
    __syncthreads();
    for (int t = 0; t < n; ++t) {
      const __nv_bfloat16* k = tile + t * kD;
      float s = 0.f;
      for (int i = 0; i < kD / 32; ++i)
        s += qr[i] * __bfloat162float(k[lane + 32 * i]);
      for (int o = 16; o > 0; o /= 2)
        s += __shfl_xor_sync(0xffffffffu, s, o);
      const float mn = fmaxf(m, s), corr = __expf(m - mn), p = __expf(s - mn);
      l = l * corr + p;
      for (int i = 0; i < kDv / 32; ++i)
        acc[i] = acc[i] * corr + p * __bfloat162float(k[lane + 32 * i]);
      m = mn;
    }
    __syncthreads();
  }
  if (row >= rows) return;
  float* o = out + (static_cast<size_t>(blockIdx.y) * rows + row) * kDv;
  for (int i = 0; i < kDv / 32; ++i)
    o[lane + 32 * i] = l > 0.f ? acc[i] / l : 0.f;
  if (lane == 0) lse[static_cast<size_t>(blockIdx.y) * rows + row] = l > 0.f ? m + __logf(l) : -INFINITY;
}

// Online-softmax merge of P partials: one block per row, 128 threads × 4 dims.
__global__ void mla_merge(const float* __restrict__ outs, const float* __restrict__ lses, int partials, int rows,
                          float* __restrict__ out, float* __restrict__ lse)
{
  const int row = blockIdx.x;
  float m = -INFINITY;
  for (int p = 0; p < partials; ++p)
    m = fmaxf(m, lses[static_cast<size_t>(p) * rows + row]);
  float acc[4] = {0.f, 0.f, 0.f, 0.f}, sum = 0.f;
  for (int p = 0; p < partials; ++p) {
    const float s = lses[static_cast<size_t>(p) * rows + row];
    if (s == -INFINITY) continue;
    const float w = __expf(s - m);
    sum += w;
    const float* o = outs + (static_cast<size_t>(p) * rows + row) * kDv;
    for (int i = 0; i < 4; ++i)
      acc[i] += w * o[threadIdx.x + 128 * i];
  }
  for (int i = 0; i < 4; ++i)
    out[static_cast<size_t>(row) * kDv + threadIdx.x + 128 * i] = sum > 0.f ? acc[i] / sum : 0.f;
  if (threadIdx.x == 0) lse[row] = sum > 0.f ? m + __logf(sum) : -INFINITY;
}

// The splice: re-rotate the 64 rope dims of `tokens` kv rows by `delta` positions and insert them
// into the cache at `dst` (one thread per rotation pair).
__global__ void mla_splice(const __nv_bfloat16* __restrict__ src, __nv_bfloat16* __restrict__ dst, int tokens,
                           long long delta, double log2_base)
{
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<long long>(tokens) * (kD / 2)) return;
  const int t = static_cast<int>(i / (kD / 2)), pair = static_cast<int>(i % (kD / 2));
  const size_t at = static_cast<size_t>(t) * kD + 2 * pair;
  if (2 * pair < kDv) { // the latent part is copied as is
    dst[at] = src[at];
    dst[at + 1] = src[at + 1];
    return;
  }
  const int j = pair - kDv / 2;
  double sn, cs;
  sincos(static_cast<double>(delta) * exp2(-2.0 * j / kRope * log2_base), &sn, &cs);
  const double x = __bfloat162float(src[at]), y = __bfloat162float(src[at + 1]);
  dst[at] = __float2bfloat16(static_cast<float>(x * cs - y * sn));
  dst[at + 1] = __float2bfloat16(static_cast<float>(x * sn + y * cs));
}

struct Buffers {
  __nv_bfloat16 *q = nullptr, *kv = nullptr, *kv2 = nullptr;
  float *outs = nullptr, *lses = nullptr, *out = nullptr, *lse = nullptr;
  Buffers(int rows, int tokens, int splits)
  {
    PROBE_CUDA(cudaMalloc(&q, sizeof(__nv_bfloat16) * rows * kD));
    PROBE_CUDA(cudaMalloc(&kv, sizeof(__nv_bfloat16) * static_cast<size_t>(tokens) * kD));
    PROBE_CUDA(cudaMalloc(&kv2, sizeof(__nv_bfloat16) * static_cast<size_t>(tokens) * kD));
    PROBE_CUDA(cudaMalloc(&outs, sizeof(float) * splits * rows * kDv));
    PROBE_CUDA(cudaMalloc(&lses, sizeof(float) * splits * rows));
    PROBE_CUDA(cudaMalloc(&out, sizeof(float) * rows * kDv));
    PROBE_CUDA(cudaMalloc(&lse, sizeof(float) * rows));
    PROBE_CUDA(cudaMemset(q, 0, sizeof(__nv_bfloat16) * rows * kD));
    PROBE_CUDA(cudaMemset(kv, 0, sizeof(__nv_bfloat16) * static_cast<size_t>(tokens) * kD));
  }
  ~Buffers() { cudaFree(q), cudaFree(kv), cudaFree(kv2), cudaFree(outs), cudaFree(lses), cudaFree(out), cudaFree(lse); }
};

// Partial attention as a holder runs it: split over tokens to fill the GPU, then merged.
void attend(const Buffers& b, int rows, int tokens, int splits, cudaStream_t s)
{
  const int chunk = (tokens + splits - 1) / splits;
  dim3 grid((rows + kWarps - 1) / kWarps, splits);
  mla_partial<<<grid, kWarps * 32, 0, s>>>(b.q, b.kv, rows, tokens, chunk, 1.0f / sqrtf(192.f), b.outs, b.lses);
  if (splits > 1) mla_merge<<<rows, 128, 0, s>>>(b.outs, b.lses, splits, rows, b.out, b.lse);
}

int splits_for(int rows, int tokens, int sms)
{
  const int row_blocks = (rows + kWarps - 1) / kWarps;
  return std::max(1, std::min(tokens / 256, (2 * sms + row_blocks - 1) / row_blocks));
}

} // namespace

void mla_probes(const Config& c, std::vector<Probe>& out)
{
  cudaDeviceProp prop;
  PROBE_CUDA(cudaGetDeviceProperties(&prop, 0));
  cudaStream_t s;
  PROBE_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const std::vector<int> token_sweep =
      c.quick ? std::vector<int>{1024, 4096} : std::vector<int>{512, 1024, 2048, 4096, 8192, 16384};
  const std::vector<int> row_sweep = c.quick ? std::vector<int>{64, 256} : std::vector<int>{16, 64, 128, 256, 512};
  Probe kernel{"mla_partial_attention", "kernel", "", "", "", "ok", "", {"tokens", "rows"}, {}};
  for (int T : token_sweep)
    for (int R : row_sweep) {
      const int sp = splits_for(R, T, prop.multiProcessorCount);
      Buffers b(R, T, sp);
      kernel.points.push_back(
          sample({double(T), double(R)}, c.iters, time_on_stream(s, c, [&] { attend(b, R, T, sp, s); })));
    }
  out.push_back(kernel);

  Probe merge{"mla_merge", "merge", "", "", "", "ok", "", {"partials", "rows"}, {}};
  for (int P : {2, 4, 8, 16})
    for (int R : {128, 256, 512, 1024}) {
      Buffers b(R, kTile, P);
      PROBE_CUDA(cudaMemset(b.lses, 0, sizeof(float) * P * R));
      merge.points.push_back(sample({double(P), double(R)}, c.iters, time_on_stream(s, c, [&] {
                                      mla_merge<<<R, 128, 0, s>>>(b.outs, b.lses, P, R, b.out, b.lse);
                                    })));
    }
  out.push_back(merge);

  Probe splice{"mla_splice", "splice", "", "", "", "ok", "", {"runs", "tokens"}, {}};
  for (int runs : {1, 2, 4, 8})
    for (int T : {2048, 8192, 32768}) {
      Buffers b(1, T, 1);
      const int per = T / runs;
      splice.points.push_back(sample({double(runs), double(T)}, c.iters, time_on_stream(s, c, [&] {
                                       for (int r = 0; r < runs; ++r) {
                                         const size_t off = static_cast<size_t>(r) * per * kD;
                                         const long long pairs = static_cast<long long>(per) * (kD / 2);
                                         mla_splice<<<(pairs + 255) / 256, 256, 0, s>>>(b.kv + off, b.kv2 + off, per,
                                                                                        4096, std::log2(10000.0));
                                       }
                                     })));
    }
  out.push_back(splice);

  // Compute elbow: K requesters' routed decode calls (128 rows = one DeepSeek-V3 token, 2048
  // cached tokens) on K streams at once; the makespan is flat while SMs are free.
  const int kmax = 16, R = 128, T = 2048, sp = 1;
  std::vector<cudaStream_t> pool(kmax);
  std::vector<cudaEvent_t> done(kmax);
  std::vector<Buffers*> bufs;
  cudaEvent_t fork;
  PROBE_CUDA(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  for (int k = 0; k < kmax; ++k) {
    PROBE_CUDA(cudaStreamCreateWithFlags(&pool[k], cudaStreamNonBlocking));
    PROBE_CUDA(cudaEventCreateWithFlags(&done[k], cudaEventDisableTiming));
    bufs.push_back(new Buffers(R, T, sp));
  }
  Probe elbow{"compute_requester_elbow", "compute-elbow", "", "", "", "ok", "", {"requesters"}, {}};
  for (int k = 1; k <= kmax; ++k)
    elbow.points.push_back(sample({double(k)}, c.iters, time_on_stream(s, c, [&] {
                                    cudaEventRecord(fork, s);
                                    for (int j = 0; j < k; ++j) {
                                      cudaStreamWaitEvent(pool[j], fork, 0);
                                      attend(*bufs[j], R, T, sp, pool[j]);
                                      cudaEventRecord(done[j], pool[j]);
                                      cudaStreamWaitEvent(s, done[j], 0);
                                    }
                                  })));
  out.push_back(elbow);
  for (int k = 0; k < kmax; ++k) {
    delete bufs[k];
    PROBE_CUDA(cudaStreamDestroy(pool[k]));
    PROBE_CUDA(cudaEventDestroy(done[k]));
  }
  PROBE_CUDA(cudaEventDestroy(fork));
  PROBE_CUDA(cudaStreamDestroy(s));
}

int mla_check()
{
  // Random bf16 inputs; the reference runs on exactly the values the GPU sees (bf16 → float).
  const int rows = 37, tokens = 1000, splits = 3, chunk = (tokens + splits - 1) / splits;
  const float scale = 1.0f / std::sqrt(192.0f);
  std::mt19937 rng(2026);
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<float> q(static_cast<size_t>(rows) * kD), kv(static_cast<size_t>(tokens) * kD);
  for (float& x : q)
    x = ref::round_bf16(0.3f * nd(rng));
  for (float& x : kv)
    x = ref::round_bf16(nd(rng));
  std::vector<__nv_bfloat16> qh(q.size()), kvh(kv.size());
  for (size_t i = 0; i < q.size(); ++i)
    qh[i] = __float2bfloat16(q[i]);
  for (size_t i = 0; i < kv.size(); ++i)
    kvh[i] = __float2bfloat16(kv[i]);
  Buffers b(rows, tokens, splits);
  PROBE_CUDA(cudaMemcpy(b.q, qh.data(), sizeof(__nv_bfloat16) * qh.size(), cudaMemcpyHostToDevice));
  PROBE_CUDA(cudaMemcpy(b.kv, kvh.data(), sizeof(__nv_bfloat16) * kvh.size(), cudaMemcpyHostToDevice));
  attend(b, rows, tokens, splits, 0);
  const long long pairs = static_cast<long long>(tokens) * (kD / 2);
  mla_splice<<<(pairs + 255) / 256, 256>>>(b.kv, b.kv2, tokens, 4096, std::log2(10000.0));
  PROBE_CUDA(cudaDeviceSynchronize());
  std::vector<float> outs(static_cast<size_t>(splits) * rows * kDv), lses(static_cast<size_t>(splits) * rows);
  std::vector<float> out(static_cast<size_t>(rows) * kDv), lse(rows);
  std::vector<__nv_bfloat16> kv2h(kv.size());
  PROBE_CUDA(cudaMemcpy(outs.data(), b.outs, sizeof(float) * outs.size(), cudaMemcpyDeviceToHost));
  PROBE_CUDA(cudaMemcpy(lses.data(), b.lses, sizeof(float) * lses.size(), cudaMemcpyDeviceToHost));
  PROBE_CUDA(cudaMemcpy(out.data(), b.out, sizeof(float) * out.size(), cudaMemcpyDeviceToHost));
  PROBE_CUDA(cudaMemcpy(lse.data(), b.lse, sizeof(float) * lse.size(), cudaMemcpyDeviceToHost));
  PROBE_CUDA(cudaMemcpy(kv2h.data(), b.kv2, sizeof(__nv_bfloat16) * kv2h.size(), cudaMemcpyDeviceToHost));

  int failures = 0;
  auto expect = [&](const char* what, double got, double want, double tol) {
    if (!(std::abs(got - want) <= tol)) {
      if (failures < 10)
        std::fprintf(stderr, "check %s: GPU %.6g, CPU reference %.6g (tolerance %.3g)\n", what, got, want, tol);
      ++failures;
    }
  };
  ref::Dims d;
  std::vector<float> want(out.size()), want_lse(rows);
  for (int y = 0; y < splits; ++y) { // each split is one holder's partial
    const int n = std::min(tokens, (y + 1) * chunk) - y * chunk;
    ref::partial_attention(q.data(), rows, kv.data() + static_cast<size_t>(y) * chunk * kD, n, d, scale, want.data(),
                           want_lse.data());
    for (size_t i = 0; i < want.size(); ++i)
      expect("partial out", outs[static_cast<size_t>(y) * want.size() + i], want[i], 2e-3 + 2e-3 * std::abs(want[i]));
    for (int r = 0; r < rows; ++r)
      expect("partial lse", lses[static_cast<size_t>(y) * rows + r], want_lse[r], 1e-3 * (1 + std::abs(want_lse[r])));
  }
  ref::partial_attention(q.data(), rows, kv.data(), tokens, d, scale, want.data(), want_lse.data());
  for (size_t i = 0; i < want.size(); ++i)
    expect("merged out", out[i], want[i], 2e-3 + 2e-3 * std::abs(want[i]));
  for (int r = 0; r < rows; ++r)
    expect("merged lse", lse[r], want_lse[r], 1e-3 * (1 + std::abs(want_lse[r])));
  std::vector<float> spliced = kv;
  ref::rope_splice(spliced.data(), tokens, d, 4096);
  for (size_t i = 0; i < spliced.size(); ++i) // bf16 output: half an ulp (2^-9 relative) plus slack
    expect("splice", __bfloat162float(kv2h[i]), spliced[i], 1e-3 + 4e-3 * std::abs(spliced[i]));
  std::fprintf(stderr,
               "xattn_probe --check: %d mismatches (partial attention %d rows x %d tokens in %d splits, "
               "merge, splice)\n",
               failures, rows, tokens, splits);
  return failures;
}

} // namespace probe
