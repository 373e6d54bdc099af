// Fast mode's fused KMeans assignment on the tensor cores: a block takes 128
// rows and walks the centers 64 at a time; for each such tile its eight warps
// form the 128 x 64 dot products with 3xTF32 WMMA products (each operand
// split as hi + lo, hi its TF32 rounding: hi.hi' + hi.lo' + lo.hi', about
// float's accuracy, as core/cuda/tf32_split.cuh), leave them in shared
// memory, and each row's two threads rank that tile's centers by
// fma(-2, dot, |c|²) (the row's own norm is the same for all), ties by lowest
// center. No dot-product matrix in global memory, one launch per batch.
// Float data only; no bit promise (fast mode). Also here: add_block_count,
// the changed-label count that every assignment kernel of the engine uses.
#pragma once
#include <cuda_runtime.h>
#include <mma.h>

#include <climits>
#include <cstdint>

#include "core/cuda/check.cuh"

namespace tl::detail {
namespace {

namespace wmma = nvcuda::wmma;

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

constexpr int kWmRows = 128, kWmCenters = 64, kWmDepth = 16, kWmThreads = 256;
// Shared-memory row strides (floats): multiples of 4, as WMMA's ldm must be,
// and not of 32 (fewer bank conflicts).
constexpr int kWmLdOp = kWmDepth + 4, kWmLdDot = kWmCenters + 4;

struct __align__(32) WmmaAssignSmem {
  union {
    struct {
      float x[kWmRows][kWmLdOp];     // a tile of rows, kWmDepth features
      float c[kWmCenters][kWmLdOp];  // a tile of centers, the same features
    } op;
    float dot[kWmRows][kWmLdDot];  // the tile's dot products
  } u;
};

// hi <- TF32(x), lo <- TF32(x - hi), element by element (the elements of a
// fragment are plain floats after load_matrix_sync).
template <class Frag>
__device__ __forceinline__ void split_fragment(Frag& hi, Frag& lo) {
#pragma unroll
  for (int t = 0; t < hi.num_elements; ++t) {
    const float x = hi.x[t];
    const float h = wmma::__float_to_tf32(x);
    hi.x[t] = h;
    lo.x[t] = wmma::__float_to_tf32(x - h);
  }
}

// Rows [0, rows) of X (row-major, d features) against the k centers C
// (row-major) with squared norms cn: the nearest center per row into labels
// (and its squared distance, xn + the ranking value clamped at 0, into mind),
// the number of labels that changed added to *changed. Block b: rows
// [128 b, 128 b + 128). Warp w computes the 32 x 32 quarter (w % 4, w / 4)
// of each 128 x 64 tile as 2 x 2 fragments of 16 x 16.
__global__ void __launch_bounds__(kWmThreads)
    assign_wmma_kernel(const float* __restrict__ X, const float* __restrict__ xn, std::int64_t rows,
                       const float* __restrict__ C, const float* __restrict__ cn, int k, int d,
                       std::int32_t* __restrict__ labels, float* __restrict__ mind,
                       unsigned long long* __restrict__ changed) {
  __shared__ WmmaAssignSmem s;
  const std::int64_t row0 = static_cast<std::int64_t>(blockIdx.x) * kWmRows;
  const int warp = threadIdx.x / 32, wm = warp % 4, wn = warp / 4;
  // The epilogue's owner of row r = threadIdx.x / 2, columns h, h + 2, ...
  const int er = threadIdx.x / 2, eh = threadIdx.x % 2;
  const bool vec = d % 4 == 0 && reinterpret_cast<std::uintptr_t>(X) % 16 == 0 &&
                   reinterpret_cast<std::uintptr_t>(C) % 16 == 0;
  float best = INFINITY;
  int bi = INT_MAX;
  for (int col0 = 0; col0 < k; col0 += kWmCenters) {
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc[2][2];
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
      for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
    for (int k0 = 0; k0 < d; k0 += kWmDepth) {
      if (vec) {  // 128-bit loads: four features at a time, all in range or all out (d % 4 == 0)
        for (int e = threadIdx.x; e < kWmRows * kWmDepth / 4; e += kWmThreads) {
          const int r = e / (kWmDepth / 4), q = 4 * (e % (kWmDepth / 4));
          const std::int64_t gr = row0 + r;
          const float4 v = (gr < rows && k0 + q < d) ? *reinterpret_cast<const float4*>(X + gr * d + k0 + q)
                                                     : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
          *reinterpret_cast<float4*>(&s.u.op.x[r][q]) = v;
        }
        for (int e = threadIdx.x; e < kWmCenters * kWmDepth / 4; e += kWmThreads) {
          const int r = e / (kWmDepth / 4), q = 4 * (e % (kWmDepth / 4));
          const int gc = col0 + r;
          const float4 v = (gc < k && k0 + q < d)
                               ? *reinterpret_cast<const float4*>(C + static_cast<std::int64_t>(gc) * d + k0 + q)
                               : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
          *reinterpret_cast<float4*>(&s.u.op.c[r][q]) = v;
        }
      } else {
        for (int e = threadIdx.x; e < kWmRows * kWmDepth; e += kWmThreads) {
          const int r = e / kWmDepth, q = e % kWmDepth;
          const std::int64_t gr = row0 + r;
          s.u.op.x[r][q] = (gr < rows && k0 + q < d) ? X[gr * d + k0 + q] : 0.0f;
        }
        for (int e = threadIdx.x; e < kWmCenters * kWmDepth; e += kWmThreads) {
          const int r = e / kWmDepth, q = e % kWmDepth;
          const int gc = col0 + r;
          s.u.op.c[r][q] = (gc < k && k0 + q < d) ? C[static_cast<std::int64_t>(gc) * d + k0 + q] : 0.0f;
        }
      }
      __syncthreads();
#pragma unroll
      for (int kk = 0; kk < kWmDepth; kk += 8) {
        wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> ah[2], al[2];
        wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> bh[2], bl[2];
#pragma unroll
        for (int i = 0; i < 2; ++i) {
          wmma::load_matrix_sync(ah[i], &s.u.op.x[wm * 32 + i * 16][kk], kWmLdOp);
          split_fragment(ah[i], al[i]);
        }
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          // C's rows are the columns of the product: C (centers x depth,
          // row-major) is Cᵀ column-major.
          wmma::load_matrix_sync(bh[j], &s.u.op.c[wn * 32 + j * 16][kk], kWmLdOp);
          split_fragment(bh[j], bl[j]);
        }
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
          for (int j = 0; j < 2; ++j) {
            wmma::mma_sync(acc[i][j], al[i], bh[j], acc[i][j]);
            wmma::mma_sync(acc[i][j], ah[i], bl[j], acc[i][j]);
            wmma::mma_sync(acc[i][j], ah[i], bh[j], acc[i][j]);
          }
      }
      __syncthreads();  // the staged operands are read; the next depth (or the dots) may overwrite them
    }
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
      for (int j = 0; j < 2; ++j)
        wmma::store_matrix_sync(&s.u.dot[wm * 32 + i * 16][wn * 32 + j * 16], acc[i][j], kWmLdDot,
                                wmma::mem_row_major);
    __syncthreads();
    const float* drow = s.u.dot[er];
    for (int q = eh; q < kWmCenters; q += 2) {  // a thread's columns rise: the first of equal values is kept
      const int c = col0 + q;
      if (c < k) {
        const float v = fmaf(-2.0f, drow[q], cn[c]);
        if (v < best) {
          best = v;
          bi = c;
        }
      }
    }
    __syncthreads();  // the dots are read; the next tile's operands may overwrite them
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
