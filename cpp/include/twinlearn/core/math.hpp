// The project's own transcendentals (docs/NUMERICS.md, rule 4), shared by the
// CPU and CUDA backends.
//
// Every function here is built from tl::num::add/sub/mul/div/fma/sqrt, exact
// comparisons, integer arithmetic and bit manipulation only: no libm, no CUDA
// math library, no intrinsics such as __expf. The host compiles these with
// -ffp-contract=off and the device with round-to-nearest intrinsics, so a call
// gives the same bits on both for every input.
//
// Accuracy (measured by cpp/tests/core/test_math*.{cpp,cu}; see NUMERICS.md):
// within 2 ulp of the correctly rounded result over the whole domain, float
// and double, with gradual underflow (no flush to zero).
//
// Special values follow C99 Annex F: signed zeros are kept where the function
// is odd, infinities map to their limits, domain errors give a quiet NaN. A NaN
// argument is returned unchanged (its own bits); a NaN created here is the
// canonical quiet NaN (float 0x7fc00000, double 0x7ff8000000000000), so NaN
// results carry the same bits on both backends too.
//
// float exp, expm1, log, log1p, tanh and sigmoid compute in float (with fma);
// float sin, cos, erf and pow evaluate the double algorithm and round once.
//
// Polynomial coefficients are minimax fits made for these headers by
// cpp/src/core/math/fit_poly.py (a Remez exchange in multiprecision).
//
// This header holds the public functions; the algorithms are in its parts
// (namespace tl::num::math_detail): math_bits.hpp (bits, format facts,
// error-free transforms), math_poly.hpp (polynomials and constants),
// math_exp_log.hpp (exp, expm1, log, log1p, tanh, sigmoid), math_trig.hpp
// (sin, cos) and math_erf_pow.hpp (erf, pow).
#pragma once
#include <cstdint>

#include "twinlearn/core/math_bits.hpp"
#include "twinlearn/core/math_erf_pow.hpp"
#include "twinlearn/core/math_exp_log.hpp"
#include "twinlearn/core/math_poly.hpp"
#include "twinlearn/core/math_trig.hpp"
#include "twinlearn/core/numerics.hpp"

namespace tl::num {

// ---------------------------------------------------------------------------
// Public functions
// ---------------------------------------------------------------------------
TL_HD float exp(float x) { return math_detail::exp_impl(x); }
TL_HD double exp(double x) { return math_detail::exp_impl(x); }
TL_HD float expm1(float x) { return math_detail::expm1_impl(x); }
TL_HD double expm1(double x) { return math_detail::expm1_impl(x); }
TL_HD float log(float x) { return math_detail::log_impl(x); }
TL_HD double log(double x) { return math_detail::log_impl(x); }
TL_HD float log1p(float x) { return math_detail::log1p_impl(x); }
TL_HD double log1p(double x) { return math_detail::log1p_impl(x); }
TL_HD float tanh(float x) { return math_detail::tanh_impl(x); }
TL_HD double tanh(double x) { return math_detail::tanh_impl(x); }
// The logistic function 1 / (1 + exp(-x)), accurate for both signs.
TL_HD float sigmoid(float x) { return math_detail::sigmoid_impl(x); }
TL_HD double sigmoid(double x) { return math_detail::sigmoid_impl(x); }

TL_HD double erf(double x) { return math_detail::erf_impl(x); }
TL_HD float erf(float x) {
  if (is_nan(x)) return x;
  return math_detail::to_float(math_detail::erf_impl(static_cast<double>(x)));
}

TL_HD void sincos(double x, double& s, double& c) { math_detail::sincos_impl(x, s, c); }
TL_HD void sincos(float x, float& s, float& c) {
  if (is_nan(x)) {
    s = c = x;
    return;
  }
  double sd, cd;
  math_detail::sincos_impl(static_cast<double>(x), sd, cd);
  s = math_detail::to_float(sd);
  c = math_detail::to_float(cd);
}
TL_HD double sin(double x) {
  double s, c;
  sincos(x, s, c);
  return s;
}
TL_HD double cos(double x) {
  double s, c;
  sincos(x, s, c);
  return c;
}
TL_HD float sin(float x) {
  float s, c;
  sincos(x, s, c);
  return s;
}
TL_HD float cos(float x) {
  float s, c;
  sincos(x, s, c);
  return c;
}

// x^y with C99 Annex F special cases: pow(x, +-0) = 1 and pow(1, y) = 1 for
// any x, y (NaN included); pow(-1, +-inf) = 1; a negative finite x with a
// non-integer y is a domain error (NaN).
TL_HD double pow(double x, double y) { return math_detail::pow_impl(x, y); }
TL_HD float pow(float x, float y) {
  if (y == 0.0f || x == 1.0f) return 1.0f;
  if (is_nan(x)) return x;
  if (is_nan(y)) return y;
  return math_detail::to_float(math_detail::pow_impl(static_cast<double>(x), static_cast<double>(y)));
}

// ---------------------------------------------------------------------------
// Reductions over a row: log-sum-exp and softmax
// ---------------------------------------------------------------------------
// Shared rules for a row x[0], x[stride], ..., x[(n-1)*stride]:
// * the shift m is the row's maximum; terms exp(x_i - m) are summed
//   sequentially in index order (the fixed order, rule 1);
// * a row holding a NaN gives the first NaN (in index order), bits unchanged;
// * a row whose maximum is +inf gives +inf for log_sum_exp; an empty row or a
//   row of -inf gives -inf.
// Returns 0 for a regular row (m and s set), 1 when *special holds the answer.
namespace math_detail {
template <class T>
TL_HD int lse_scan(const T* x, std::int64_t n, std::int64_t stride, T& m, T& s, T& special) {
  m = -inf<T>();
  for (std::int64_t i = 0; i < n; ++i) {
    const T v = x[i * stride];
    if (is_nan(v)) {
      special = v;
      return 1;
    }
    if (v > m) m = v;
  }
  if (is_inf(m)) {  // +inf, or -inf for an empty / all -inf row
    special = m;
    return 1;
  }
  s = T(0);
  for (std::int64_t i = 0; i < n; ++i) s = add(s, exp(sub(x[i * stride], m)));
  return 0;
}
}  // namespace math_detail

// log(sum_i exp(x_i)), max-shifted, sequential in index order.
template <class T>
TL_HD T log_sum_exp(const T* x, std::int64_t n, std::int64_t stride = 1) {
  T m, s, special;
  if (math_detail::lse_scan(x, n, stride, m, s, special)) return special;
  return add(m, log(s));
}

// out_i = exp(x_i - m) / s (s, m as in log_sum_exp). A row with a NaN gives
// that NaN everywhere; a row whose maximum is +inf, or an all -inf row, gives
// the canonical NaN everywhere (the limit is undefined). out may alias x.
template <class T>
TL_HD void softmax(const T* x, std::int64_t n, std::int64_t stride, T* out, std::int64_t out_stride) {
  T m, s, special;
  if (math_detail::lse_scan(x, n, stride, m, s, special)) {
    const T v = is_nan(special) ? special : math_detail::qnan<T>();
    for (std::int64_t i = 0; i < n; ++i) out[i * out_stride] = v;
    return;
  }
  for (std::int64_t i = 0; i < n; ++i) out[i * out_stride] = div(exp(sub(x[i * stride], m)), s);
}

// out_i = (x_i - m) - log(s). Special rows as softmax. out may alias x.
template <class T>
TL_HD void log_softmax(const T* x, std::int64_t n, std::int64_t stride, T* out, std::int64_t out_stride) {
  T m, s, special;
  if (math_detail::lse_scan(x, n, stride, m, s, special)) {
    const T v = is_nan(special) ? special : math_detail::qnan<T>();
    for (std::int64_t i = 0; i < n; ++i) out[i * out_stride] = v;
    return;
  }
  const T ls = log(s);
  for (std::int64_t i = 0; i < n; ++i) out[i * out_stride] = sub(sub(x[i * stride], m), ls);
}

}  // namespace tl::num
