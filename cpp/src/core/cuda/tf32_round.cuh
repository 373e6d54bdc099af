// x rounded to TF32 (10 mantissa bits, round to nearest, ties away), the
// operand precision of the tensor cores' TF32 products. Device code only, so
// kernels may include it without the host helpers of tf32_split.cuh.
#pragma once
#include <cuda_runtime.h>

namespace tl::detail {
namespace {

__device__ __forceinline__ float tf32_round(float x) {
  unsigned u;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(u) : "f"(x));
  return __uint_as_float(u);
}

}  // namespace
}  // namespace tl::detail
