// The CUDA distance tile shared by pairwise distances, nearest neighbours and
// KMeans: a block computes the accumulators of a BM x BN tile of (left row,
// right row) pairs, staging both row tiles through shared memory BK features
// at a time, the way the canonical GEMM kernel (core/gemm/gemm_cuda.cu) does.
//
// Thread mapping: 256 threads as a 16 x 16 grid, tx = threadIdx.x % 16 and
// ty = threadIdx.x / 16. With V = 16 / sizeof(T) (the values of one 128-bit
// access: 4 floats, 2 doubles) and TM = TN = 2V, thread (ty, tx) owns the
// pairs of left rows {V*ty .. V*ty+V-1, BM/2+V*ty .. BM/2+V*ty+V-1} and right
// rows {V*tx .. V*tx+V-1, BN/2+V*tx .. BN/2+V*tx+V-1} of the tile, in
// registers: acc[i][j] belongs to left row row_of<T>(ty, i) and right row
// col_of<T>(tx, j). Each run of V is one 128-bit shared-memory read: the 16
// tx lanes of a half warp read 16 consecutive 16-byte chunks of the right
// tile and one chunk of the left tile, so the reads of a feature are free of
// bank conflicts. The 16 threads that share a ty are 16 consecutive lanes of
// one warp, so per-row reductions across tx are shuffles within a half warp.
//
// Staging: the tile walks the features in steps of BK. Each step, every
// thread reads one 128-bit vector (V consecutive features of one row) of each
// side from global memory (a 16-byte load where d % V == 0 and the matrix is
// 16-byte aligned, V scalar loads otherwise) into registers and stores it
// transposed, [feature][row], into one of two shared-memory buffers. The
// next step's global loads are issued before this step's arithmetic and
// stored to the other buffer after it, so one barrier per step separates the
// buffers. Rows past the matrix and features past d load as zeros.
//
// Order: each pair's accumulator starts at +0.0 and takes one step per feature
// f = 0, 1, ..., d-1 in increasing order (feature steps in order, features
// within a step in order), the chain of distance.hpp. The last step stops at
// d, so no padding feature ever enters a chain.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "core/cuda/launch.cuh"
#include "core/cuda/memory.cuh"
#include "core/distance/distance_common.hpp"

namespace tl::detail::tile {

template <class T>
struct Cfg;
template <>
struct Cfg<float> {
  static constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8, PAD = 4;
};
template <>
struct Cfg<double> {
  static constexpr int BM = 64, BN = 64, BK = 8, TM = 4, TN = 4, PAD = 2;
};
inline constexpr int kThreads = 256;

// V above: values of one 128-bit access.
template <class T>
inline constexpr int kVec = 16 / static_cast<int>(sizeof(T));

// Tile row of a thread's i-th left row, and tile column (right row) of its
// j-th right row; see the mapping above.
template <class T>
__device__ __forceinline__ int row_of(int ty, int i) {
  return (i / kVec<T>) * (Cfg<T>::BM / 2) + ty * kVec<T> + i % kVec<T>;
}
template <class T>
__device__ __forceinline__ int col_of(int tx, int j) {
  return (j / kVec<T>) * (Cfg<T>::BN / 2) + tx * kVec<T> + j % kVec<T>;
}

// The V values at p (16-byte aligned) as one 128-bit access, and back.
__device__ __forceinline__ void load_vec(const float* p, float* r) {
  const float4 v = *reinterpret_cast<const float4*>(p);
  r[0] = v.x;
  r[1] = v.y;
  r[2] = v.z;
  r[3] = v.w;
}
__device__ __forceinline__ void load_vec(const double* p, double* r) {
  const double2 v = *reinterpret_cast<const double2*>(p);
  r[0] = v.x;
  r[1] = v.y;
}
__device__ __forceinline__ void store_vec(float* p, const float* r) {
  *reinterpret_cast<float4*>(p) = make_float4(r[0], r[1], r[2], r[3]);
}
__device__ __forceinline__ void store_vec(double* p, const double* r) {
  *reinterpret_cast<double2*>(p) = make_double2(r[0], r[1]);
}

// Two buffers of both row tiles, [feature][row]. Rows padded so that a
// buffer row stays 16-byte aligned and the transposed stores of a warp (16
// rows at two feature offsets) fall in distinct banks.
template <class T>
struct Smem {
  alignas(16) T a[2][Cfg<T>::BK][Cfg<T>::BM + Cfg<T>::PAD];
  alignas(16) T b[2][Cfg<T>::BK][Cfg<T>::BN + Cfg<T>::PAD];
};

// One thread's share of a step of one side: features f .. f+V-1 of row r of
// A (rows x d, C order), zeros outside the matrix. vec: d % V == 0 and A is
// 16-byte aligned (vec_ok), so with f a multiple of V the V features are one
// aligned vector, all inside the row or all past it.
template <class T>
__device__ __forceinline__ void load_stage(const T* __restrict__ A, std::int64_t rows, std::int64_t d, bool vec,
                                           std::int64_t r, std::int64_t f, T* v) {
  if (vec) {
    if (r < rows && f < d) {
      load_vec(A + r * d + f, v);
    } else {
#pragma unroll
      for (int q = 0; q < kVec<T>; ++q) v[q] = T(0);
    }
  } else {
#pragma unroll
    for (int q = 0; q < kVec<T>; ++q) v[q] = (r < rows && f + q < d) ? A[r * d + f + q] : T(0);
  }
}

template <class T>
__device__ __forceinline__ bool vec_ok(const T* A, std::int64_t d) {
  return d % kVec<T> == 0 && reinterpret_cast<std::uintptr_t>(A) % 16 == 0;
}

// acc[i][j] = accumulator of (X row row0 + row_of<T>(ty, i), Y row
// col0 + col_of<T>(tx, j)). X is m x d and Y n x d, C order, device memory.
// Ends with a barrier, so the caller may call it again with the same s.
template <class T, dist::Family F>
__device__ __forceinline__ void compute_tile(const T* __restrict__ X, std::int64_t m, const T* __restrict__ Y,
                                             std::int64_t n, std::int64_t d, std::int64_t row0, std::int64_t col0,
                                             T p, Smem<T>& s, T (&acc)[Cfg<T>::TM][Cfg<T>::TN]) {
  constexpr int BM = Cfg<T>::BM, BN = Cfg<T>::BN, BK = Cfg<T>::BK, TM = Cfg<T>::TM, TN = Cfg<T>::TN;
  static_assert(TM == 2 * kVec<T> && TN == 2 * kVec<T> && BM == 32 * kVec<T> && BN == BM, "mapping");
  static_assert(kThreads * kVec<T> == BM * BK, "one vector of each side per thread and step");
  const int t = threadIdx.x, tx = t % 16, ty = t / 16;
  // Staging: thread t holds tile row lr, features lk .. lk+V-1 of the step.
  const int lr = t / (BK / kVec<T>), lk = (t % (BK / kVec<T>)) * kVec<T>;
  const bool xvec = vec_ok(X, d), yvec = vec_ok(Y, d);
  T ra[kVec<T>], rb[kVec<T>];
  auto load = [&](std::int64_t f0) {
    load_stage(X, m, d, xvec, row0 + lr, f0 + lk, ra);
    load_stage(Y, n, d, yvec, col0 + lr, f0 + lk, rb);
  };
  auto store = [&](int buf) {
#pragma unroll
    for (int q = 0; q < kVec<T>; ++q) {
      s.a[buf][lk + q][lr] = ra[q];
      s.b[buf][lk + q][lr] = rb[q];
    }
  };
  // One feature: av[i] of left row row_of<T>(ty, i), bv[j] of right row
  // col_of<T>(tx, j).
  auto step = [&](int buf, int kk) {
    T av[TM], bv[TN];
    load_vec(&s.a[buf][kk][kVec<T> * ty], av);
    load_vec(&s.a[buf][kk][BM / 2 + kVec<T> * ty], av + kVec<T>);
    load_vec(&s.b[buf][kk][kVec<T> * tx], bv);
    load_vec(&s.b[buf][kk][BN / 2 + kVec<T> * tx], bv + kVec<T>);
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j) acc[i][j] = dist::Step<T, F>::apply(av[i], bv[j], acc[i][j], p);
  };

#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = T(0);
  // Step st computes from buffer st % 2 while the next step waits in
  // registers; the other buffer is free to overwrite after the arithmetic,
  // as every thread read it before the previous step's barrier.
  const std::int64_t nsteps = (d + BK - 1) / BK;
  if (nsteps == 0) return;
  load(0);
  store(0);
  __syncthreads();
  for (std::int64_t st = 0; st < nsteps; ++st) {
    const int buf = static_cast<int>(st & 1);
    const bool more = st + 1 < nsteps;
    if (more) load((st + 1) * BK);
    const std::int64_t left = d - st * BK;
    if (left >= BK) {
#pragma unroll
      for (int kk = 0; kk < BK; ++kk) step(buf, kk);
    } else {
      for (int kk = 0; kk < static_cast<int>(left); ++kk) step(buf, kk);
    }
    if (more) store(buf ^ 1);
    __syncthreads();
  }
}

// The largest of the squared norms v[0 .. n) (0 when n = 0; a NaN counts as
// +inf), for the bound of the tensor-core filters (dist::filter_bound).
// Every thread of the block calls it and gets the value; blocks of at most
// 1024 threads.
__device__ __forceinline__ float block_max_sqnorm(const float* __restrict__ v, std::int64_t n) {
  __shared__ float warp_max[32];
  float m = 0.0f;
  for (std::int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const float x = v[i];
    m = x == x ? fmaxf(m, x) : INFINITY;
  }
#pragma unroll
  for (int o = 16; o >= 1; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = m;
  __syncthreads();
  for (int w = 0; w < static_cast<int>(blockDim.x / 32); ++w) m = fmaxf(m, warp_max[w]);
  return m;
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
  row_sqnorms_kernel<T><<<blocks_for(rows, 256), 256, 0, stream>>>(A, rows, d, out);
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
