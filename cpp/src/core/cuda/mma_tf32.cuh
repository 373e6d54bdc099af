// Register-level TF32 tensor-core products with 3xTF32 splits (hi.lo' +
// lo.hi' + hi.hi', as core/cuda/tf32_split.cuh; about float's accuracy, no bit
// promise), shared by the fused searches that keep one side's split fragments
// in registers and stream the other side's, laid out in fragment order,
// through shared memory: KMeans' assignment (cluster/kmeans/kmeans_mma.cuh)
// and fast mode's nearest-neighbour search (neighbors/distance). Device code
// only; sm_80 and later (mma.sync m16n8k8 TF32, cp.async).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "core/cuda/tf32_round.cuh"

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

// c += a b with a and b split (3xTF32): lo.hi' + hi.lo' + hi.hi', in that order.
__device__ __forceinline__ void mma_tf32x3(float (&c)[4], const unsigned (&ah)[4], const unsigned (&al)[4],
                                           float4 b) {
  const unsigned bh0 = __float_as_uint(b.x), bh1 = __float_as_uint(b.y);
  const unsigned bl0 = __float_as_uint(b.z), bl1 = __float_as_uint(b.w);
  mma_tf32(c, al, bh0, bh1);
  mma_tf32(c, ah, bl0, bl1);
  mma_tf32(c, ah, bh0, bh1);
}

// The split A fragments of a warp's 16 rows r0 .. r0 + 15 of X (row-major, d
// features; rows past `rows` and features past d are zero), depth 8 KS:
// a[s][q] holds (row g + 8 (q % 2), feature 8 s + t + 4 (q / 2)) for lane
// 4 g + t.
template <int KS>
__device__ __forceinline__ void load_a_split(const float* __restrict__ X, std::int64_t rows, int d, std::int64_t r0,
                                             unsigned (&ah)[KS][4], unsigned (&al)[KS][4]) {
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll
  for (int s = 0; s < KS; ++s)
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const std::int64_t r = r0 + g + 8 * (q % 2);
      const int f = 8 * s + t + 4 * (q / 2);
      const float x = (r < rows && f < d) ? X[r * d + f] : 0.0f;
      split_tf32_pair(x, ah[s][q], al[s][q]);
    }
}

// Element e of the B fragments of rows c0, c0 + 1, ... of C (row-major, `rows`
// rows of d features; past them zeros), depth 8 KS, in fragment order
// [group of 8 rows][depth step s][lane]: lane l of group j, step s holds
// (hi, hi, lo, lo) of row c0 + 8 j + l / 4, features 8 s + l % 4 and + 4.
template <int KS>
__device__ __forceinline__ float4 b_fragment_split(const float* __restrict__ C, std::int64_t rows, int d,
                                                   std::int64_t c0, std::int64_t e) {
  const int l = static_cast<int>(e % 32), s = static_cast<int>((e / 32) % KS);
  const std::int64_t c = c0 + 8 * (e / 32 / KS) + l / 4;
  const int f0 = 8 * s + l % 4, f1 = f0 + 4;
  const bool live = c < rows;
  const float v0 = live && f0 < d ? C[c * d + f0] : 0.0f;
  const float v1 = live && f1 < d ? C[c * d + f1] : 0.0f;
  unsigned h0, l0, h1, l1;
  split_tf32_pair(v0, h0, l0);
  split_tf32_pair(v1, h1, l1);
  return make_float4(__uint_as_float(h0), __uint_as_float(h1), __uint_as_float(l0), __uint_as_float(l1));
}

// Asynchronous 16-byte copies global -> shared (cp.async, L2 only), committed
// as groups; wait_async<N>() waits until at most N groups are in flight.
__device__ __forceinline__ void copy_async16(void* smem, const void* gmem) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(gmem));
}
__device__ __forceinline__ void commit_async() { asm volatile("cp.async.commit_group;"); }
template <int N>
__device__ __forceinline__ void wait_async() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N));
}

}  // namespace
}  // namespace tl::detail
