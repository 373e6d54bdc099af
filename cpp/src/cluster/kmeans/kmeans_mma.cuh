// Fast mode's fused KMeans assignment on the tensor cores, register-level:
// mma.sync m16n8k8 TF32 products with 3xTF32 splits (hi.lo' + lo.hi' +
// hi.hi', as core/cuda/tf32_split.cuh; about float's accuracy, no bit
// promise). A warp holds the split fragments of its 16 * MT rows in registers
// for the whole center loop; the centers, split and laid out in fragment
// order (one 128-bit load per lane, product and depth step), sit in shared
// memory, all of them when they fit, else in chunks. The dot products stay in
// the accumulators: each is ranked there by fma(-2, dot, |c|²) (the row's own
// norm is the same for all centers), ties by lowest center. The blocks are
// persistent (one grid over every tile of rows), so the centers are staged
// once per block. Float data, d <= 8 * KS.
//
// The same kernel, certifying (Cert = true), is the filter of the canonical
// assignment (identical and deterministic modes; kmeans_canon.cuh): it keeps
// each row's two smallest ranking values and writes, instead of a label, the
// row's nearest center when no other center can be the canonical nearest one
// (kmeans_common.hpp: certify_threshold), else appends the row to a list for
// the canonical kernel.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>

#include "cluster/kmeans/kmeans_common.hpp"
#include "cluster/kmeans/kmeans_wmma.cuh"
#include "core/cuda/tf32_round.cuh"
#include "core/distance/distance_tile.cuh"

namespace tl::detail {
namespace {

// x = hi + lo (hi its TF32 rounding, lo the TF32 rounding of the rest), as
// the bits the tensor cores take.
__device__ __forceinline__ void split_tf32_pair(float x, unsigned& hi, unsigned& lo) {
  const float h = tf32_round(x);
  hi = __float_as_uint(h);
  lo = __float_as_uint(tf32_round(x - h));
}

// c += a b for one m16n8k8 TF32 product (a: 16 x 8 row fragment, b: 8 x 8).
__device__ __forceinline__ void mma_tf32(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// The kernel's shape: WARPS warps of 16 * MT rows each, depth 8 * KS (d padded
// with zeros), NB products of 8 centers accumulated side by side.
template <int MT, int KS, int NB, int WARPS>
struct MmaAssign {
  static constexpr int kThreads = 32 * WARPS;
  static constexpr int kRows = 16 * MT * WARPS;  // rows per tile
  static constexpr int kCenterStep = 8 * NB;     // a chunk of centers is a multiple of this
  // Shared-memory bytes for a chunk of `chunk` centers: fragments + norms.
  static constexpr std::size_t smem_bytes(int chunk) {
    return static_cast<std::size_t>(chunk / 8) * KS * 32 * sizeof(float4) + sizeof(float) * chunk;
  }
  // Centers staged at once for k centers: all of them (rounded up to the
  // step) when they fit `optin` bytes of shared memory less 1 KiB for the
  // kernel's own, else as many steps as fit; at most `cap` (rounded down to
  // the step, at least one step).
  static int chunk_for(std::int64_t k, int optin, std::int64_t cap) {
    const std::int64_t step = kCenterStep, kpad = (k + step - 1) / step * step;
    const std::int64_t fit = (optin - 1024) / static_cast<std::int64_t>(smem_bytes(kCenterStep)) * step;
    return static_cast<int>(std::min({kpad, std::max(step, cap / step * step), std::max(step, fit)}));
  }
};

// The filter's outputs (assign_mma_kernel with Cert = true): per row of the
// batch, its certified nearest center or -1 (cand), and the rows left
// undecided (list, *count of them, in no particular order).
struct Certify {
  std::int32_t* cand = nullptr;
  std::int32_t* list = nullptr;
  unsigned int* count = nullptr;
};

// Rows [0, rows) of X (row-major, d features, d <= 8 KS) against the k
// centers C (row-major) with squared norms cn: the nearest center per row into
// labels, its squared distance (xn + the ranking value, clamped at 0) into
// mind, the number of changed labels added to *changed. `chunk` centers (a
// multiple of 8 NB) are staged at a time; dynamic shared memory
// MmaAssign::smem_bytes(chunk). Any grid: block b takes tiles b, b + grid, ...
// With Cert, labels, mind and changed are left alone and cert is written
// instead (see Certify).
template <int MT, int KS, int NB, int WARPS, bool Cert = false>
__global__ void __launch_bounds__(32 * WARPS, 1)
    assign_mma_kernel(const float* __restrict__ X, const float* __restrict__ xn, std::int64_t rows,
                      const float* __restrict__ C, const float* __restrict__ cn, int k, int d, int chunk,
                      std::int32_t* __restrict__ labels, float* __restrict__ mind,
                      unsigned long long* __restrict__ changed, Certify cert = {}) {
  using S = MmaAssign<MT, KS, NB, WARPS>;
  extern __shared__ float4 mma_smem[];
  float4* bfrag = mma_smem;  // [chunk / 8][KS][32] of (hi b0, hi b1, lo b0, lo b1)
  float* cns = reinterpret_cast<float*>(bfrag + (chunk / 8) * KS * 32);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
  const std::int64_t tiles = (rows + S::kRows - 1) / S::kRows;
  const int nchunks = (k + chunk - 1) / chunk;

  // Centers [c0, c0 + chunk) into shared memory; centers past k are zero with
  // norm +inf (never ranked first).
  auto stage = [&](int c0) {
    for (int e = threadIdx.x; e < (chunk / 8) * KS * 32; e += S::kThreads) {
      const int l = e % 32, s = (e / 32) % KS, j = e / 32 / KS;
      const int c = c0 + 8 * j + l / 4, f0 = 8 * s + l % 4, f1 = f0 + 4;
      const bool live = c < k;
      const float v0 = live && f0 < d ? C[static_cast<std::int64_t>(c) * d + f0] : 0.0f;
      const float v1 = live && f1 < d ? C[static_cast<std::int64_t>(c) * d + f1] : 0.0f;
      unsigned h0, l0, h1, l1;
      split_tf32_pair(v0, h0, l0);
      split_tf32_pair(v1, h1, l1);
      bfrag[e] = make_float4(__uint_as_float(h0), __uint_as_float(h1), __uint_as_float(l0), __uint_as_float(l1));
    }
    for (int e = threadIdx.x; e < chunk; e += S::kThreads) cns[e] = c0 + e < k ? cn[c0 + e] : INFINITY;
  };
  // The filter's bound takes the largest center norm (a NaN one counts as
  // infinite: nothing is certified).
  float cn_max = 0.0f;
  if constexpr (Cert) cn_max = tile::block_max_sqnorm(cn, k);
  if (nchunks == 1) {
    stage(0);
    __syncthreads();
  }

  unsigned long long ch = 0;
  for (std::int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const std::int64_t wrow0 = tile * S::kRows + static_cast<std::int64_t>(warp) * 16 * MT;
    // The warp's rows as split A fragments: a0 (g, t), a1 (g + 8, t),
    // a2 (g, t + 4), a3 (g + 8, t + 4) of each 16 x 8 block.
    unsigned ah[MT][KS][4], al[MT][KS][4];
#pragma unroll
    for (int m = 0; m < MT; ++m)
#pragma unroll
      for (int s = 0; s < KS; ++s)
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          const std::int64_t r = wrow0 + 16 * m + g + 8 * (q % 2);
          const int f = 8 * s + t + 4 * (q / 2);
          const float x = (r < rows && f < d) ? X[r * d + f] : 0.0f;
          split_tf32_pair(x, ah[m][s][q], al[m][s][q]);
        }
    // Per row (m, h: rows g and g + 8 of block m) the lane's best so far.
    // With Cert also the second smallest value (second) and whether a NaN
    // value was seen (unsure).
    float best[MT][2], second[MT][2];
    int bi[MT][2];
    bool unsure[MT][2];
#pragma unroll
    for (int m = 0; m < MT; ++m)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        best[m][h] = INFINITY;
        second[m][h] = INFINITY;
        bi[m][h] = INT_MAX;
        unsure[m][h] = false;
      }
    for (int ci = 0; ci < nchunks; ++ci) {
      const int c0 = ci * chunk;
      if (nchunks > 1) {
        __syncthreads();  // the previous chunk's readers are done
        stage(c0);
        __syncthreads();
      }
      const int live = k - c0 < chunk ? k - c0 : chunk;
      const int steps = (live + S::kCenterStep - 1) / S::kCenterStep;
      for (int js = 0; js < steps; ++js) {
        float acc[MT][NB][4];
#pragma unroll
        for (int m = 0; m < MT; ++m)
#pragma unroll
          for (int n = 0; n < NB; ++n)
#pragma unroll
            for (int q = 0; q < 4; ++q) acc[m][n][q] = 0.0f;
#pragma unroll
        for (int s = 0; s < KS; ++s) {
          float4 b[NB];
#pragma unroll
          for (int n = 0; n < NB; ++n) b[n] = bfrag[((js * NB + n) * KS + s) * 32 + lane];
#pragma unroll
          for (int m = 0; m < MT; ++m)
#pragma unroll
            for (int n = 0; n < NB; ++n) {
              const unsigned bh0 = __float_as_uint(b[n].x), bh1 = __float_as_uint(b[n].y);
              const unsigned bl0 = __float_as_uint(b[n].z), bl1 = __float_as_uint(b[n].w);
              mma_tf32(acc[m][n], al[m][s], bh0, bh1);
              mma_tf32(acc[m][n], ah[m][s], bl0, bl1);
              mma_tf32(acc[m][n], ah[m][s], bh0, bh1);
            }
        }
        // Accumulator q of block (m, n): row g + 8 (q / 2), center
        // 8 (js NB + n) + 2 t + q % 2. A lane's centers rise: the first of
        // equal values is kept.
#pragma unroll
        for (int n = 0; n < NB; ++n) {
          const int cl = 8 * (js * NB + n) + 2 * t;
          const float cn0 = cns[cl], cn1 = cns[cl + 1];
#pragma unroll
          for (int m = 0; m < MT; ++m)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              const float v0 = fmaf(-2.0f, acc[m][n][2 * h], cn0);
              const float v1 = fmaf(-2.0f, acc[m][n][2 * h + 1], cn1);
              if constexpr (Cert) {
                unsure[m][h] |= !(v0 == v0) || !(v1 == v1);
                second[m][h] = v0 < best[m][h] ? best[m][h] : fminf(second[m][h], v0);
                second[m][h] = v1 < fminf(best[m][h], v0) ? fminf(best[m][h], v0) : fminf(second[m][h], v1);
              }
              if (v0 < best[m][h]) {
                best[m][h] = v0;
                bi[m][h] = c0 + cl;
              }
              if (v1 < best[m][h]) {
                best[m][h] = v1;
                bi[m][h] = c0 + cl + 1;
              }
            }
        }
      }
    }
    // The four lanes of a row (t = 0..3) agree on its best, ties by lowest
    // center; lane t = 0 writes it.
#pragma unroll
    for (int m = 0; m < MT; ++m)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float b = best[m][h], s2 = second[m][h];
        int i = bi[m][h];
        bool u = unsure[m][h];
#pragma unroll
        for (int o = 1; o <= 2; o <<= 1) {
          const float ov = __shfl_xor_sync(0xffffffffu, b, o);
          const int oi = __shfl_xor_sync(0xffffffffu, i, o);
          if constexpr (Cert) {
            // The second smallest of {b, s2, ov, os}, b <= s2 and ov <= os.
            const float os = __shfl_xor_sync(0xffffffffu, s2, o);
            s2 = fminf(fmaxf(b, ov), fminf(s2, os));
            u |= __shfl_xor_sync(0xffffffffu, static_cast<int>(u), o) != 0;
          }
          if (ov < b || (ov == b && oi < i)) {
            b = ov;
            i = oi;
          }
        }
        const std::int64_t r = wrow0 + 16 * m + 8 * h + g;
        if constexpr (Cert) {
          if (t == 0 && r < rows) {
            const bool sure = !u && i != INT_MAX && s2 > certify_threshold(b, xn[r], cn_max);
            cert.cand[r] = sure ? i : -1;
            if (!sure) cert.list[atomicAdd(cert.count, 1u)] = static_cast<std::int32_t>(r);
          }
          continue;
        }
        if (t == 0 && r < rows) {
          ch += labels[r] != i;
          labels[r] = i;
          mind[r] = fmaxf(xn[r] + b, 0.0f);
        }
      }
  }
  add_block_count(ch, changed);
}

}  // namespace
}  // namespace tl::detail
