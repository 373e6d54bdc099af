// Fast mode's fused KMeans assignment on the tensor cores: a block takes 128
// rows and walks the centers 64 at a time; each 128 x 64 tile of dot products
// comes from core/cuda/wmma_tile.cuh (3xTF32, left in shared memory), and
// each row's two threads rank that tile's centers by fma(-2, dot, |c|²) (the
// row's own norm is the same for all), ties by lowest center. No
// dot-product matrix in global memory, one launch per batch. Float data only;
// no bit promise (fast mode). Also here: add_block_count, the changed-label
// count of every assignment kernel of the engine.
#pragma once
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>

#include "core/cuda/wmma_tile.cuh"

namespace tl::detail {
namespace {

// Adds the threads' counts of a block to *total with one atomic (a million
// rows' counts on one address would queue behind each other). Every thread of
// the block calls it.
__device__ __forceinline__ void add_block_count(unsigned long long ch, unsigned long long* __restrict__ total) {
  __shared__ unsigned long long block_sum;
  if (threadIdx.x == 0) block_sum = 0;
  __syncthreads();
#pragma unroll
  for (int o = 16; o >= 1; o >>= 1) ch += __shfl_xor_sync(0xffffffffu, ch, o);
  if (threadIdx.x % 32 == 0 && ch) atomicAdd(&block_sum, ch);
  __syncthreads();
  if (threadIdx.x == 0 && block_sum) atomicAdd(total, block_sum);
}

// Rows [0, rows) of X (row-major, d features) against the k centers C
// (row-major) with squared norms cn: the nearest center per row into labels
// (and its squared distance, xn + the ranking value clamped at 0, into mind),
// the number of labels that changed added to *changed. Block b: rows
// [128 b, 128 b + 128); kWmThreads threads.
__global__ void __launch_bounds__(kWmThreads)
    assign_wmma_kernel(const float* __restrict__ X, const float* __restrict__ xn, std::int64_t rows,
                       const float* __restrict__ C, const float* __restrict__ cn, int k, int d,
                       std::int32_t* __restrict__ labels, float* __restrict__ mind,
                       unsigned long long* __restrict__ changed) {
  __shared__ WmmaTileSmem s;
  const std::int64_t row0 = static_cast<std::int64_t>(blockIdx.x) * kWmRows;
  // The epilogue's owner of row er: two threads, columns eh, eh + 2, ...
  const int er = threadIdx.x / 2, eh = threadIdx.x % 2;
  const bool vec = wmma_vec_ok(X, C, d);
  float best = INFINITY;
  int bi = INT_MAX;
  for (int col0 = 0; col0 < k; col0 += kWmCols) {
    wmma_dot_tile(X, rows, row0, C, k, col0, d, vec, s);
    const float* drow = s.u.dot[er];
    for (int q = eh; q < kWmCols; q += 2) {  // a thread's columns rise: the first of equal values is kept
      const int c = col0 + q;
      if (c < k) {
        const float v = fmaf(-2.0f, drow[q], cn[c]);
        if (v < best) {
          best = v;
          bi = c;
        }
      }
    }
  }
  const float ov = __shfl_xor_sync(0xffffffffu, best, 1);
  const int oi = __shfl_xor_sync(0xffffffffu, bi, 1);
  if (ov < best || (ov == best && oi < bi)) {
    best = ov;
    bi = oi;
  }
  unsigned long long ch = 0;
  const std::int64_t r = row0 + er;
  if (eh == 0 && r < rows) {
    ch = labels[r] != bi;
    labels[r] = bi;
    mind[r] = fmaxf(xn[r] + best, 0.0f);
  }
  add_block_count(ch, changed);
}

}  // namespace
}  // namespace tl::detail
