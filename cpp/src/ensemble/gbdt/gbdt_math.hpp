// Numerics shared by the CPU and CUDA backends of the gradient-boosted trees
// (gbdt_common.hpp): the limits, bits and conversions, fixed point, and the
// project's own exp and log.
//
// Fixed point. Per tree, gradients g and hessians h (doubles) are quantized
// to integers q = round(v * 2^e), with one power-of-two scale for g and one
// for h, chosen from max|g| (max|h|) so that |q| <= 2^kQuantBits = 2^30.
// With n < 2^31 rows every histogram entry, prefix sum or total is a sum of
// at most n such values: |sum| <= 2^61 < 2^63, so int64 cannot overflow
// (gbdt.cpp checks n). Integer sums do not depend on their order: the CUDA
// backend accumulates them with atomics and still matches the CPU exactly.
// |q| <= 2^30 also fits int32, which is how the GPU stores it; its
// per-block shared-memory histograms keep each int64 sum as two 32-bit words
// updated by 32-bit atomics (high_word_increment).
#pragma once
#include <cstdint>
#include <cstring>

#include "twinlearn/core/math_bits.hpp"
#include "twinlearn/core/numerics.hpp"

namespace tl::gbdt {

inline constexpr int kQuantBits = 30;
inline constexpr std::int64_t kMaxRows = (std::int64_t(1) << 31) - 1;
inline constexpr std::int64_t kBorderSample = 200000;  // rows sampled for border selection
inline constexpr std::int64_t kLossChunk = 1024;       // canonical chunk of the loss reductions
inline constexpr int kMaxBordersPadded = 256;          // border slots per feature in padded layouts
inline constexpr int kMaxDepth = 16;

static_assert(kQuantBits < 31, "fixed-point values fit int32");
static_assert(kMaxRows * (std::int64_t(1) << kQuantBits) < (std::int64_t(1) << 62), "int64 sums cannot overflow");

// ---------------------------------------------------------------------------
// Bits and conversions
// ---------------------------------------------------------------------------
// 2^e for -1022 <= e <= 1023 (normal range), exactly.
TL_HD double pow2(int e) { return num::double_from_bits(static_cast<std::uint64_t>(e + 1023) << 52); }

// int64 -> double, round to nearest even, on both backends.
TL_HD double i64_to_double(std::int64_t q) {
#if defined(__CUDA_ARCH__)
  return __ll2double_rn(q);
#else
  return static_cast<double>(q);
#endif
}

// |x| by clearing the sign bit (exact; NaN stays NaN).
TL_HD double abs_bits(double x) { return num::double_from_bits(num::to_bits(x) & ~(std::uint64_t(1) << 63)); }

// Round to the nearest integer, halves away from zero, for |x| < 2^52:
// one IEEE addition then truncation toward zero (the C conversion on both
// backends).
TL_HD std::int64_t round_to_i64(double x) {
  const double r = num::add(x, x < 0.0 ? -0.5 : 0.5);
  return static_cast<std::int64_t>(r);
}

// ---------------------------------------------------------------------------
// Fixed point
// ---------------------------------------------------------------------------
// The exponent e of the quantization scale 2^e for values with max |v| = m:
// the largest e with m * 2^e <= 2^kQuantBits, clamped to [-1022, 1022] so
// that 2^e and 2^-e are normal doubles. m = 0 (all values zero) gives e = 0.
TL_HD int quant_exponent(double m) {
  if (!(m > 0.0)) return 0;
  const std::uint64_t b = num::to_bits(m);
  const int ex = static_cast<int>((b >> 52) & 0x7ff);
  const std::uint64_t mant = b & ((std::uint64_t(1) << 52) - 1);
  // Smallest E with m <= 2^E.
  int E;
  if (ex == 0) {
    E = -1022;  // subnormal: m < 2^-1022
  } else {
    E = ex - 1023 + (mant != 0 ? 1 : 0);
  }
  int e = kQuantBits - E;
  if (e > 1022) e = 1022;
  if (e < -1022) e = -1022;
  return e;
}

TL_HD std::int64_t quantize(double v, double scale) { return round_to_i64(num::mul(v, scale)); }

// A 64-bit two's-complement integer kept as two 32-bit words (lo, hi), to
// which q is added in two steps: lo += uint32(q), which yields lo's old
// value; then hi += high_word_increment(old, q), the sign extension of q
// plus the carry out of lo. Each step may be a separate 32-bit atomic: every
// carry is seen by exactly one addition, whatever the interleaving, so the
// words end as the exact sum modulo 2^64. The increment is zero for most
// additions, and the GPU then skips the second atomic.
TL_HD std::uint32_t high_word_increment(std::uint32_t old_lo, std::int32_t q) {
  const std::uint32_t x = static_cast<std::uint32_t>(q);
  return (q < 0 ? 0xFFFFFFFFu : 0u) + (old_lo > ~x ? 1u : 0u);
}
TL_HD double dequantize(std::int64_t q, double inv_scale) { return num::mul(i64_to_double(q), inv_scale); }

// ---------------------------------------------------------------------------
// exp and log (double), shared by both backends: never libm or CUDA's.
// ---------------------------------------------------------------------------
// exp: x = k ln2 + r with |r| <= ln2/2 (Cody-Waite two-part ln2), exp(r) by
// its Taylor series to r^13 (truncation < 2e-17 relative) in Horner form with
// explicit fma, then scaled by 2^k through the exponent bits. Error about 1 ulp.
TL_HD double exp(double x) {
  if (num::is_nan(x)) return num::quiet_nan(x);
  if (x > 709.782712893384) return num::double_from_bits(0x7ff0000000000000ULL);  // +inf
  if (x < -745.1332191019412) return 0.0;
  const double kInvLn2 = 1.4426950408889634;
  const double kLn2Hi = 6.93147180369123816490e-01;  // low 21 mantissa bits zero: k * kLn2Hi exact
  const double kLn2Lo = 1.90821492927058770002e-10;
  const std::int64_t k = round_to_i64(num::mul(x, kInvLn2));
  const double kd = static_cast<double>(static_cast<int>(k));
  const double r = num::sub(num::sub(x, num::mul(kd, kLn2Hi)), num::mul(kd, kLn2Lo));
  // Taylor coefficients 1/j!, j = 13 .. 0.
  const double c[14] = {1.6059043836821613e-10, 2.08767569878681e-09,  2.505210838544172e-08,
                        2.755731922398589e-07,  2.7557319223985893e-06, 2.48015873015873e-05,
                        1.984126984126984e-04,  1.388888888888889e-03,  8.333333333333333e-03,
                        4.1666666666666664e-02, 1.6666666666666666e-01, 0.5,
                        1.0,                    1.0};
  double p = c[0];
  for (int j = 1; j < 14; ++j) p = num::fma(p, r, c[j]);
  int ki = static_cast<int>(k);
  if (ki > 1023) {
    p = num::mul(p, pow2(1023));
    ki -= 1023;
  } else if (ki < -1022) {
    p = num::mul(p, pow2(-1000));
    ki += 1000;
  }
  return num::mul(p, pow2(ki));
}

// Natural log for x > 0: x = m 2^k with m in [sqrt(1/2), sqrt(2)), then
// log(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172, series to s^23.
// log(0) = -inf, log(x < 0) = NaN, log(+inf) = +inf.
TL_HD double log(double x) {
  if (num::is_nan(x) || x < 0.0) return num::quiet_nan(x);
  if (x == 0.0) return num::double_from_bits(0xfff0000000000000ULL);
  if (num::is_inf(x)) return x;
  int k = 0;
  if (x < pow2(-1022)) {  // subnormal: scale into the normal range
    x = num::mul(x, pow2(60));
    k = -60;
  }
  std::uint64_t b = num::to_bits(x);
  k += static_cast<int>((b >> 52) & 0x7ff) - 1023;
  double m = num::double_from_bits((b & ((std::uint64_t(1) << 52) - 1)) | (std::uint64_t(1023) << 52));  // [1, 2)
  if (m > 1.4142135623730951) {
    m = num::mul(m, 0.5);
    k += 1;
  }
  const double s = num::div(num::sub(m, 1.0), num::add(m, 1.0));
  const double s2 = num::mul(s, s);
  // 1/(2j+1), j = 11 .. 0
  const double c[12] = {1.0 / 23, 1.0 / 21, 1.0 / 19, 1.0 / 17, 1.0 / 15, 1.0 / 13,
                        1.0 / 11, 1.0 / 9,  1.0 / 7,  1.0 / 5,  1.0 / 3,  1.0};
  double p = c[0];
  for (int j = 1; j < 12; ++j) p = num::fma(p, s2, c[j]);
  const double logm = num::mul(num::mul(2.0, s), p);
  const double kLn2Hi = 6.93147180369123816490e-01;
  const double kLn2Lo = 1.90821492927058770002e-10;
  const double kd = static_cast<double>(k);
  return num::add(num::add(num::mul(kd, kLn2Hi), logm), num::mul(kd, kLn2Lo));
}

TL_HD double sigmoid(double f) { return num::div(1.0, num::add(1.0, gbdt::exp(-f))); }

}  // namespace tl::gbdt
