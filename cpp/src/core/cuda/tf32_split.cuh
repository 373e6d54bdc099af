// Split operands for 3xTF32 products on the tensor cores (fast mode only):
// a float x is hi + lo, hi = x rounded to TF32 (10 mantissa bits, round to
// nearest, ties away), lo = x - hi (exact in float). Rows of the left
// operand stored as [hi | hi | lo] and of the right one as [hi | lo | hi]
// make one TF32 product of depth 3d equal to hi.hi' + hi.lo' + lo.hi', the
// dot product to about float's accuracy (lo.lo' is below float rounding; lo
// enters the tensor cores as TF32). Used by KMeans' assignment and the
// nearest-neighbour search.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdlib>

#include "core/cuda/blas.cuh"
#include "core/cuda/check.cuh"
#include "twinlearn/core/numerics.hpp"

namespace tl::detail {
namespace {

__device__ __forceinline__ float tf32_round(float x) {
  unsigned u;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(u) : "f"(x));
  return __uint_as_float(u);
}

// out (rows x 3d) from A (rows x d, row-major): [hi | hi | lo], or
// [hi | lo | hi] with lo_middle. One thread per entry of A.
__global__ void split_tf32_kernel(const float* __restrict__ A, std::int64_t rows, std::int64_t d,
                                         bool lo_middle, float* __restrict__ out) {
  const std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= rows * d) return;
  const std::int64_t r = e / d, f = e - r * d;
  const float x = A[e], hi = tf32_round(x), lo = num::sub(x, hi);
  float* o = out + r * 3 * d;
  o[f] = hi;
  o[d + f] = lo_middle ? lo : hi;
  o[2 * d + f] = lo_middle ? hi : lo;
}

// Bytes of the dot-product block that one 3xTF32 GEMM of the fast searches
// writes and the selection kernel then reads (KMeans: rows x clusters; the
// neighbours: queries x index chunk): 32 MiB, or TWINLEARN_FAST_CHUNK_BYTES
// (at least 1 MiB) to measure other sizes or to force many chunks in tests.
// Smaller blocks mean more launches; at 32 MiB the H200 read them back from
// DRAM anyway (L2 hit rate 4% under ncu).
std::int64_t fast_chunk_bytes() {
  if (const char* env = std::getenv("TWINLEARN_FAST_CHUNK_BYTES")) {
    const long long b = std::strtoll(env, nullptr, 10);
    return b >= (1LL << 20) ? static_cast<std::int64_t>(b) : std::int64_t(1) << 20;
  }
  return std::int64_t(32) << 20;
}

// The dot products of split rows: dots[c + r * ldc] = A3 row r . B3 row c
// for r < na, c < nb (A3 split as [hi | hi | lo], B3 as [hi | lo | hi], rows of
// d3 = 3d floats), one cuBLAS TF32 GEMM (column-major: dots (nb x na) =
// B3ᵀ A3).
void split_dots(cublasHandle_t blas, const float* A3, std::int64_t na, const float* B3, std::int64_t nb,
                std::int64_t d3, float* dots, std::int64_t ldc) {
  const float one = 1.0f, zero = 0.0f;
  TL_CUBLAS_CHECK(cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(nb), static_cast<int>(na),
                               static_cast<int>(d3), &one, B3, CUDA_R_32F, static_cast<int>(d3), A3, CUDA_R_32F,
                               static_cast<int>(d3), &zero, dots, CUDA_R_32F, static_cast<int>(ldc),
                               CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
}

// Launches split_tf32_kernel on `stream`.
void split_tf32(const float* A, std::int64_t rows, std::int64_t d, bool lo_middle, float* out,
                       cudaStream_t stream) {
  if (rows * d == 0) return;
  split_tf32_kernel<<<static_cast<unsigned>((rows * d + 255) / 256), 256, 0, stream>>>(A, rows, d, lo_middle, out);
  TL_CUDA_CHECK_LAUNCH("split_tf32_kernel");
}

}  // namespace
}  // namespace tl::detail
