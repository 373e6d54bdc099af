// Floating-point classification by the bits, for CPU loops meant to
// vectorize: GCC does not vectorize a loop whose floating-point comparisons
// pick values (they may trap, under the default -ftrapping-math), while the
// same tests as integer operations on the bits vectorize. The format facts
// (U, SIGN, INF, QNAN, bits, from) are num::math_detail::Fmt's. Host code only.
#pragma once
#include "twinlearn/core/math.hpp"

namespace tl::detail {

template <class T>
struct FloatBits : num::math_detail::Fmt<T> {
  using F = num::math_detail::Fmt<T>;
  using U = typename F::U;
  static constexpr U MAGNITUDE = ~F::SIGN;
  // 1 or 0, as U (all-ones masks are 0 - these).
  static U is_finite(U b) { return U((b & MAGNITUDE) < F::INF); }
  static U is_inf(U b) { return U((b & MAGNITUDE) == F::INF); }
  static U is_nan(U b) { return U((b & MAGNITUDE) > F::INF); }
  // num::canonical by the bits: a NaN becomes the canonical quiet NaN.
  static U canonical(U b) {
    const U nan = U(0) - is_nan(b);
    return (nan & F::QNAN) | (~nan & b);
  }
};

}  // namespace tl::detail
