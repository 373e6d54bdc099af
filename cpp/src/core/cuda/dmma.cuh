// One 16 x 8 x 8 double-precision tile product on the tensor cores, with the
// rounding of the canonical chain: every entry of D = C + A B is
//
//   fma(A[r][7], B[7][c], ... fma(A[r][1], B[1][c], fma(A[r][0], B[0][c], C[r][c])))
//
// eight IEEE fused multiply-adds in k order, the same bits as the scalar
// chain on the CPU. On sm_80 and later this is one `mma.sync ... f64`
// instruction, whose results equal that chain: measured on an H200 for
// 1.3e8 entries of each m16n8k4 / k8 / k16 shape (random, cancelling, wide
// exponent range, subnormal products, small integers), while the reversed
// chain and "C plus the chained dot product" each differ in about half of
// them; cpp/tests/core/test_dmma_cuda.cu checks it on the device at hand.
// Earlier GPUs run the chain itself (warp shuffles and fma), same bits,
// slowly.
//
// Fragments (PTX ISA, mma.m16n8k8 .f64), lane = 4 g + q:
//   a[0] = A[g][q], a[1] = A[g + 8][q], a[2] = A[g][q + 4], a[3] = A[g + 8][q + 4]
//   b[0] = B[q][g], b[1] = B[q + 4][g]
//   c[0] = C[g][2q], c[1] = C[g][2q + 1], c[2] = C[g + 8][2q], c[3] = C[g + 8][2q + 1]
#pragma once
#include <cuda_runtime.h>

namespace tl::detail {
namespace {

// The chain spelled out with shuffles: the reference for the instruction and
// the path of GPUs without double-precision tensor cores.
__device__ __forceinline__ void dmma_16x8x8_chain(double (&c)[4], const double (&a)[4], const double (&b)[2]) {
  const int lane = threadIdx.x % 32, g = lane / 4, q = lane % 4;
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    // A[g][k] and A[g + 8][k] sit in lane 4g + k%4 (a[0|2] and a[1|3]);
    // B[k][2q + e] in lane 4(2q + e) + k%4 (b[0|1]).
    const int src_a = 4 * g + (k % 4);
    const double a_top = __shfl_sync(0xffffffffu, k < 4 ? a[0] : a[2], src_a);
    const double a_bot = __shfl_sync(0xffffffffu, k < 4 ? a[1] : a[3], src_a);
    const double b0 = __shfl_sync(0xffffffffu, k < 4 ? b[0] : b[1], 4 * (2 * q) + (k % 4));
    const double b1 = __shfl_sync(0xffffffffu, k < 4 ? b[0] : b[1], 4 * (2 * q + 1) + (k % 4));
    c[0] = __fma_rn(a_top, b0, c[0]);
    c[1] = __fma_rn(a_top, b1, c[1]);
    c[2] = __fma_rn(a_bot, b0, c[2]);
    c[3] = __fma_rn(a_bot, b1, c[3]);
  }
}

// c <- c + a b as above; every lane of the warp must call it together.
__device__ __forceinline__ void dmma_16x8x8(double (&c)[4], const double (&a)[4], const double (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
      : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
#else
  dmma_16x8x8_chain(c, a, b);
#endif
}

}  // namespace
}  // namespace tl::detail
