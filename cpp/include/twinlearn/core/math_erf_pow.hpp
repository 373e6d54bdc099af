// erf and pow of the project's transcendentals (twinlearn/core/math.hpp),
// double (float rounds the double result): erf by its small-argument
// polynomial and 1 - exp(-x^2) erfcx(x), pow by a double-double logarithm
// (log_dd) and exp.
#pragma once
#include <cstdint>

#include "twinlearn/core/math_exp_log.hpp"
#include "twinlearn/core/math_poly.hpp"

namespace tl::num {

namespace math_detail {

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

}  // namespace math_detail

}  // namespace tl::num
