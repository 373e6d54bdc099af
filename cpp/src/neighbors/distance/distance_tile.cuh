// The CUDA distance tile shared by pairwise distances, nearest neighbours and
// KMeans: a block computes the accumulators of a BM x BN tile of (left row,
// right row) pairs, loading both row tiles through shared memory BK features
// at a time.
//
// Thread mapping: 256 threads as a 16 x 16 grid, tx = threadIdx.x % 16 and
// ty = threadIdx.x / 16. Thread (ty, tx) owns the TM x TN pairs of left rows
// ty*TM .. ty*TM+TM-1 and right rows tx*TN .. tx*TN+TN-1 of the tile, in
// registers. The 16 threads that share a ty are 16 consecutive lanes of one
// warp, so per-row reductions across tx are shuffles within a half warp.
//
// Order: each pair's accumulator starts at +0.0 and takes one step per feature
// f = 0, 1, ..., d-1 in increasing order (feature tiles in order, features
// within a tile in order), the chain of distance.hpp. Features past d are
// loaded as zeros on both sides; a step with x = y = 0 leaves every
// accumulator unchanged (acc >= +0 or a dot chain, which never holds -0), so
// the padding changes no bit.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "core/cuda/memory.cuh"
#include "neighbors/distance/distance_common.hpp"

namespace tl::detail::tile {

template <class T>
struct Cfg;
template <>
struct Cfg<float> {
  static constexpr int BM = 128, BN = 128, BK = 16, TM = 8, TN = 8, PAD = 4;
};
template <>
struct Cfg<double> {
  static constexpr int BM = 64, BN = 64, BK = 16, TM = 4, TN = 4, PAD = 2;
};
inline constexpr int kThreads = 256;

// Rows padded to a multiple of 16 bytes and 16-byte aligned, so a thread's
// TM (TN) consecutive values load as 128-bit shared-memory accesses.
template <class T>
struct Smem {
  alignas(16) T a[Cfg<T>::BK][Cfg<T>::BM + Cfg<T>::PAD];
  alignas(16) T b[Cfg<T>::BK][Cfg<T>::BN + Cfg<T>::PAD];
};

// Loads rows [r0, r0 + R) x features [f0, f0 + BK) of A (rows x d, C order)
// transposed into dst[f][r], zeros outside. Consecutive threads read
// consecutive features of a row.
template <class T, int R>
__device__ __forceinline__ void load_tile(const T* __restrict__ A, std::int64_t rows, std::int64_t d,
                                          std::int64_t r0, std::int64_t f0, T (*dst)[R + Cfg<T>::PAD]) {
  constexpr int BK = Cfg<T>::BK;
#pragma unroll
  for (int e = threadIdx.x; e < R * BK; e += kThreads) {
    const int rr = e / BK, kk = e % BK;
    const std::int64_t r = r0 + rr, f = f0 + kk;
    dst[kk][rr] = (r < rows && f < d) ? A[r * d + f] : T(0);
  }
}

// acc[i][j] = accumulator of (X row row0 + ty*TM + i, Y row col0 + tx*TN + j).
template <class T, dist::Family F>
__device__ __forceinline__ void compute_tile(const T* __restrict__ X, std::int64_t m, const T* __restrict__ Y,
                                             std::int64_t n, std::int64_t d, std::int64_t row0, std::int64_t col0,
                                             T p, Smem<T>& s, T (&acc)[Cfg<T>::TM][Cfg<T>::TN]) {
  constexpr int BM = Cfg<T>::BM, BN = Cfg<T>::BN, BK = Cfg<T>::BK, TM = Cfg<T>::TM, TN = Cfg<T>::TN;
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = T(0);
  for (std::int64_t f0 = 0; f0 < d; f0 += BK) {
    load_tile<T, BM>(X, m, d, row0, f0, s.a);
    load_tile<T, BN>(Y, n, d, col0, f0, s.b);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      T av[TM], bv[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) av[i] = s.a[kk][ty * TM + i];
#pragma unroll
      for (int j = 0; j < TN; ++j) bv[j] = s.b[kk][tx * TN + j];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = dist::Step<T, F>::apply(av[i], bv[j], acc[i][j], p);
    }
    __syncthreads();
  }
}

// Squared norms of the rows of A (rows x d): one thread per row, the dot chain.
template <class T>
__global__ void row_sqnorms_kernel(const T* __restrict__ A, std::int64_t rows, std::int64_t d, T* __restrict__ out) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < rows) out[i] = dist::sqnorm(A + i * d, d);
}

template <class T>
void row_sqnorms(const T* A, std::int64_t rows, std::int64_t d, T* out, cudaStream_t stream) {
  if (rows == 0) return;
  row_sqnorms_kernel<T><<<static_cast<unsigned>((rows + 255) / 256), 256, 0, stream>>>(A, rows, d, out);
  TL_CUDA_CHECK_LAUNCH("row_sqnorms_kernel");
}

// Lexicographic (value, index) minimum across the 16 lanes of a half warp.
template <class T>
__device__ __forceinline__ void halfwarp_argmin(T& v, std::int64_t& i) {
#pragma unroll
  for (int o = 8; o >= 1; o >>= 1) {
    const T ov = __shfl_xor_sync(0xffffffffu, v, o);
    const std::int64_t oi = __shfl_xor_sync(0xffffffffu, i, o);
    if (dist::nearer(ov, oi, v, i)) {
      v = ov;
      i = oi;
    }
  }
}

}  // namespace tl::detail::tile
