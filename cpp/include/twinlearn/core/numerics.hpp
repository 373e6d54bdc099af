// Spelled-out IEEE arithmetic shared by the CPU and CUDA backends.
//
// On the device each operation maps to its round-to-nearest intrinsic, which
// the compiler may neither contract into an FMA nor reorder. On the host the
// library is compiled with -ffp-contract=off and without fast-math, so plain
// operators are single IEEE operations; fma is an explicit std::fma where the
// device uses fmaf/fma. Code on identical paths uses only these.
#pragma once
#include <cmath>

#if defined(__CUDACC__)
#define TL_HD __host__ __device__ __forceinline__
#define TL_HOST_DEVICE __host__ __device__
#else
#define TL_HD inline
#define TL_HOST_DEVICE
#endif

namespace tl::num {

TL_HD float add(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
TL_HD double add(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
TL_HD float sub(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}
TL_HD double sub(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}
TL_HD float mul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
TL_HD double mul(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
TL_HD float div(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}
TL_HD double div(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}
// a * b + c with a single rounding.
TL_HD float fma(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}
TL_HD double fma(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
  return __fma_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}
TL_HD float sqrt(float a) {
#if defined(__CUDA_ARCH__)
  return __fsqrt_rn(a);
#else
  return std::sqrt(a);
#endif
}
TL_HD double sqrt(double a) {
#if defined(__CUDA_ARCH__)
  return __dsqrt_rn(a);
#else
  return std::sqrt(a);
#endif
}

// NaN results. x86 propagates an input NaN's payload while CUDA returns its
// own canonical NaN, so on identical paths every NaN that reaches an output
// is replaced by the canonical quiet NaN: positive, payload zero (the bits of
// NumPy's np.nan), on both backends.
TL_HD float quiet_nan(float) {
#if defined(__CUDA_ARCH__)
  return __int_as_float(0x7fc00000);
#else
  return __builtin_nanf("");
#endif
}
TL_HD double quiet_nan(double) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(0x7ff8000000000000LL);
#else
  return __builtin_nan("");
#endif
}

// Classification helpers that do not depend on the compiler's NaN handling.
TL_HD bool is_nan(float a) { return a != a; }
TL_HD bool is_nan(double a) { return a != a; }
TL_HD bool is_inf(float a) { return a == a && (a - a) != (a - a); }
TL_HD bool is_inf(double a) { return a == a && (a - a) != (a - a); }

// x, with any NaN replaced by the canonical quiet NaN.
template <class T>
TL_HD T canonical(T x) {
  return is_nan(x) ? quiet_nan(x) : x;
}

}  // namespace tl::num
