// sin and cos of the project's transcendentals (twinlearn/core/math.hpp),
// double (float rounds the double result): the reduction to [-pi/4, pi/4]
// (Cody-Waite, Payne-Hanek for large arguments), the kernels and sincos.
#pragma once
#include <cstdint>

#include "twinlearn/core/math_poly.hpp"

namespace tl::num {

namespace math_detail {

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

}  // namespace math_detail

}  // namespace tl::num
