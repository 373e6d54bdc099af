// 128 x 64 tiles of dot products on the tensor cores with 3xTF32 WMMA
// products (fast mode only): each operand split as hi + lo, hi its TF32
// rounding (lo = x - hi, exact in float, then rounded to TF32), and the tile
// summed as hi.lo' + lo.hi' + hi.hi' per depth step of 8: about float's
// accuracy (as core/cuda/tf32_split.cuh for cuBLAS), no bit promise. The
// tile is left in shared memory for the caller's epilogue, so no dot-product
// matrix goes to global memory. Used by KMeans' fused assignment and the
// fused nearest-neighbour search.
#pragma once
#include <cuda_runtime.h>
#include <mma.h>

#include <cstdint>

namespace tl::detail {
namespace {

namespace wmma = nvcuda::wmma;

// Block shape: 256 threads (8 warps) compute a kWmRows x kWmCols tile, warp w
// the 32 x 32 quarter (w % 4, w / 4) as 2 x 2 fragments of 16 x 16, over the
// depth kWmDepth features at a time.
constexpr int kWmRows = 128, kWmCols = 64, kWmDepth = 16, kWmThreads = 256;
// Shared-memory row strides (floats): multiples of 4, as WMMA's ldm must be,
// and not of 32 (fewer bank conflicts).
constexpr int kWmLdOp = kWmDepth + 4, kWmLdDot = kWmCols + 4;

struct __align__(32) WmmaTileSmem {
  union {
    struct {
      float a[kWmRows][kWmLdOp];  // a tile of the left rows, kWmDepth features
      float b[kWmCols][kWmLdOp];  // a tile of the right rows, the same features
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

// Whether the staging may use 128-bit loads: d a multiple of 4 and both
// operands 16-byte aligned.
__device__ __forceinline__ bool wmma_vec_ok(const float* A, const float* B, int d) {
  return d % 4 == 0 && reinterpret_cast<std::uintptr_t>(A) % 16 == 0 && reinterpret_cast<std::uintptr_t>(B) % 16 == 0;
}

// Rows [r0, r0 + R) of M (rows x d, row-major) from depth k0 into dst
// (R x kWmLdOp); rows past `rows` and features past d are 0.
template <int R>
__device__ __forceinline__ void wmma_stage(const float* __restrict__ M, std::int64_t rows, std::int64_t r0, int d,
                                           int k0, bool vec, float (*dst)[kWmLdOp]) {
  if (vec) {  // four features at a time, all in range or all out (d % 4 == 0)
    for (int e = threadIdx.x; e < R * kWmDepth / 4; e += kWmThreads) {
      const int r = e / (kWmDepth / 4), q = 4 * (e % (kWmDepth / 4));
      const std::int64_t g = r0 + r;
      const float4 v = (g < rows && k0 + q < d) ? *reinterpret_cast<const float4*>(M + g * d + k0 + q)
                                                : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      *reinterpret_cast<float4*>(&dst[r][q]) = v;
    }
  } else {
    for (int e = threadIdx.x; e < R * kWmDepth; e += kWmThreads) {
      const int r = e / kWmDepth, q = e % kWmDepth;
      const std::int64_t g = r0 + r;
      dst[r][q] = (g < rows && k0 + q < d) ? M[g * d + k0 + q] : 0.0f;
    }
  }
}

// s.u.dot[i][j] <- A[row0 + i] . B[col0 + j] for the 128 x 64 tile (rows of A
// past na and of B past nb give 0; d >= 1). Every thread of the block calls
// it; it begins with a barrier (the previous tile's readers are done with s)
// and ends with one (the tile is complete).
// Split = false: plain TF32 products (hi.hi' only), for the tests'
// separating arm.
template <bool Split = true>
__device__ __forceinline__ void wmma_dot_tile(const float* __restrict__ A, std::int64_t na, std::int64_t row0,
                                              const float* __restrict__ B, std::int64_t nb, std::int64_t col0, int d,
                                              bool vec, WmmaTileSmem& s) {
  const int warp = threadIdx.x / 32, wm = warp % 4, wn = warp / 4;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc[2][2];
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
  for (int k0 = 0; k0 < d; k0 += kWmDepth) {
    __syncthreads();  // the previous readers of s (operands or dots) are done
    wmma_stage<kWmRows>(A, na, row0, d, k0, vec, s.u.op.a);
    wmma_stage<kWmCols>(B, nb, col0, d, k0, vec, s.u.op.b);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kWmDepth; kk += 8) {
      wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> ah[2], al[2];
      wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> bh[2], bl[2];
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        wmma::load_matrix_sync(ah[i], &s.u.op.a[wm * 32 + i * 16][kk], kWmLdOp);
        split_fragment(ah[i], al[i]);
      }
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        // B's rows are the product's columns: B (rows x depth, row-major) is
        // Bᵀ column-major.
        wmma::load_matrix_sync(bh[j], &s.u.op.b[wn * 32 + j * 16][kk], kWmLdOp);
        split_fragment(bh[j], bl[j]);
      }
#pragma unroll
      for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          if constexpr (Split) {
            wmma::mma_sync(acc[i][j], al[i], bh[j], acc[i][j]);
            wmma::mma_sync(acc[i][j], ah[i], bl[j], acc[i][j]);
          }
          wmma::mma_sync(acc[i][j], ah[i], bh[j], acc[i][j]);
        }
    }
  }
  __syncthreads();  // the operands are read: the dots may overwrite them
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j)
      wmma::store_matrix_sync(&s.u.dot[wm * 32 + i * 16][wn * 32 + j * 16], acc[i][j], kWmLdDot,
                              wmma::mem_row_major);
  __syncthreads();
}

}  // namespace
}  // namespace tl::detail
