// Shared pieces of the canonical GEMM (order: twinlearn/core/gemm.hpp).
#pragma once
#include <cstdint>
#include <cstring>

#include "twinlearn/core/gemm.hpp"
#include "twinlearn/core/numerics.hpp"

namespace tl::gemm_detail {

// The canonical quiet NaN (0x7fc00000 / 0x7ff8000000000000). Arithmetic NaNs
// differ between the backends (payload propagation on the CPU, 0x7fffffff on
// the GPU), so stored results use this one.
template <class T>
TL_HD T canonical_nan();
template <>
TL_HD float canonical_nan<float>() {
#if defined(__CUDA_ARCH__)
  return __int_as_float(0x7fc00000);
#else
  const std::uint32_t b = 0x7fc00000u;
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
#endif
}
template <>
TL_HD double canonical_nan<double>() {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(0x7ff8000000000000ll);
#else
  const std::uint64_t b = 0x7ff8000000000000ull;
  double d;
  std::memcpy(&d, &b, sizeof d);
  return d;
#endif
}

template <class T>
TL_HD T canonical(T v) {
  return num::is_nan(v) ? canonical_nan<T>() : v;
}

}  // namespace tl::gemm_detail

namespace tl::detail {

// Backend entry points (validated, non-empty m and n). C: m x n; its memory
// is wherever the caller's view says.
template <class T>
void gemm_cpu(const Context& ctx, MatrixView<const T> A, MatrixView<const T> B, bool transpose_b, MatrixView<T> C);
template <class T>
void gemm_cuda(const Context& ctx, MatrixView<const T> A, MatrixView<const T> B, bool transpose_b, MatrixView<T> C);

}  // namespace tl::detail
