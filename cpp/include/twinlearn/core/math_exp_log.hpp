// exp, expm1, log, log1p, tanh and sigmoid of the project's transcendentals
// (twinlearn/core/math.hpp), float and double: the exp and log cores and the
// implementations the public functions call.
#pragma once
#include "twinlearn/core/math_poly.hpp"

namespace tl::num {

namespace math_detail {

// ---------------------------------------------------------------------------
// exp core: exp(hi + lo) = 2^k (eh + el), |lo| small, hi inside [EXP_LO, EXP_HI].
// ---------------------------------------------------------------------------
template <class T> struct ExpParts {
  int k;
  T eh, el;  // eh + el in [0.7, 1.42], el below half an ulp of eh
};

// Argument reduction: hi + lo = k ln2 + rh + rl with |rh| <= ln2/2 (+ tiny).
// fma(-k, LN2_HI, hi) is exact (its result fits in P bits), so the only
// rounding is in the LN2_LO correction, which is kept in rl.
template <class T> TL_HD int exp_reduce(T hi, T lo, T& rh, T& rl) {
  const T kf = round_int(mul(hi, K<T>::log2e()));
  const T r1 = fma(-kf, K<T>::ln2_hi(), hi);
  const T t = fma(-kf, K<T>::ln2_lo(), lo);
  two_sum(r1, t, rh, rl);
  return static_cast<int>(kf);
}

// expm1(rh + rl) ~ p + c, p the rounded polynomial and c the rest: the
// polynomial's last rounding and the rounding of rh^2 (both recovered by fma),
// and rl (1 + p) from exp(rh + rl) - 1 = expm1(rh) + rl exp(rh).
template <class T> TL_HD void expm1_kernel(T rh, T rl, T& p, T& c) {
  const T r2 = mul(rh, rh);
  const T r2e = fma(rh, rh, -r2);
  const T q = expm1_q(rh);
  p = fma(r2, q, rh);
  const T pe = fma(r2e, q, fma(r2, q, sub(rh, p)));  // rh - p is exact (Sterbenz)
  c = add(pe, fma(rl, p, rl));
}

template <class T> TL_HD ExpParts<T> exp_parts(T hi, T lo) {
  ExpParts<T> e;
  T rh, rl, p, c;
  e.k = exp_reduce(hi, lo, rh, rl);
  expm1_kernel(rh, rl, p, c);
  fast_two_sum(T(1), p, e.eh, e.el);
  e.el = add(e.el, c);
  return e;
}

// ---------------------------------------------------------------------------
// log core: e ln2 + log(1 + f) + c for |f| < sqrt2 - 1, c a small correction.
// log(1+f) = 2 atanh(s), s = f / (2 + f), written as f - f^2/2 + s (f^2/2 + R)
// so that the division's rounding touches only the small last term.
// ---------------------------------------------------------------------------
template <class T> TL_HD T log_kernel(int e, T f, T c) {
  const T s = div(f, add(T(2), f));
  const T z = mul(s, s);
  const T R = mul(z, log_r(z));
  const T hfsq = mul(mul(T(0.5), f), f);
  const T ef = static_cast<T>(e);
  const T hi = mul(ef, K<T>::log_ln2_hi());
  const T lo = fma(ef, K<T>::log_ln2_lo(), c);
  return add(hi, sub(f, sub(hfsq, fma(s, add(hfsq, R), lo))));
}

// Splits finite x > 0 into 2^e * m with m in [sqrt2/2, sqrt2).
template <class T> TL_HD T split_mantissa(T x, int& e) {
  using F = Fmt<T>;
  typename F::U u = F::bits(x);
  int adj = 0;
  if ((u & F::EXPMASK) == 0) {  // denormal: scale up exactly
    x = mul(x, pow2<T>(F::P));
    u = F::bits(x);
    adj = -F::P;
  }
  e = static_cast<int>(u >> F::MANT) - F::BIAS + adj;
  T m = F::from((u & ~F::EXPMASK) | (static_cast<typename F::U>(F::BIAS) << F::MANT));  // in [1, 2)
  if (m > K<T>::sqrt2()) {
    m = mul(m, T(0.5));
    ++e;
  }
  return m;
}

// ---------------------------------------------------------------------------
// Implementations (templates over float and double)
// ---------------------------------------------------------------------------
template <class T> TL_HD T exp_impl(T x) {
  if (is_nan(x)) return x;
  if (x > K<T>::exp_hi()) return inf<T>();
  if (x < K<T>::exp_lo()) return T(0);
  const ExpParts<T> e = exp_parts(x, T(0));
  return scale(add(e.eh, e.el), e.k);
}

template <class T> TL_HD T expm1_impl(T x) {
  if (is_nan(x)) return x;
  if (x > K<T>::exp_hi()) return inf<T>();
  if (x < K<T>::expm1_lo()) return T(-1);
  if (x == T(0)) return x;  // keeps the sign of zero
  T rh, rl, p, c;
  const int k = exp_reduce(x, T(0), rh, rl);
  expm1_kernel(rh, rl, p, c);
  if (k == 0) return add(p, c);
  // 2^k (1 + p + c) - 1, with 1 + p = eh + el exactly and the subtraction of 1 error-free.
  T eh, el;
  fast_two_sum(T(1), p, eh, el);
  el = add(el, c);
  if (k > Fmt<T>::EMAX) {  // only just below overflow: 2^k (eh + el) - 1 rounds like 2^k (eh + el)
    return scale(add(eh, el), k);
  }
  const T s = pow2<T>(k);
  const T a = mul(s, eh);
  T u, err;
  if (k > 0)
    fast_two_sum(a, T(-1), u, err);
  else
    fast_two_sum(T(-1), a, u, err);
  return add(u, fma(s, el, err));
}

template <class T> TL_HD T log_impl(T x) {
  if (is_nan(x)) return x;
  if (x < T(0)) return qnan<T>();
  if (x == T(0)) return -inf<T>();
  if (is_inf(x)) return x;
  int e;
  const T m = split_mantissa(x, e);
  return log_kernel(e, sub(m, T(1)), T(0));
}

template <class T> TL_HD T log1p_impl(T x) {
  if (is_nan(x)) return x;
  if (x < T(-1)) return qnan<T>();
  if (x == T(-1)) return -inf<T>();
  if (is_inf(x)) return x;
  if (x == T(0)) return x;
  // u + ul = 1 + x exactly; log1p(x) = log(u) + log1p(ul / u).
  T u, ul;
  if (fabs(x) <= T(1))
    fast_two_sum(T(1), x, u, ul);
  else
    fast_two_sum(x, T(1), u, ul);
  const T c = div(ul, u);
  int e;
  const T m = split_mantissa(u, e);
  return log_kernel(e, sub(m, T(1)), c);
}

template <class T> TL_HD T tanh_impl(T x) {
  if (is_nan(x)) return x;
  const T a = fabs(x);
  if (a >= K<T>::tanh_one()) return copysign(T(1), x);
  if (a < T(0.55)) {
    if (x == T(0)) return x;  // keeps the sign of zero
    const T z = mul(x, x);
    return fma(mul(x, z), tanh_p(z), x);
  }
  // tanh(a) = 1 - 2 / (exp(2a) + 1), every step carried with its error term.
  const ExpParts<T> e = exp_parts(mul(T(2), a), T(0));
  const T s = pow2<T>(e.k);
  const T big = mul(s, e.eh);  // >= 3
  T qh, ql;
  fast_two_sum(big, T(1), qh, ql);
  ql = fma(s, e.el, ql);
  const T dh = div(T(2), qh);
  const T rem = fma(-dh, qh, T(2));
  const T dl = div(fma(-dh, ql, rem), qh);
  T yh, err;
  fast_two_sum(T(1), -dh, yh, err);
  return copysign(add(yh, sub(err, dl)), x);
}

template <class T> TL_HD T sigmoid_impl(T x) {
  if (is_nan(x)) return x;
  if (x >= K<T>::sig_one()) return T(1);
  if (x < K<T>::exp_lo()) return T(0);
  if (x >= T(0)) {
    // 1 / (1 + exp(-x))
    const ExpParts<T> e = exp_parts(-x, T(0));
    const T s = pow2<T>(e.k);
    const T a = mul(s, e.eh), al = mul(s, e.el);
    T qh, ql;
    fast_two_sum(T(1), a, qh, ql);
    ql = add(ql, al);
    const T yh = div(T(1), qh);
    const T rem = fma(-yh, qh, T(1));
    return add(yh, div(fma(-yh, ql, rem), qh));
  }
  // exp(x) / (1 + exp(x)), computed on the mantissa 2^-k exp(x) and scaled once.
  const ExpParts<T> e = exp_parts(x, T(0));
  if (e.k < -(Fmt<T>::P + 2)) {
    // exp(x) < 2^-(P+1): sigmoid = exp(x) (1 - exp(x) + ...)
    const T ex = scale(e.eh, e.k);
    return scale(add(e.eh, fma(-e.eh, ex, e.el)), e.k);
  }
  const T s = pow2<T>(e.k);
  const T a = mul(s, e.eh), al = mul(s, e.el);
  T qh, ql;
  fast_two_sum(T(1), a, qh, ql);
  ql = add(ql, al);
  const T yh = div(e.eh, qh);
  const T rem = fma(-yh, qh, e.eh);
  const T ym = add(yh, div(fma(-yh, ql, add(rem, e.el)), qh));
  return scale(ym, e.k);
}

}  // namespace math_detail

}  // namespace tl::num
