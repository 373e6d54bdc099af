// The canonical CUDA Gram kernels (gram_cuda.cu): chunk partials on the
// double-precision tensor cores (gram_mma_kernel), the target columns'
// partials (gram_cross_kernel), and the canonical tree over the chunks.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "core/cuda/dmma.cuh"
#include "core/gram/gram_common.hpp"
#include "core/gram/gram_load.cuh"

namespace tl::detail {
namespace {

constexpr int kTile = 128;     // output tile edge
constexpr int kStage = 16;     // rows staged per step (two k-groups of the tile product)
constexpr int kLd = kTile + 4; // shared row stride in doubles: fragment loads free of bank conflicts
constexpr int kThreads = 256;
constexpr std::size_t kMmaSmem = sizeof(double) * 2 * 2 * kStage * kLd;  // [buffer][A|B][row][col]


// Chunk partials of one batch, in double, on the double-precision tensor
// cores (core/cuda/dmma.cuh: each tile product is the chain of fma in row
// order).
//
// Mapping: blockIdx.y is the chunk (first_chunk + blockIdx.y); blockIdx.x is
// an upper-triangle tile pair (ti <= tj) of the D x D output, enumerated row
// by row. The block computes the 128 x 128 tile at rows 128*ti, columns
// 128*tj over the chunk's rows: warp w the 64 x 32 quarter at rows
// 64*(w / 4), columns 32*(w % 4), as 4 x 4 tile products of 16 x 8 whose
// accumulators stay in registers. The chunk's rows are staged 16 at a time
// in shared memory (centred in T, widened to double), double-buffered
// through registers (the next step's raw entries are loaded before this
// step's products and centred after them): thread t loads rows t/32 and
// t/32 + 8 of the step, columns 4*(t%32)..+3 of both tiles (a warp reads 128
// consecutive entries of one row of X; 128-bit loads where the four columns
// are X's and X is aligned). Each step is two products of depth 8 (rows 0-7, 8-15), so every
// accumulator receives fma(Zc[i, j], Zc[i, k], acc) for the chunk's rows i
// in increasing order and nothing else: the canonical chain. A last step of
// fewer than 16 rows takes its whole groups of 8 on the tensor cores and the
// rest as scalar fma in row order (padding with zero rows would turn a -0
// accumulator into +0). The tiles cover the first dt columns of Zc (all of
// them, or the columns of X when the cross kernel below takes the targets);
// out-of-range columns load zeros and are not stored.
template <class T>
__global__ void __launch_bounds__(kThreads, 1)
    gram_mma_kernel(const T* __restrict__ X, std::int64_t d, const T* __restrict__ Y, std::int64_t t,
                    const T* __restrict__ w, const T* __restrict__ off, std::int64_t n, std::int64_t chunk,
                    std::int64_t first_chunk, int ntiles, std::int64_t dt, bool vec, double* __restrict__ P) {
  extern __shared__ __align__(16) double smem[];
  auto As = [&](int buf, int r) { return smem + ((buf * 2 + 0) * kStage + r) * kLd; };
  auto Bs = [&](int buf, int r) { return smem + ((buf * 2 + 1) * kStage + r) * kLd; };
  const std::int64_t D = d + t;
  int p = static_cast<int>(blockIdx.x), ti = 0, len = ntiles;
  while (p >= len) {
    p -= len;
    ++ti;
    --len;
  }
  const int tj = ti + p;
  const std::int64_t j0 = static_cast<std::int64_t>(ti) * kTile, k0 = static_cast<std::int64_t>(tj) * kTile;
  const std::int64_t r0 = (first_chunk + blockIdx.y) * chunk;
  const std::int64_t r1 = min(n, r0 + chunk);
  const bool weighted = w != nullptr;

  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int g = lane / 4, q = lane % 4;
  const int wm = 64 * (warp / 4), wn = 32 * (warp % 4);
  const int lr = tid >> 5, lc = (tid & 31) * 4;
  T ra[2][4], rb[2][4];
  // The offsets of the block's columns (both tiles), in shared memory.
  __shared__ T offs[2][kTile];
  const bool has_off = off != nullptr;
  if (has_off) {
    for (int e = tid; e < 2 * kTile; e += kThreads) {
      const std::int64_t col = (e < kTile ? j0 : k0 - kTile) + e;
      offs[e / kTile][e % kTile] = col < D ? off[col] : T(0);
    }
  }

  // The loads of a step only fill registers (raw entries, the rows' weights);
  // centring, weighting and widening wait for store_step, after the step's
  // products, so that the loads' latency overlaps them.
  bool live[2];
  T wr[2];
  auto load_cols = [&](std::int64_t i, std::int64_t c0, T (&v)[4]) {
    if (load_x4(X, d, vec, i, c0, v)) return;
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const std::int64_t col = c0 + e;
      v[e] = col < dt ? (col < d ? X[i * d + col] : Y[i * t + (col - d)]) : T(0);
    }
  };
  auto load_step = [&](std::int64_t i0) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const std::int64_t i = i0 + lr + 8 * h;
      live[h] = i < r1;
      if (live[h]) {
        wr[h] = weighted ? w[i] : T(1);
        load_cols(i, j0 + lc, ra[h]);
        load_cols(i, k0 + lc, rb[h]);
      }
    }
  };
  // Zc entries of a staged row (zeros past the chunk and past dt), widened.
  auto widen = [&](const T (&v)[4], const T* o, std::int64_t c0, T s, bool row_live, double (&z)[4]) {
#pragma unroll
    for (int e = 0; e < 4; ++e)
      z[e] = row_live && c0 + e < dt ? static_cast<double>(gram_detail::centred_by(v[e], has_off, o[e], s, weighted))
                                     : 0.0;
  };
  auto store_step = [&](int buf) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const T s = weighted && live[h] ? num::sqrt(wr[h]) : T(1);
      double za[4], zb[4];
      widen(ra[h], offs[0] + lc, j0 + lc, s, live[h], za);
      widen(rb[h], offs[1] + lc, k0 + lc, s, live[h], zb);
      double* a = As(buf, lr + 8 * h) + lc;
      double* b = Bs(buf, lr + 8 * h) + lc;
      reinterpret_cast<double2*>(a)[0] = make_double2(za[0], za[1]);
      reinterpret_cast<double2*>(a)[1] = make_double2(za[2], za[3]);
      reinterpret_cast<double2*>(b)[0] = make_double2(zb[0], zb[1]);
      reinterpret_cast<double2*>(b)[1] = make_double2(zb[2], zb[3]);
    }
  };

  double acc[4][4][4];
#pragma unroll
  for (int a = 0; a < 4; ++a)
#pragma unroll
    for (int b = 0; b < 4; ++b)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[a][b][e] = 0.0;

  // One product of depth 8 over staged rows k8..k8+7 of buffer buf.
  auto group = [&](int buf, int k8) {
    double bf[4][2];
#pragma unroll
    for (int nt = 0; nt < 4; ++nt) {
      bf[nt][0] = Bs(buf, k8 + q)[wn + 8 * nt + g];
      bf[nt][1] = Bs(buf, k8 + q + 4)[wn + 8 * nt + g];
    }
#pragma unroll
    for (int mt = 0; mt < 4; ++mt) {
      const int m = wm + 16 * mt + g;
      const double af[4] = {As(buf, k8 + q)[m], As(buf, k8 + q)[m + 8], As(buf, k8 + q + 4)[m],
                            As(buf, k8 + q + 4)[m + 8]};
#pragma unroll
      for (int nt = 0; nt < 4; ++nt) dmma_16x8x8(acc[mt][nt], af, bf[nt]);
    }
  };
  // Staged row kk of buffer buf as scalar fma (the tail of the chunk).
  auto single_row = [&](int buf, int kk) {
#pragma unroll
    for (int mt = 0; mt < 4; ++mt)
#pragma unroll
      for (int nt = 0; nt < 4; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int m = wm + 16 * mt + g + 8 * (e / 2), c = wn + 8 * nt + 2 * q + (e % 2);
          acc[mt][nt][e] = num::fma(As(buf, kk)[m], Bs(buf, kk)[c], acc[mt][nt][e]);
        }
  };

  const std::int64_t rows = r1 - r0;
  const std::int64_t nsteps = (rows + kStage - 1) / kStage;
  __syncthreads();  // offs
  load_step(r0);
  store_step(0);
  __syncthreads();
  for (std::int64_t s = 0; s < nsteps; ++s) {
    const int buf = static_cast<int>(s & 1);
    const bool more = s + 1 < nsteps;
    if (more) load_step(r0 + (s + 1) * kStage);
    const std::int64_t left = rows - s * kStage;
    if (left >= kStage) {
      group(buf, 0);
      group(buf, 8);
    } else {
      const int full = static_cast<int>(left) / 8 * 8;
      if (full > 0) group(buf, 0);
      for (int kk = full; kk < static_cast<int>(left); ++kk) single_row(buf, kk);
    }
    if (more) store_step(buf ^ 1);
    __syncthreads();
  }

  double* out = P + static_cast<std::int64_t>(blockIdx.y) * D * D;
#pragma unroll
  for (int mt = 0; mt < 4; ++mt)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const std::int64_t j = j0 + wm + 16 * mt + g + 8 * (e / 2);
      if (j >= dt) continue;
#pragma unroll
      for (int nt = 0; nt < 4; ++nt) {
        const std::int64_t k = k0 + wn + 8 * nt + 2 * q + (e % 2);
        if (k < dt) out[j * D + k] = acc[mt][nt][e];
      }
    }
}

constexpr int kCrossRows = 256;     // rows staged per step by the cross kernel
constexpr int kCrossMaxTargets = 8;  // targets handled by the cross kernel

// Chunk partials of the target columns: entries (j, d + c) for j <= d + c,
// c < t (X'y and y'y), for t <= kCrossMaxTargets, so that the tile kernel
// need not spend a whole 128-wide tile on a few target columns.
//
// Mapping: blockIdx.x is the chunk (first_chunk + blockIdx.x). Thread tid
// owns the pairs p = tid, tid + 256, ... of the list (j, c), j = p % (d + t),
// c = p / (d + t) (pairs with j > d + c are skipped). The chunk's rows are
// walked 256 at a time: the block stages the target entries Zc[i, d + c] of
// those rows in shared memory, then each thread continues its chains over
// them in row order, reading Zc[i, j] from X (the threads of a warp read
// consecutive columns of one row). Every entry is one fma chain over the
// chunk's rows in increasing order: the canonical chain.
template <class T>
__global__ void __launch_bounds__(kThreads) gram_cross_kernel(const T* __restrict__ X, std::int64_t d,
                                                              const T* __restrict__ Y, std::int64_t t,
                                                              const T* __restrict__ w, const T* __restrict__ off,
                                                              std::int64_t n, std::int64_t chunk,
                                                              std::int64_t first_chunk, double* __restrict__ P) {
  __shared__ double ys[kCrossRows][kCrossMaxTargets];
  __shared__ T ss[kCrossRows];
  const std::int64_t D = d + t;
  const std::int64_t r0 = (first_chunk + blockIdx.x) * chunk;
  const std::int64_t r1 = min(n, r0 + chunk);
  const bool weighted = w != nullptr;
  constexpr int kPairs = 4;  // pairs per thread kept in registers (up to 1024 pairs per pass)
  double* out = P + static_cast<std::int64_t>(blockIdx.x) * D * D;
  const std::int64_t npairs = D * t;
  for (std::int64_t pbase = 0; pbase < npairs; pbase += static_cast<std::int64_t>(kThreads) * kPairs) {
    double acc[kPairs];
    std::int64_t jj[kPairs], cc[kPairs];
    bool live[kPairs];
#pragma unroll
    for (int u = 0; u < kPairs; ++u) {
      const std::int64_t p = pbase + static_cast<std::int64_t>(u) * kThreads + threadIdx.x;
      jj[u] = p % D;
      cc[u] = p / D;
      live[u] = p < npairs && jj[u] <= d + cc[u];
      acc[u] = 0.0;
    }
    for (std::int64_t i0 = r0; i0 < r1; i0 += kCrossRows) {
      const int rows = static_cast<int>(r1 - i0 < kCrossRows ? r1 - i0 : kCrossRows);
      __syncthreads();
      for (int e = threadIdx.x; e < rows; e += kThreads) {
        const std::int64_t i = i0 + e;
        const T s = weighted ? num::sqrt(w[i]) : T(1);
        ss[e] = s;
        for (std::int64_t c = 0; c < t; ++c)
          ys[e][c] = static_cast<double>(gram_detail::centred(Y[i * t + c], off, d + c, s, weighted));
      }
      __syncthreads();
#pragma unroll
      for (int u = 0; u < kPairs; ++u) {
        if (!live[u]) continue;
        const std::int64_t j = jj[u], c = cc[u];
        double a = acc[u];
        if (j < d) {
          for (int e = 0; e < rows; ++e) {
            const double x = static_cast<double>(gram_detail::centred(X[(i0 + e) * d + j], off, j, ss[e], weighted));
            a = num::fma(x, ys[e][c], a);
          }
        } else {
          for (int e = 0; e < rows; ++e) a = num::fma(ys[e][j - d], ys[e][c], a);
        }
        acc[u] = a;
      }
    }
#pragma unroll
    for (int u = 0; u < kPairs; ++u)
      if (live[u]) out[jj[u] * D + d + cc[u]] = acc[u];
  }
}

// The canonical tree over the nc chunk partials of a batch. One thread per
// element e = j*D + k of the D x D output: the upper triangle's sums, zeros
// below (so the whole output is written before it is downloaded); the threads
// of a warp read consecutive elements of the same partial (coalesced).
__global__ void gram_tree_kernel(const double* __restrict__ P, std::int64_t D, std::int64_t nc,
                                 double* __restrict__ R) {
  const std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t DD = D * D;
  if (e >= DD) return;
  if (e / D > e % D) {
    R[e] = 0.0;
    return;
  }
  gram_detail::TreeStack st;
  for (std::int64_t c = 0; c < nc; ++c) st.push(P[c * DD + e]);
  R[e] = st.result();
}

}  // namespace
}  // namespace tl::detail
