// Loads of the CUDA Gram kernels (gram_cuda.cu): entries of Zc = the centred,
// weighted columns of X and Y, shared by the canonical and the fast kernels.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "core/gram/gram_common.hpp"

namespace tl::detail {
namespace {

// Zc[i, col] for a column of X or of Y (row-major, contiguous).
template <class T>
__device__ __forceinline__ T load_zc(const T* X, std::int64_t d, const T* Y, std::int64_t t, const T* off,
                                     std::int64_t i, std::int64_t col, T s, bool weighted) {
  const T z = col < d ? X[i * d + col] : Y[i * t + (col - d)];
  return gram_detail::centred(z, off, col, s, weighted);
}

// The entries c0 .. c0+3 of row i of X as one 128-bit load, when T is float,
// `vec` (d % 4 == 0 and X 16-byte aligned) and all four are X's; false when
// the caller must load them one by one.
template <class T>
__device__ __forceinline__ bool load_x4(const T* X, std::int64_t d, bool vec, std::int64_t i, std::int64_t c0,
                                        T (&v)[4]) {
  if constexpr (std::is_same_v<T, float>) {
    if (vec && c0 + 4 <= d) {
      const float4 x4 = *reinterpret_cast<const float4*>(X + i * d + c0);
      v[0] = x4.x;
      v[1] = x4.y;
      v[2] = x4.z;
      v[3] = x4.w;
      return true;
    }
  }
  return false;
}

}  // namespace
}  // namespace tl::detail
