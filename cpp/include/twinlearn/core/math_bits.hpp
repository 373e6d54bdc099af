// Bits and format facts of float and double for the project's transcendentals
// (twinlearn/core/math.hpp): raw bits, sign, powers of two, scaling with one
// rounding, rounding to an integer, Horner evaluation, error-free transforms
// and the rounding of a double result to float.
#pragma once
#include <cstdint>
#include <cstring>

#include "twinlearn/core/numerics.hpp"

namespace tl::num {

// ---------------------------------------------------------------------------
// Bits
// ---------------------------------------------------------------------------
TL_HD std::uint32_t to_bits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}
TL_HD std::uint64_t to_bits(double x) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint64_t>(__double_as_longlong(x));
#else
  std::uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}
TL_HD float float_from_bits(std::uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
#endif
}
TL_HD double double_from_bits(std::uint64_t u) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(u));
#else
  double x;
  std::memcpy(&x, &u, sizeof x);
  return x;
#endif
}

namespace math_detail {

// Format facts. P: precision in bits; EMIN/EMAX: normal exponent range.
template <class T> struct Fmt;
template <> struct Fmt<float> {
  using U = std::uint32_t;
  static constexpr int P = 24, EMIN = -126, EMAX = 127, BIAS = 127, MANT = 23;
  static constexpr U SIGN = 0x80000000u, EXPMASK = 0x7f800000u, QNAN = 0x7fc00000u, INF = 0x7f800000u;
  TL_HD static U bits(float x) { return to_bits(x); }
  TL_HD static float from(U u) { return float_from_bits(u); }
};
template <> struct Fmt<double> {
  using U = std::uint64_t;
  static constexpr int P = 53, EMIN = -1022, EMAX = 1023, BIAS = 1023, MANT = 52;
  static constexpr U SIGN = 0x8000000000000000ull, EXPMASK = 0x7ff0000000000000ull,
                     QNAN = 0x7ff8000000000000ull, INF = 0x7ff0000000000000ull;
  TL_HD static U bits(double x) { return to_bits(x); }
  TL_HD static double from(U u) { return double_from_bits(u); }
};

template <class T> TL_HD T qnan() { return Fmt<T>::from(Fmt<T>::QNAN); }
template <class T> TL_HD T inf() { return Fmt<T>::from(Fmt<T>::INF); }
template <class T> TL_HD T fabs(T x) { return Fmt<T>::from(Fmt<T>::bits(x) & ~Fmt<T>::SIGN); }
template <class T> TL_HD bool signbit(T x) { return (Fmt<T>::bits(x) & Fmt<T>::SIGN) != 0; }
// |m| with the sign of s.
template <class T> TL_HD T copysign(T m, T s) {
  using F = Fmt<T>;
  return F::from((F::bits(m) & ~F::SIGN) | (F::bits(s) & F::SIGN));
}
// 2^k for EMIN <= k <= EMAX.
template <class T> TL_HD T pow2(int k) {
  using F = Fmt<T>;
  return F::from(static_cast<typename F::U>(k + F::BIAS) << F::MANT);
}
// y * 2^k with a single rounding, for 1/4 <= |y| < 4 and any k (results past
// the range overflow to inf or underflow, gradually, to 0).
template <class T> TL_HD T scale(T y, int k) {
  using F = Fmt<T>;
  if (k > F::EMAX) {
    y = mul(y, pow2<T>(F::EMAX));
    k -= F::EMAX;
    if (k > F::EMAX) k = F::EMAX;
    return mul(y, pow2<T>(k));
  }
  if (k < F::EMIN) {
    if (k < F::EMIN - F::P - 3) k = F::EMIN - F::P - 3;  // below half the least denormal: rounds to 0
    y = mul(y, pow2<T>(k + 2 * F::P));                   // exact, still normal
    return mul(y, pow2<T>(-2 * F::P));                   // the one rounding
  }
  return mul(y, pow2<T>(k));
}
// Round to the nearest integer (ties to even) for |x| < 2^(P-2).
template <class T> TL_HD T round_int(T x) {
  const T shifter = add(pow2<T>(Fmt<T>::P - 1), pow2<T>(Fmt<T>::P - 2));  // 1.5 * 2^(P-1)
  return sub(add(x, shifter), shifter);
}

// c0 + x * (c1 + x * (c2 + ...)), by fma.
template <class T> TL_HD T horner(T, T c0) { return c0; }
template <class T, class... C> TL_HD T horner(T x, T c0, C... cs) { return fma(horner(x, cs...), x, c0); }

// Error-free transforms. two_sum: s + e == a + b exactly. fast_two_sum
// needs exponent(a) >= exponent(b) (e.g. |a| >= |b|).
template <class T> TL_HD void two_sum(T a, T b, T& s, T& e) {
  s = add(a, b);
  const T bb = sub(s, a);
  e = add(sub(a, sub(s, bb)), sub(b, bb));
}
template <class T> TL_HD void fast_two_sum(T a, T b, T& s, T& e) {
  s = add(a, b);
  e = sub(b, sub(s, a));
}

// Rounds a double result to float; NaN becomes the canonical float NaN so the
// conversion's NaN handling (which differs between backends) never matters.
TL_HD float to_float(double d) { return is_nan(d) ? qnan<float>() : static_cast<float>(d); }

}  // namespace math_detail

}  // namespace tl::num
