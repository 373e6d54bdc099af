// Where the canonical KMeans assignment's time goes: assign_canon_kernel's
// structure with parts left out (the ranking, the row staging) or changed,
// timed beside the kernel itself and beside a register-only FFMA loop (the
// device's FFMA ceiling at the clock it holds under this load). Build and run
// on a GPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90 -Icpp/src -Icpp/include bench/cuda/canon_probe.cu -o /tmp/canon_probe
//   /tmp/canon_probe
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "cluster/kmeans/kmeans_canon.cuh"
using namespace tl::detail;
#define CK(x)                                                     \
  do {                                                            \
    cudaError_t e = (x);                                          \
    if (e != cudaSuccess) {                                       \
      printf("CUDA %s at %d\n", cudaGetErrorString(e), __LINE__); \
      exit(1);                                                    \
    }                                                             \
  } while (0)

// 64 independent FMA chains a thread, `iters` steps each.
__global__ void __launch_bounds__(256, 2) ffma_peak(float* out, int iters, float a, float b) {
  float acc[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] = threadIdx.x * 1e-3f + i;
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] = fmaf(acc[i], a, b);
  }
  float s = 0;
#pragma unroll
  for (int i = 0; i < 64; ++i) s += acc[i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// assign_canon_kernel (all centers staged once), with RANK = 0 replacing the
// ranking by a sum of the accumulators and RESTAGE = 0 staging the rows of
// the block's first tile only (wrong labels; timing only). PIPE = 1 issues
// a thread's staging loads all before their stores.
template <int RANK, int RESTAGE, int PIPE>
__global__ void __launch_bounds__(256, 2)
    probe_kernel(const float* __restrict__ X, const float* __restrict__ xn, std::int64_t rows,
                 const float* __restrict__ C, const float* __restrict__ cn, int k, int d, int chunk,
                 std::int32_t* __restrict__ labels, float* __restrict__ mind, unsigned long long* __restrict__ changed) {
  using S = CanonAssign;
  constexpr int BM = S::kRows, BN = S::kCenters, XP = BM + S::kPad, V = 4, TM = 8, TN = 8;
  extern __shared__ float4 canon_smem[];
  float* xs = reinterpret_cast<float*>(canon_smem);
  float* xns = xs + d * XP;
  float* cs = xns + BM;
  const int CP = chunk + S::kPad;
  float* cns = cs + d * CP;
  const int t = threadIdx.x, tx = t % 16, ty = t / 16;
  const std::int64_t tiles = (rows + BM - 1) / BM;
  auto stage = [&](const float* __restrict__ A, std::int64_t a0, std::int64_t limit, int m, float* dst, int pitch) {
    const int q4 = d / V;
    if (PIPE && m == BM && d == 64) {
      float4 v[8];
#pragma unroll
      for (int u = 0; u < 8; ++u) {
        const int e = t + u * 256, r = e % BM, f = (e / BM) * V;
        v[u] = a0 + r < limit ? *reinterpret_cast<const float4*>(A + (a0 + r) * d + f) : make_float4(0, 0, 0, 0);
      }
#pragma unroll
      for (int u = 0; u < 8; ++u) {
        const int e = t + u * 256, r = e % BM, f = (e / BM) * V;
        dst[(f + 0) * pitch + r] = v[u].x;
        dst[(f + 1) * pitch + r] = v[u].y;
        dst[(f + 2) * pitch + r] = v[u].z;
        dst[(f + 3) * pitch + r] = v[u].w;
      }
      return;
    }
    for (int e = t; e < m * q4; e += S::kThreads) {
      const int r = e % m, f = (e / m) * V;
      float v[V];
      if (a0 + r < limit) {
        tile::load_vec(A + (a0 + r) * d + f, v);
      } else {
#pragma unroll
        for (int q = 0; q < V; ++q) v[q] = 0.0f;
      }
#pragma unroll
      for (int q = 0; q < V; ++q) dst[(f + q) * pitch + r] = v[q];
    }
  };
  stage(C, 0, k, chunk, cs, CP);
  for (int e = t; e < chunk; e += S::kThreads) cns[e] = e < k ? cn[e] : 0.0f;
  unsigned long long ch = 0;
  bool first = true;
  for (std::int64_t rt = blockIdx.x; rt < tiles; rt += gridDim.x) {
    const std::int64_t row0 = rt * BM;
    if (RESTAGE || first) {
      __syncthreads();
      stage(X, row0, rows, BM, xs, XP);
      for (int e = t; e < BM; e += S::kThreads) xns[e] = row0 + e < rows ? xn[row0 + e] : 0.0f;
      __syncthreads();
    }
    first = false;
    float best[TM];
    int bi[TM];
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      best[i] = tl::dist::empty_value<float>();
      bi[i] = INT_MAX;
    }
    float sink = 0;
    unsigned kbest[TM];
#pragma unroll
    for (int i = 0; i < TM; ++i) kbest[i] = 0xffffffffu;
    for (int j0 = 0; j0 < k; j0 += BN) {
      float acc[TM][TN];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
      const float* xa = xs + V * ty;
      const float* cb = cs + j0 + V * tx;
#pragma unroll 4
      for (int f = 0; f < d; ++f) {
        float av[TM], bv[TN];
        tile::load_vec(xa + f * XP, av);
        tile::load_vec(xa + f * XP + BM / 2, av + V);
        tile::load_vec(cb + f * CP, bv);
        tile::load_vec(cb + f * CP + BN / 2, bv + V);
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
          for (int j = 0; j < TN; ++j) acc[i][j] = tl::num::fma(av[i], bv[j], acc[i][j]);
      }
      if (RANK == 2) {
        // Keys: the clamped value's bits as an unsigned integer (monotone for
        // +0 .. +inf, the canonical NaN above them, the empty slot above all).
#pragma unroll
        for (int j = 0; j < TN; ++j) {
          const int cl = tile::col_of<float>(tx, j), c = j0 + cl;
          if (c >= k) continue;
          const float cc = cns[j0 + cl];
#pragma unroll
          for (int i = 0; i < TM; ++i) {
            const float s = __fsub_rn(__fadd_rn(xns[tile::row_of<float>(ty, i)], cc), __fmul_rn(2.0f, acc[i][j]));
            const unsigned key = (unsigned)max(__float_as_int(s), 0);
            const bool w = key < kbest[i];
            kbest[i] = w ? key : kbest[i];
            bi[i] = w ? c : bi[i];
          }
        }
      } else if (RANK) {
        rank_tile(acc, [&](int i) { return xns[tile::row_of<float>(ty, i)]; }, cns + j0, j0, k, tx, best, bi);
      } else {
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
          for (int j = 0; j < TN; ++j) sink += acc[i][j];
      }
    }
    if (!RANK) {
      best[0] = sink;
      bi[0] = 0;
    }
    if (RANK == 2) {
#pragma unroll
      for (int i = 0; i < TM; ++i) best[i] = __int_as_float((int)kbest[i]);
    }
    write_row_groups(best, bi, row0, ty, tx, rows, labels, mind, ch);
  }
  add_block_count(ch, changed);
}

int attr(cudaDeviceAttr a) {
  int v = 0;
  CK(cudaDeviceGetAttribute(&v, a, 0));
  return v;
}

template <class Launch>
float time_it(Launch&& launch, int reps = 21) {
  launch();
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  CK(cudaEventRecord(a));
  for (int it = 0; it < reps; ++it) launch();
  CK(cudaEventRecord(b));
  CK(cudaEventSynchronize(b));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, a, b));
  return ms / reps;
}

template <int R, int S, int P>
void run_probe(const char* name, const float* X, const float* xn, std::int64_t n, const float* C, const float* cn,
               int k, int d, int* lab, float* mind, unsigned long long* ch, double fmas) {
  const int chunk = (int)CanonAssign::padded(k);
  const size_t smem = CanonAssign::smem_bytes(d, chunk);
  auto kern = probe_kernel<R, S, P>;
  CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  int per = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, kern, 256, smem));
  const std::int64_t tiles = (n + 127) / 128;
  const unsigned grid = (unsigned)std::min<std::int64_t>(tiles, (std::int64_t)per * attr(cudaDevAttrMultiProcessorCount));
  const float ms = time_it([&] { kern<<<grid, 256, smem>>>(X, xn, n, C, cn, k, d, chunk, lab, mind, ch); });
  printf("%-40s %8.4f ms  %6.1f TFMA/s  (occ %d)", name, ms, fmas / (ms * 1e-3) / 1e12, per);
  // Rows whose label or distance bits differ from the first (engine) run's.
  static std::vector<int> lab0;
  static std::vector<unsigned> md0;
  std::vector<int> l(n);
  std::vector<unsigned> m(n);
  CK(cudaMemcpy(l.data(), lab, 4 * n, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(m.data(), mind, 4 * n, cudaMemcpyDeviceToHost));
  if (lab0.empty()) {
    lab0 = l;
    md0 = m;
    printf("\n");
  } else if (R && S) {
    long diff = 0;
    for (std::int64_t i = 0; i < n; ++i) diff += l[i] != lab0[i] || m[i] != md0[i];
    printf("  bit mismatches %ld\n", diff);
  } else {
    printf("\n");
  }
}

int main() {
  const int sms = attr(cudaDevAttrMultiProcessorCount);
  {
    float* out;
    CK(cudaMalloc(&out, 4 * 256 * 2 * sms));
    const int iters = 20000;
    const float ms = time_it([&] { ffma_peak<<<2 * sms, 256>>>(out, iters, 0.999f, 1e-3f); }, 5);
    const double fmas = 2.0 * sms * 256 * 64.0 * iters;
    printf("%-40s %8.4f ms  %6.1f TFMA/s  (%.0f MHz equivalent at 128 FMA/clk/SM)\n", "register-only FFMA", ms,
           fmas / (ms * 1e-3) / 1e12, fmas / (ms * 1e-3) / (128.0 * sms) / 1e6);
  }
  const std::int64_t n = 1000000;
  const int d = 64, k = 256;
  std::mt19937 rng(1);
  std::normal_distribution<float> N(0.f, 1.f);
  std::vector<float> hX(n * d), hC(k * d), hxn(n), hcn(k);
  for (auto& v : hX) v = N(rng);
  for (auto& v : hC) v = N(rng);
  for (std::int64_t i = 0; i < n; ++i) {
    float s = 0;
    for (int f = 0; f < d; ++f) s = fmaf(hX[i * d + f], hX[i * d + f], s);
    hxn[i] = s;
  }
  for (int c = 0; c < k; ++c) {
    float s = 0;
    for (int f = 0; f < d; ++f) s = fmaf(hC[c * d + f], hC[c * d + f], s);
    hcn[c] = s;
  }
  float *X, *xn, *C, *cn, *mind;
  int* lab;
  unsigned long long* ch;
  CK(cudaMalloc(&X, 4 * n * d));
  CK(cudaMalloc(&xn, 4 * n));
  CK(cudaMalloc(&C, 4 * k * d));
  CK(cudaMalloc(&cn, 4 * k));
  CK(cudaMalloc(&mind, 4 * n));
  CK(cudaMalloc(&lab, 4 * n));
  CK(cudaMalloc(&ch, 8));
  CK(cudaMemcpy(X, hX.data(), 4 * n * d, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(xn, hxn.data(), 4 * n, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(C, hC.data(), 4 * k * d, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(cn, hcn.data(), 4 * k, cudaMemcpyHostToDevice));
  const double fmas = (double)n * k * d;
  run_probe<1, 1, 0>("canon (as the engine)", X, xn, n, C, cn, k, d, lab, mind, ch, fmas);
  run_probe<0, 1, 0>("canon, no ranking", X, xn, n, C, cn, k, d, lab, mind, ch, fmas);
  run_probe<1, 0, 0>("canon, rows staged once", X, xn, n, C, cn, k, d, lab, mind, ch, fmas);
  run_probe<0, 0, 0>("canon, no ranking, rows once", X, xn, n, C, cn, k, d, lab, mind, ch, fmas);
  run_probe<1, 1, 1>("canon, batched staging loads", X, xn, n, C, cn, k, d, lab, mind, ch, fmas);
  run_probe<2, 1, 0>("canon, integer-key ranking", X, xn, n, C, cn, k, d, lab, mind, ch, fmas);
  run_probe<2, 1, 1>("canon, integer keys + batched loads", X, xn, n, C, cn, k, d, lab, mind, ch, fmas);
  return 0;
}
