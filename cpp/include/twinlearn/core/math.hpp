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
// Polynomial coefficients are minimax fits made for this file by
// cpp/src/core/math/fit_poly.py (a Remez exchange in multiprecision).
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

// ---------------------------------------------------------------------------
// Polynomials (coefficients from fit_poly.py; names there in brackets)
// ---------------------------------------------------------------------------
// expm1(r) ~ r + r^2 Q(r), |r| <= ln2/2 [expm1_f, expm1_d]
TL_HD float expm1_q(float r) {
  return horner(r, 0x1p-1f, 0x1.555554p-3f, 0x1.5554b2p-5f, 0x1.11118ap-7f, 0x1.6d71f8p-10f, 0x1.a032cp-13f);
}
TL_HD double expm1_q(double r) {
  return horner(r, 0x1p-1, 0x1.5555555555559p-3, 0x1.555555555553fp-5, 0x1.111111110f6dap-7, 0x1.6c16c16c1f078p-10,
                0x1.a01a01afd3e34p-13, 0x1.a01a017bc69ecp-16, 0x1.71ddf87eb3c62p-19, 0x1.27e5362ba29bdp-22,
                0x1.af5e75127c0d2p-26, 0x1.1ee888e996dc9p-29);
}
// 2 atanh(s) ~ 2s + s z R(z), z = s^2 <= ((sqrt2-1)/(sqrt2+1))^2 [log_f, log_d]
TL_HD float log_r(float z) { return horner(z, 0x1.55557ap-1f, 0x1.995eb6p-2f, 0x1.31e34cp-2f); }
TL_HD double log_r(double z) {
  return horner(z, 0x1.5555555555588p-1, 0x1.999999998261dp-2, 0x1.2492494020239p-2, 0x1.c71c534ca8cfap-3,
                0x1.746604513c965p-3, 0x1.39a70f7a92ea6p-3, 0x1.2ed4221e47d5ep-3);
}
// 2 atanh(s) ~ 2s + (2/3) s^3 + s^5 T(z) [logdd_d]
TL_HD double log_t(double z) {
  return horner(z, 0x1.9999999999999p-2, 0x1.24924924927fcp-2, 0x1.c71c71c65e1d4p-3, 0x1.745d17d319aa2p-3,
                0x1.3b1379ab09eaap-3, 0x1.111d8fd282f0ap-3, 0x1.dea8e5e3ece89p-4, 0x1.e788349d83bf0p-4);
}
// tanh(x) ~ x + x^3 P(x^2), |x| <= 0.55 [tanh_f, tanh_d]
TL_HD float tanh_p(float z) {
  return horner(z, -0x1.555554p-2f, 0x1.1110dep-3f, -0x1.ba09ep-5f, 0x1.64e72ep-6f, -0x1.13c812p-7f, 0x1.3a54ap-9f);
}
TL_HD double tanh_p(double z) {
  return horner(z, -0x1.5555555555555p-2, 0x1.11111111110dcp-3, -0x1.ba1ba1ba1688cp-5, 0x1.664f4880fbfacp-6,
                -0x1.226e3505f2daap-7, 0x1.d6d3bb51bc8dep-9, -0x1.7da1a83df4cd2p-10, 0x1.353fd86607193p-11,
                -0x1.f3a9eb7e9d8a9p-13, 0x1.8a842bba291bfp-14, -0x1.157b4bb244372p-15, 0x1.f7e53411b23c0p-18);
}
// sin(r) ~ r + r^3 S(r^2), cos(r) ~ 1 - r^2/2 + r^4 C(r^2), |r| <= pi/4 [sin_d, cos_d]
TL_HD double sin_s(double z) {
  return horner(z, -0x1.5555555555555p-3, 0x1.111111111110cp-7, -0x1.a01a01a018c11p-13, 0x1.71de3a534b70fp-19,
                -0x1.ae6452aa3161bp-26, 0x1.61209ba37f25ep-33, -0x1.aaa8ca36e64b0p-41);
}
TL_HD double cos_c(double z) {
  return horner(z, 0x1.5555555555555p-5, -0x1.6c16c16c16c14p-10, 0x1.a01a01a0195ffp-16, -0x1.27e4fb7676ecbp-22,
                0x1.1eed8d1d07e7ep-29, -0x1.9393b3ecca881p-37, 0x1.aaf843ff530a5p-45);
}
// erf(x) ~ x + x E(x^2), |x| <= 1 [erf_small_d]
TL_HD double erf_e(double z) {
  return horner(z, 0x1.06eba8214db68p-3, -0x1.812746b0379bdp-2, 0x1.ce2f21a040d16p-4, -0x1.b82ce311fa93cp-6,
                0x1.565bccf92b2c2p-8, -0x1.c02db03dd6879p-11, 0x1.f9a2baa8efa63p-14, -0x1.f4ca4d6e4656bp-17,
                0x1.b97fd3cf985eap-20, -0x1.5c0726b123e66p-23, 0x1.d71b0d5accaaap-27, -0x1.abae43c773db0p-31);
}
// erfc(x) exp(x^2) on 1 <= x < 6, one polynomial in (x - centre) per piece [erfc_d]
TL_HD double erfcx_g(double x);  // defined below, after the coefficient tables

// ---------------------------------------------------------------------------
// Constants per format
// ---------------------------------------------------------------------------
template <class T> struct K;
template <> struct K<float> {
  // ln2 = LN2_HI + LN2_LO; LN2_HI is ln2 rounded to float (used with fma).
  TL_HD static float ln2_hi() { return 0x1.62e43p-1f; }
  TL_HD static float ln2_lo() { return -0x1.05c61p-29f; }
  // ln2 = LOG_LN2_HI + LOG_LN2_LO with LOG_LN2_HI short: e * LOG_LN2_HI is exact.
  TL_HD static float log_ln2_hi() { return 0x1.62e8p-1f; }
  TL_HD static float log_ln2_lo() { return -0x1.e8082ep-16f; }
  TL_HD static float log2e() { return 0x1.715476p+0f; }
  TL_HD static float sqrt2() { return 0x1.6a09e6p+0f; }
  // exp(x) overflows above EXP_HI and is below half the least denormal under EXP_LO.
  TL_HD static float exp_hi() { return 89.0f; }
  TL_HD static float exp_lo() { return -104.0f; }
  // expm1(x) rounds to -1 below this.
  TL_HD static float expm1_lo() { return -18.0f; }
  // tanh(|x|) rounds to 1 above TANH_ONE; sigmoid(x) rounds to 1 above SIG_ONE.
  TL_HD static float tanh_one() { return 9.1f; }
  TL_HD static float sig_one() { return 17.5f; }
};
template <> struct K<double> {
  TL_HD static double ln2_hi() { return 0x1.62e42fefa39efp-1; }
  TL_HD static double ln2_lo() { return 0x1.abc9e3b39803fp-56; }
  TL_HD static double log_ln2_hi() { return 0x1.62e42fefa38p-1; }
  TL_HD static double log_ln2_lo() { return 0x1.ef35793c7673p-45; }
  TL_HD static double log2e() { return 0x1.71547652b82fep+0; }
  TL_HD static double sqrt2() { return 0x1.6a09e667f3bcdp+0; }
  TL_HD static double exp_hi() { return 710.0; }
  TL_HD static double exp_lo() { return -746.0; }
  TL_HD static double expm1_lo() { return -38.0; }
  TL_HD static double tanh_one() { return 19.1; }
  TL_HD static double sig_one() { return 37.5; }
};

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

// log(x) as hi + lo to about 2^-66 relative, for finite x > 0 (pow's logarithm).
TL_HD void log_dd(double x, double& lh, double& ll) {
  int e;
  const double m = split_mantissa(x, e);
  const double f = sub(m, 1.0);
  double dh, dl;
  fast_two_sum(2.0, f, dh, dl);
  // s = f / (2 + f) as sh + sl
  const double sh = div(f, dh);
  const double srem = fma(-sh, dh, f);
  const double sl = div(fma(-sh, dl, srem), dh);
  // s^3 as ch + cl, then (2/3) s^3 as th + tl
  const double zh = mul(sh, sh);
  const double zl = fma(sh, sh, -zh);
  const double ch = mul(zh, sh);
  const double cl = add(fma(zh, sh, -ch), fma(zl, sh, mul(mul(3.0, zh), sl)));
  const double tth = 0x1.5555555555555p-1, ttl = 0x1.5555555555555p-55;  // 2/3
  const double th = mul(ch, tth);
  const double tl = add(fma(ch, tth, -th), fma(ch, ttl, mul(cl, tth)));
  const double tail = mul(mul(ch, zh), log_t(zh));  // s^5 T(z)
  double h1, e1;
  fast_two_sum(mul(2.0, sh), th, h1, e1);
  const double l1 = add(add(e1, mul(2.0, sl)), add(tl, tail));
  // + e ln2, ln2 = LN2A + LN2B (+ 2^-103), e * LN2A exact
  const double ef = static_cast<double>(e);
  double h2, e2;
  two_sum(mul(ef, 0x1.62e42fefa38p-1), h1, h2, e2);
  const double l2 = add(add(e2, l1), mul(ef, 0x1.ef35793c7673p-45));
  fast_two_sum(h2, l2, lh, ll);
}

// ---------------------------------------------------------------------------
// sin / cos (double): reduction to r in [-pi/4, pi/4] and quadrant q.
// ---------------------------------------------------------------------------
TL_HD std::uint32_t two_over_pi_word(int j) {
  // Bits of 2/pi after the binary point, 32 per word (word 0 holds bits 1..32).
  const std::uint32_t w[40] = {
      0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u, 0xdb629599u, 0x3c439041u, 0xfe5163abu, 0xdebbc561u,
      0xb7246e3au, 0x424dd2e0u, 0x06492eeau, 0x09d1921cu, 0xfe1deb1cu, 0xb129a73eu, 0xe88235f5u, 0x2ebb4484u,
      0xe99c7026u, 0xb45f7e41u, 0x3991d639u, 0x835339f4u, 0x9c845f8bu, 0xbdf9283bu, 0x1ff897ffu, 0xde05980fu,
      0xef2f118bu, 0x5a0a6d1fu, 0x6d367ecfu, 0x27cb09b7u, 0x4f463f66u, 0x9e5fea2du, 0x7527bac7u, 0xebe5f17bu,
      0x3d0739f7u, 0x8a5292eau, 0x6bfb5fb1u, 0x1f8d5d08u, 0x56033046u, 0xfc7b6babu, 0xf0cfbc20u, 0x9af4361du};
  return w[j];
}

// Payne-Hanek reduction for finite a >= 2^20: a (2/pi) = q + f (mod 4) with
// |f| <= 1/2, computed exactly in integers from a 256-bit window of 2/pi's
// bits; r = f pi/2 returned as rh + rl.
TL_HD int reduce_large(double a, double& rh, double& rl) {
  const std::uint64_t u = to_bits(a);
  const int ex = static_cast<int>(u >> 52) - 1023 - 52;  // a = m 2^ex
  const std::uint64_t m = (u & 0x000fffffffffffffull) | 0x0010000000000000ull;
  // Words j with ex - 32 j - 32 >= 2 only add multiples of 4: skip them.
  const int j0 = ex >= 34 ? (ex - 34) / 32 + 1 : 0;
  const int sh = 32 * j0 + 256 - ex;  // fraction bits of the product below
  // prod = m * window, little-endian 32-bit limbs (10 of them).
  std::uint32_t prod[10] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  const std::uint64_t mlo = m & 0xffffffffull, mhi = m >> 32;
  for (int i = 0; i < 8; ++i) {
    const std::uint64_t w = two_over_pi_word(j0 + 7 - i);  // limb i of the window
    std::uint64_t carry = 0;
    std::uint64_t t = static_cast<std::uint64_t>(prod[i]) + mlo * w;
    prod[i] = static_cast<std::uint32_t>(t);
    carry = t >> 32;
    t = static_cast<std::uint64_t>(prod[i + 1]) + mhi * w + carry;
    prod[i + 1] = static_cast<std::uint32_t>(t);
    carry = t >> 32;
    for (int k = i + 2; k < 10 && carry; ++k) {
      t = static_cast<std::uint64_t>(prod[k]) + carry;
      prod[k] = static_cast<std::uint32_t>(t);
      carry = t >> 32;
    }
  }
  // Bit b of prod, and 64 bits starting at bit b.
  auto bits64 = [&](int b) -> std::uint64_t {
    std::uint64_t v = 0;
    for (int i = 0; i < 64; ++i) {
      const int p = b + i;
      if (p >= 0 && p < 320) v |= static_cast<std::uint64_t>((prod[p >> 5] >> (p & 31)) & 1u) << i;
    }
    return v;
  };
  int q = static_cast<int>(bits64(sh) & 3u);
  std::uint64_t fhi = bits64(sh - 64), flo = bits64(sh - 128);  // fraction = (fhi:flo) / 2^128
  bool neg = false;
  if (fhi >> 63) {  // fraction >= 1/2: take f - 1 and the next quadrant
    q = (q + 1) & 3;
    neg = true;
    flo = ~flo + 1;
    fhi = ~fhi + (flo == 0 ? 1 : 0);
  }
  // Normalise so bit 127 is set, then split into 53 + 53 bits.
  int lz = 0;
  while (lz < 127 && !(fhi >> 63)) {
    fhi = (fhi << 1) | (flo >> 63);
    flo <<= 1;
    ++lz;
  }
  const double fh = mul(static_cast<double>(fhi >> 11), pow2<double>(-53 - lz));
  const std::uint64_t rest = ((fhi & 0x7ffull) << 42) | (flo >> 22);  // next 53 bits
  const double fl = mul(static_cast<double>(rest), pow2<double>(-106 - lz));
  const double p1 = 0x1.921fb54442d18p+0, p2 = 0x1.1a62633145c07p-54;  // pi/2
  const double h = mul(fh, p1);
  const double l = add(fma(fh, p1, -h), fma(fh, p2, mul(fl, p1)));
  fast_two_sum(h, l, rh, rl);
  if (neg) {
    rh = -rh;
    rl = -rl;
  }
  return q;
}

// a >= 0 finite. Returns the quadrant; a = q pi/2 + rh + rl (mod 2 pi).
TL_HD int reduce_pio2(double a, double& rh, double& rl) {
  if (a <= 0x1.921fb54442d18p-1) {  // pi/4
    rh = a;
    rl = 0.0;
    return 0;
  }
  if (a < 0x1p20) {
    // Cody-Waite in three 53-bit parts of pi/2; fma(-k, P1, a) is exact.
    const double kf = round_int(mul(a, 0x1.45f306dc9c883p-1));
    const double p1 = 0x1.921fb54442d18p+0, p2 = 0x1.1a62633145c07p-54, p3 = -0x1.f1976b7ed8fbcp-110;
    const double r1 = fma(-kf, p1, a);
    const double th = mul(kf, p2);
    const double tl = fma(kf, p2, -th);
    double s, e;
    two_sum(r1, -th, s, e);
    fast_two_sum(s, sub(e, fma(kf, p3, tl)), rh, rl);
    return static_cast<int>(static_cast<std::int64_t>(kf) & 3);
  }
  return reduce_large(a, rh, rl);
}

TL_HD double sin_kernel(double r, double rl) {
  const double z = mul(r, r);
  const double v = mul(z, r);
  return add(r, fma(v, sin_s(z), mul(rl, fma(-0.5, z, 1.0))));
}
TL_HD double cos_kernel(double r, double rl) {
  const double z = mul(r, r);
  const double ze = fma(r, r, -z);
  const double hz = mul(0.5, z);
  const double w = sub(1.0, hz);
  const double corr = add(sub(sub(1.0, w), hz), fma(mul(z, z), cos_c(z), -fma(0.5, ze, mul(r, rl))));
  return add(w, corr);
}

// sin and cos of a finite double; tiny arguments handled by the caller.
TL_HD void sincos_core(double x, double& s, double& c) {
  double rh, rl;
  const int q = reduce_pio2(fabs(x), rh, rl);
  const double sk = sin_kernel(rh, rl), ck = cos_kernel(rh, rl);
  switch (q) {
    case 0: s = sk; c = ck; break;
    case 1: s = ck; c = -sk; break;
    case 2: s = -sk; c = -ck; break;
    default: s = -ck; c = sk; break;
  }
  if (x < 0.0) s = -s;
}

TL_HD void sincos_impl(double x, double& s, double& c) {
  if (is_nan(x)) {
    s = c = x;
    return;
  }
  if (is_inf(x)) {
    s = c = qnan<double>();
    return;
  }
  if (fabs(x) < 0x1p-27) {  // sin x = x, cos x = 1 to within half an ulp
    s = x;
    c = 1.0;
    return;
  }
  sincos_core(x, s, c);
}

// ---------------------------------------------------------------------------
// erf (double)
// ---------------------------------------------------------------------------
TL_HD double erf_impl(double x) {
  if (is_nan(x)) return x;
  const double a = fabs(x);
  if (a >= 6.0) return copysign(1.0, x);
  if (a < 1.0) return fma(x, erf_e(mul(x, x)), x);
  // erf = 1 - exp(-a^2) G(a), with a^2 carried exactly and G = erfc(a) exp(a^2).
  const double zh = mul(a, a);
  const double zl = fma(a, a, -zh);
  const ExpParts<double> e = exp_parts(-zh, -zl);
  const double g = erfcx_g(a);
  const double th = mul(e.eh, g);
  const double tl = fma(e.el, g, fma(e.eh, g, -th));
  const double s = pow2<double>(e.k);  // e.k >= -52: normal
  const double ch = mul(s, th), cl = mul(s, tl);
  double yh, err;
  fast_two_sum(1.0, -ch, yh, err);
  return copysign(add(yh, sub(err, cl)), x);
}

// ---------------------------------------------------------------------------
// pow (double)
// ---------------------------------------------------------------------------
// 0: not an integer, 1: odd integer, 2: even integer.
TL_HD int integer_kind(double y) {
  const std::uint64_t u = to_bits(y);
  const int e = static_cast<int>((u >> 52) & 0x7ff) - 1023;  // y = 1.f 2^e
  if (e < 0) return 0;                                        // 0 < |y| < 1
  if (e > 52) return 2;                                       // multiple of 2
  const std::uint64_t sig = (u & 0x000fffffffffffffull) | 0x0010000000000000ull;
  const int unit = 52 - e;                                    // bit of sig worth 1
  if (sig & ((1ull << unit) - 1)) return 0;
  return ((sig >> unit) & 1) ? 1 : 2;
}

TL_HD double pow_impl(double x, double y) {
  if (y == 0.0) return 1.0;
  if (x == 1.0) return 1.0;
  if (is_nan(x)) return x;
  if (is_nan(y)) return y;
  const double ax = fabs(x);
  if (is_inf(y)) {
    if (ax == 1.0) return 1.0;
    return (ax < 1.0) == (y > 0.0) ? 0.0 : inf<double>();
  }
  const int yk = integer_kind(y);
  const bool neg = signbit(x) && yk == 1;  // result negative
  if (x == 0.0 || is_inf(x)) {
    // |x|^y is 0 or inf; the sign follows x for odd integer y.
    const bool big = (x == 0.0) == (y < 0.0);
    const double r = big ? inf<double>() : 0.0;
    return neg ? -r : r;
  }
  if (x < 0.0 && yk == 0) return qnan<double>();
  double lh, ll;
  log_dd(ax, lh, ll);
  const double ph = mul(y, lh);
  double r;
  if (ph > 710.0) {
    r = inf<double>();
  } else if (ph < -746.0) {
    r = 0.0;
  } else {
    const double pl = fma(y, ll, fma(y, lh, -ph));
    const ExpParts<double> e = exp_parts(ph, pl);
    r = scale(add(e.eh, e.el), e.k);
  }
  return neg ? -r : r;
}

// Rounds a double result to float; NaN becomes the canonical float NaN so the
// conversion's NaN handling (which differs between backends) never matters.
TL_HD float to_float(double d) { return is_nan(d) ? qnan<float>() : static_cast<float>(d); }

// ---------------------------------------------------------------------------
// erfc(x) exp(x^2) pieces
// ---------------------------------------------------------------------------
TL_HD double erfcx_g(double x) {
  if (x < 1.75) {
    const double t = sub(x, 1.375);
    return horner(t, 0x1.5f88f52f3c76bp-2, -0x1.797a639d8129dp-3, 0x1.701342cbcea7bp-4, -0x1.4bcdb9d9083c2p-5,
                    0x1.17eba60d31fdbp-6, -0x1.bdf24bccac5f7p-8, 0x1.51ab9ffce4f8dp-9,
                    -0x1.e8ae68b4206e7p-11, 0x1.535f58009e6d1p-12, -0x1.c5fa6b095ef7bp-14,
                    0x1.254ed037ec359p-15, -0x1.6f062672132ebp-17, 0x1.bdb87e5dd6190p-19,
                    -0x1.0726b49ca35a0p-20, 0x1.2e5927f181045p-22, -0x1.5340513bc26f6p-24,
                    0x1.84c8ce3531491p-26, -0x1.9d8cd914fcaccp-28);
  }
  if (x < 2.75) {
    const double t = sub(x, 2.25);
    return horner(t, 0x1.d94446d627932p-3, -0x1.6a70d2bb37411p-4, 0x1.0615670e25a7bp-5, -0x1.6883f9919a17ap-7,
                    0x1.da595561f7dbcp-9, -0x1.2bd251bb2eff2p-10, 0x1.6d7743d3a78c7p-12,
                    -0x1.aed7ebc99fc3cp-14, 0x1.ec773cd73cc0cp-16, -0x1.117a6665f3558p-17,
                    0x1.27af3d778a2ccp-19, -0x1.37b9a3633804cp-21, 0x1.40e9b563ecc61p-23,
                    -0x1.42ffd6c622b6cp-25, 0x1.3db00ffa11888p-27, -0x1.32cdfb1bcdbc9p-29,
                    0x1.34c20355dce1fp-31, -0x1.1d0c6f3dfc139p-33);
  }
  if (x < 4.0) {
    const double t = sub(x, 3.375);
    return horner(t, 0x1.48f8f10299b71p-3, -0x1.696d353f008b5p-5, 0x1.804cc15714188p-7, -0x1.8c84c13afb9c4p-9,
                    0x1.8de5f26a7e6e8p-11, -0x1.8511846d9fc4ep-13, 0x1.7350e39fee43bp-15,
                    -0x1.5a61388c044d8p-17, 0x1.3c3b6fb4227fap-19, -0x1.1ae04139c9293p-21,
                    0x1.f05af849066c8p-24, -0x1.ab7f2561c53d6p-26, 0x1.69c26f503f676p-28,
                    -0x1.2cfc8dde0b7ddp-30, 0x1.ebc6f3619d05ap-33, -0x1.8c7e22de70b1fp-35,
                    0x1.510aa91f8b5c9p-37, -0x1.066ff01d59260p-39);
  }
  const double t = sub(x, 5.0);
  return horner(t, 0x1.c57239e943d1ap-4, -0x1.5d843497d4f3ap-6, 0x1.08cf82b79a119p-8, -0x1.8abc198707c94p-11,
                    0x1.219f2c3353d1bp-13, -0x1.a2a81d24c976ap-16, 0x1.2a41152d7f993p-18,
                    -0x1.a3193cf65b63dp-21, 0x1.228a791758b0dp-23, -0x1.8dabba9fa0265p-26,
                    0x1.0cc7232fbef07p-28, -0x1.66f7a7c876b04p-31, 0x1.d9ebfd4576a04p-34,
                    -0x1.35438dfd15534p-36, 0x1.8cf0cdd4fda43p-39, -0x1.fb412c69b7e4ep-42,
                    0x1.6787cca5d45a8p-44, -0x1.bf7f73deeccdbp-47);
}

}  // namespace math_detail

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
