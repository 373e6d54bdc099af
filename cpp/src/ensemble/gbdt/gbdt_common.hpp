// Math shared by the CPU and CUDA backends of the gradient-boosted trees.
// Everything here is TL_HD and spelled out with tl::num operations, so both
// backends compute the same bits (docs/NUMERICS.md, rules 2-4, 6).
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

#include "twinlearn/core/numerics.hpp"
#include "twinlearn/core/rng.hpp"
#include "twinlearn/ensemble/gbdt.hpp"

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
TL_HD std::uint64_t bits_of(double x) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint64_t>(__double_as_longlong(x));
#else
  std::uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}
TL_HD double double_of(std::uint64_t u) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(u));
#else
  double x;
  std::memcpy(&x, &u, sizeof x);
  return x;
#endif
}
// 2^e for -1022 <= e <= 1023 (normal range), exactly.
TL_HD double pow2(int e) { return double_of(static_cast<std::uint64_t>(e + 1023) << 52); }

// int64 -> double, round to nearest even, on both backends.
TL_HD double i64_to_double(std::int64_t q) {
#if defined(__CUDA_ARCH__)
  return __ll2double_rn(q);
#else
  return static_cast<double>(q);
#endif
}

// |x| by clearing the sign bit (exact; NaN stays NaN).
TL_HD double abs_bits(double x) { return double_of(bits_of(x) & ~(std::uint64_t(1) << 63)); }

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
  const std::uint64_t b = bits_of(m);
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
  if (x > 709.782712893384) return double_of(0x7ff0000000000000ULL);  // +inf
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
  if (x == 0.0) return double_of(0xfff0000000000000ULL);
  if (num::is_inf(x)) return x;
  int k = 0;
  if (x < pow2(-1022)) {  // subnormal: scale into the normal range
    x = num::mul(x, pow2(60));
    k = -60;
  }
  std::uint64_t b = bits_of(x);
  k += static_cast<int>((b >> 52) & 0x7ff) - 1023;
  double m = double_of((b & ((std::uint64_t(1) << 52) - 1)) | (std::uint64_t(1023) << 52));  // [1, 2)
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

// ---------------------------------------------------------------------------
// Losses: per-row gradients, hessians and loss values.
// ---------------------------------------------------------------------------
TL_HD bool is_multiclass(GbdtLoss l) { return l == GbdtLoss::MultiClass || l == GbdtLoss::MultiClassOneVsAll; }

// Gradients of row i with raw prediction f[0..D), label y, weight w, and the
// loss parameter `param` (Tweedie variance power rho, Huber delta).
// Logloss, CrossEntropy: p = sigmoid(f), g = w (p - y), h = w p (1 - p).
// RMSE:    g = w (f - y), h = w.
// MultiClass: p = softmax(f) (max-shifted, denominator summed in class order),
//          g_k = w (p_k - [y == k]), h_k = w p_k (1 - p_k).
// MultiClassOneVsAll: p_k = sigmoid(f_k), g_k, h_k as above.
// Poisson: g = w (exp(f) - y), h = w exp(f).
// Tweedie: a = exp((1 - rho) f), b = exp((2 - rho) f),
//          g = w (b - y a), h = w ((2 - rho) b - (1 - rho) y a).
// Huber:   r = f - y, g = w clamp(r, -delta, delta), h = w [|r| <= delta].
// Quantile (alpha = param) and MAE (alpha = 1/2): the pinball loss's
//          derivative in f, as CatBoost spells it: g = -w alpha when y > f,
//          else w (1 - alpha); no hessian exists, so h = w (gradient steps).
TL_HD void row_gradients(GbdtLoss loss, int D, const double* f, double y, double w, double param, double* g,
                         double* h) {
  switch (loss) {
    case GbdtLoss::RMSE:
      g[0] = num::mul(w, num::sub(f[0], y));
      h[0] = w;
      return;
    case GbdtLoss::Logloss:
    case GbdtLoss::CrossEntropy: {
      const double p = sigmoid(f[0]);
      g[0] = num::mul(w, num::sub(p, y));
      h[0] = num::mul(w, num::mul(p, num::sub(1.0, p)));
      return;
    }
    case GbdtLoss::MultiClassOneVsAll: {
      const int yk = static_cast<int>(y);
      for (int k = 0; k < D; ++k) {
        const double p = sigmoid(f[k]);
        g[k] = num::mul(w, num::sub(p, k == yk ? 1.0 : 0.0));
        h[k] = num::mul(w, num::mul(p, num::sub(1.0, p)));
      }
      return;
    }
    case GbdtLoss::Poisson: {
      const double e = gbdt::exp(f[0]);
      g[0] = num::mul(w, num::sub(e, y));
      h[0] = num::mul(w, e);
      return;
    }
    case GbdtLoss::Tweedie: {
      const double a = gbdt::exp(num::mul(num::sub(1.0, param), f[0]));
      const double b = gbdt::exp(num::mul(num::sub(2.0, param), f[0]));
      const double ya = num::mul(y, a);
      g[0] = num::mul(w, num::sub(b, ya));
      h[0] = num::mul(w, num::sub(num::mul(num::sub(2.0, param), b), num::mul(num::sub(1.0, param), ya)));
      return;
    }
    case GbdtLoss::Huber: {
      const double r = num::sub(f[0], y);
      const double c = r > param ? param : (r < -param ? -param : r);
      g[0] = num::mul(w, c);
      h[0] = (r <= param && r >= -param) ? w : 0.0;
      return;
    }
    case GbdtLoss::MAE:
    case GbdtLoss::Quantile: {
      const double a = loss == GbdtLoss::MAE ? 0.5 : param;
      g[0] = y > f[0] ? num::mul(w, -a) : num::mul(w, num::sub(1.0, a));
      h[0] = w;
      return;
    }
    case GbdtLoss::MultiClass: {
      double mx = f[0];
      for (int k = 1; k < D; ++k) mx = f[k] > mx ? f[k] : mx;
      double s = 0.0;
      for (int k = 0; k < D; ++k) {
        const double e = gbdt::exp(num::sub(f[k], mx));
        g[k] = e;  // stash exp, overwritten below
        s = num::add(s, e);
      }
      const int yk = static_cast<int>(y);
      for (int k = 0; k < D; ++k) {
        const double p = num::div(g[k], s);
        g[k] = num::mul(w, num::sub(p, k == yk ? 1.0 : 0.0));
        h[k] = num::mul(w, num::mul(p, num::sub(1.0, p)));
      }
      return;
    }
  }
}

// ---------------------------------------------------------------------------
// Sampling: per-tree row weights (bootstrap) drawn from the counter-based
// generator, a pure function of (seed, stream, row), so every backend and
// thread count draws the same weights.
// ---------------------------------------------------------------------------
// Stream purposes; the stream of purpose P for tree t is (P << 32) | t.
inline constexpr std::uint64_t kStreamBootstrap = 1;
inline constexpr std::uint64_t kStreamFeatures = 2;
TL_HD std::uint64_t sampling_stream(std::uint64_t purpose, std::int64_t tree) {
  return (purpose << 32) | static_cast<std::uint64_t>(tree);
}

// The row sampling of one tree, passed by value to the gradient loops of
// both backends.
struct RowSampler {
  GbdtBootstrap type = GbdtBootstrap::No;
  double subsample = 1.0;
  double temperature = 1.0;
  std::uint64_t seed = 0;
  std::uint64_t stream = 0;
};

inline RowSampler row_sampler(const GbdtParams& p, std::int64_t tree) {
  RowSampler s;
  s.type = p.bootstrap;
  s.subsample = p.subsample;
  s.temperature = p.bagging_temperature;
  s.seed = p.seed;
  s.stream = sampling_stream(kStreamBootstrap, tree);
  return s;
}

// (-log u) ^ t for u in (0, 1], t >= 0: 1 for t = 0; 0 for u = 1 (t > 0);
// -log u for t = 1; otherwise exp(t log(-log u)), with the project's exp and log.
TL_HD double bayesian_weight(double u, double t) {
  if (t == 0.0) return 1.0;
  const double e = num::sub(0.0, gbdt::log(u));  // +0 for u = 1, never -0
  if (e == 0.0) return 0.0;
  if (t == 1.0) return e;
  return gbdt::exp(num::mul(t, gbdt::log(e)));
}

// Bootstrap weight of row i: Bernoulli draws u = rng::uniform<double> at
// position i (in [0, 1)), Bayesian u = rng::unit_double_open0(word64 at i) (in
// (0, 1]); see GbdtBootstrap.
TL_HD double bootstrap_weight(const RowSampler& s, std::int64_t i) {
  const std::uint64_t pos = static_cast<std::uint64_t>(i);
  switch (s.type) {
    case GbdtBootstrap::No:
      return 1.0;
    case GbdtBootstrap::Bernoulli:
      return rng::uniform<double>(s.seed, s.stream, pos) < s.subsample ? 1.0 : 0.0;
    case GbdtBootstrap::Bayesian:
      return bayesian_weight(rng::unit_double_open0(rng::word64(s.seed, s.stream, pos)), s.temperature);
  }
  return 1.0;
}

// The weight row i enters row_gradients with: its sample weight (1 without
// weights) times its bootstrap weight. No bootstrap leaves the sample weight
// untouched, and a Bernoulli row that is kept keeps it exactly.
TL_HD double row_weight(const RowSampler& s, const double* w, std::int64_t i) {
  const double wi = w ? w[i] : 1.0;
  if (s.type == GbdtBootstrap::No) return wi;
  const double b = bootstrap_weight(s, i);
  if (s.type == GbdtBootstrap::Bernoulli) return b != 0.0 ? wi : 0.0;
  return num::mul(wi, b);
}

// log(1 + exp(a)) computed as max(a, 0) + log(1 + exp(-|a|)).
TL_HD double softplus(double a) {
  const double pos = a > 0.0 ? a : 0.0;
  return num::add(pos, gbdt::log(num::add(1.0, gbdt::exp(-abs_bits(a)))));
}

// Loss of one row (before weighting and averaging).
// Logloss, CrossEntropy: softplus(f) - y f.  RMSE: (f - y)^2 (the metric is
// the root of the weighted mean).  MultiClass: logsumexp(f) - f_y.
// MultiClassOneVsAll: sum over k of softplus(f_k) - [y == k] f_k.
// Poisson: exp(f) - y f.  Tweedie: -y a / (1 - rho) + b / (2 - rho).
// Huber: r^2 / 2 for |r| <= delta, else delta (|r| - delta / 2).
// MAE: |y - f|.  Quantile: r = y - f; alpha r for r > 0, else (alpha - 1) r.
TL_HD double row_loss(GbdtLoss loss, int D, const double* f, double y, double param) {
  switch (loss) {
    case GbdtLoss::RMSE: {
      const double d = num::sub(f[0], y);
      return num::mul(d, d);
    }
    case GbdtLoss::Logloss:
    case GbdtLoss::CrossEntropy:
      return num::sub(softplus(f[0]), num::mul(y, f[0]));
    case GbdtLoss::MultiClassOneVsAll: {
      const int yk = static_cast<int>(y);
      double s = 0.0;
      for (int k = 0; k < D; ++k) s = num::add(s, num::sub(softplus(f[k]), k == yk ? f[k] : 0.0));
      return s;
    }
    case GbdtLoss::Poisson:
      return num::sub(gbdt::exp(f[0]), num::mul(y, f[0]));
    case GbdtLoss::Tweedie: {
      const double a = gbdt::exp(num::mul(num::sub(1.0, param), f[0]));
      const double b = gbdt::exp(num::mul(num::sub(2.0, param), f[0]));
      return num::add(num::div(num::mul(-y, a), num::sub(1.0, param)), num::div(b, num::sub(2.0, param)));
    }
    case GbdtLoss::Huber: {
      const double r = num::sub(f[0], y);
      const double ar = abs_bits(r);
      if (ar <= param) return num::mul(0.5, num::mul(r, r));
      return num::mul(param, num::sub(ar, num::mul(0.5, param)));
    }
    case GbdtLoss::MAE:
      return abs_bits(num::sub(y, f[0]));
    case GbdtLoss::Quantile: {
      const double r = num::sub(y, f[0]);
      return r > 0.0 ? num::mul(param, r) : num::mul(num::sub(param, 1.0), r);
    }
    case GbdtLoss::MultiClass: {
      double mx = f[0];
      for (int k = 1; k < D; ++k) mx = f[k] > mx ? f[k] : mx;
      double s = 0.0;
      for (int k = 0; k < D; ++k) s = num::add(s, gbdt::exp(num::sub(f[k], mx)));
      const int yk = static_cast<int>(y);
      return num::sub(num::add(mx, gbdt::log(s)), f[yk]);
    }
  }
  return 0.0;
}

// The prediction link of acc[0..D) into p[0..D) (p may alias acc).
// Probability: sigmoid (Logloss, CrossEntropy); softmax (MultiClass: the
// largest margin subtracted, exponentials summed in class order); per-class
// sigmoids divided by their sum in class order (MultiClassOneVsAll).
// Exponent: exp (Poisson, Tweedie). Raw: the identity.
TL_HD void link(GbdtLoss loss, int D, GbdtOutput kind, const double* acc, double* p) {
  if (kind == GbdtOutput::Exponent) {
    for (int k = 0; k < D; ++k) p[k] = gbdt::exp(acc[k]);
    return;
  }
  if (kind == GbdtOutput::Probability) {
    if (loss == GbdtLoss::Logloss || loss == GbdtLoss::CrossEntropy) {
      p[0] = sigmoid(acc[0]);
      return;
    }
    if (loss == GbdtLoss::MultiClass) {
      double mx = acc[0];
      for (int k = 1; k < D; ++k) mx = acc[k] > mx ? acc[k] : mx;
      double s = 0.0;
      for (int k = 0; k < D; ++k) {
        p[k] = gbdt::exp(num::sub(acc[k], mx));
        s = num::add(s, p[k]);
      }
      for (int k = 0; k < D; ++k) p[k] = num::div(p[k], s);
      return;
    }
    if (loss == GbdtLoss::MultiClassOneVsAll) {
      double s = 0.0;
      for (int k = 0; k < D; ++k) {
        p[k] = sigmoid(acc[k]);
        s = num::add(s, p[k]);
      }
      for (int k = 0; k < D; ++k) p[k] = num::div(p[k], s);
      return;
    }
  }
  for (int k = 0; k < D; ++k) p[k] = acc[k];
}

// ---------------------------------------------------------------------------
// Split scores and leaf values
// ---------------------------------------------------------------------------
// G^2 / (H + lambda), 0 where H + lambda <= 0 (an empty leaf without regularization).
TL_HD double score_term(double G, double H, double lambda) {
  const double d = num::add(H, lambda);
  if (!(d > 0.0)) return 0.0;
  return num::div(num::mul(G, G), d);
}

// Gain of splitting one leaf's (G, H) into (GL, HL) | (G - GL, H - HL), for
// one output: term(GL) + term(GR) - term(G).
TL_HD double split_gain(double GL, double HL, double GR, double HR, double G, double H, double lambda) {
  return num::sub(num::add(score_term(GL, HL, lambda), score_term(GR, HR, lambda)), score_term(G, H, lambda));
}

// The gain one leaf contributes to a candidate's score under the split
// constraints: split_gain, or -infinity when min_child_weight > 0 and a
// child's hessian sum is positive and below it (the candidate is then
// rejected: -infinity stays -infinity through the score's sums, every finite
// score beats it, and a level whose best score is -infinity does not split).
TL_HD double constrained_gain(double GL, double HL, double GR, double HR, double G, double H, double lambda,
                              double min_child_weight) {
  if (min_child_weight > 0.0 && ((HL > 0.0 && HL < min_child_weight) || (HR > 0.0 && HR < min_child_weight)))
    return -double_of(0x7ff0000000000000ULL);
  return split_gain(GL, HL, GR, HR, G, H, lambda);
}

// constrained_gain of the candidate whose left side has the fixed-point
// sums (GL, HL) in a leaf of totals (Gt, Ht) = (G, H) dequantized; isg, ish:
// the tree's inverse scales. Both backends score candidates through it.
TL_HD double prefix_gain(std::int64_t GL, std::int64_t HL, std::int64_t Gt, std::int64_t Ht, double G, double H,
                         double isg, double ish, double lambda, double min_child_weight) {
  const double gl = dequantize(GL, isg), hl = dequantize(HL, ish);
  const double gr = dequantize(Gt - GL, isg), hr = dequantize(Ht - HL, ish);
  return constrained_gain(gl, hl, gr, hr, G, H, lambda, min_child_weight);
}

// min_data_in_leaf: whether a candidate whose left child holds CL of a
// node's Ct counted rows leaves both children at least min_data rows.
TL_HD bool counts_allow(std::int64_t CL, std::int64_t Ct, int min_data) {
  return CL >= min_data && Ct - CL >= min_data;
}

// Histogram channels per row: the outputs' (g, h), plus under
// min_data_in_leaf > 1 a count channel (g = 1 for a row that takes part in
// the tree, h = 0) after them.
inline int hist_channels(const GbdtParams& p, int n_outputs) { return n_outputs + (p.min_data_in_leaf > 1); }

// Whether the split constraints can stop a tree above max_depth.
inline bool has_split_constraints(const GbdtParams& p) {
  return p.min_child_weight > 0.0 || p.min_split_gain > -double_of(0x7ff0000000000000ULL);
}

// Whether a level whose best candidate scored `score` splits (only asked
// when has_split_constraints): above min_split_gain, and not -infinity.
TL_HD bool level_splits(double score, double min_split_gain) {
  return score > min_split_gain && score > -double_of(0x7ff0000000000000ULL);
}

// Whether a Depthwise node whose best candidate scored `score` splits: a
// positive gain (a split leaving a child without gradient mass gains exactly
// 0, so both children hold rows) above min_split_gain; NaN and -infinity
// (every candidate rejected) never split.
TL_HD bool node_splits(double score, double min_split_gain) { return score > 0.0 && score > min_split_gain; }

// The split entry of level l's node with leaf prefix p in a tree's split
// arrays (see GbdtModel).
TL_HD std::int64_t split_slot(bool depthwise, int l, std::int64_t p) {
  return depthwise ? ((std::int64_t(1) << l) - 1) + p : l;
}

// Leaf value -G / (H + lambda) * learning_rate (0 where H + lambda <= 0).
TL_HD double leaf_value(double G, double H, double lambda, double lr) {
  const double d = num::add(H, lambda);
  if (!(d > 0.0)) return 0.0;
  return num::mul(num::div(-G, d), lr);
}

// The candidate order: a higher score wins; equal scores go to the lower
// index (feature * padded bins + border index); NaN scores never win.
TL_HD bool better_candidate(double sa, std::int64_t ia, double sb, std::int64_t ib) {
  const bool na = num::is_nan(sa), nb = num::is_nan(sb);
  if (na != nb) return nb;
  if (na) return ia < ib;
  if (sa != sb) return sa > sb;
  return ia < ib;
}

// ---------------------------------------------------------------------------
// Borders and bins
// ---------------------------------------------------------------------------
// Canonical sort key of a feature value: -0 becomes +0 and every NaN the
// canonical quiet NaN, so that equal values have equal bits and any sort of
// the keys gives one array.
TL_HD double canonical_key(double v) {
  if (num::is_nan(v)) return num::quiet_nan(v);
  return v == 0.0 ? 0.0 : v;
}

// A border between consecutive distinct sorted values a < b: their midpoint,
// or a where the midpoint rounds outside [a, b).
TL_HD double midpoint(double a, double b) {
  const double m = num::add(num::mul(a, 0.5), num::mul(b, 0.5));
  return (m >= a && m < b) ? m : a;
}

// Position of the first element of bpos[0..nb) that is >= target (bpos increasing).
TL_HD std::int32_t lower_bound_i32(const std::int32_t* bpos, std::int32_t nb, std::int64_t target) {
  std::int32_t lo = 0, hi = nb;
  while (lo < hi) {
    const std::int32_t mid = lo + (hi - lo) / 2;
    if (static_cast<std::int64_t>(bpos[mid]) < target)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// Selects borders from the sorted non-NaN sample v[0..m) given its boundary
// positions bpos[0..nb) (the i in [1, m) with v[i-1] < v[i], increasing).
// With at most max_borders boundaries every one is a border; otherwise for
// j = 1..max_borders the first boundary at or after position j*m/(max_borders+1)
// (duplicates dropped). Writes the border values, increasing, to out and
// returns their number.
TL_HD int select_borders(const double* v, std::int64_t m, const std::int32_t* bpos, std::int32_t nb, int max_borders,
                         double* out) {
  int count = 0;
  if (nb <= max_borders) {
    for (std::int32_t k = 0; k < nb; ++k) out[count++] = midpoint(v[bpos[k] - 1], v[bpos[k]]);
    return count;
  }
  std::int32_t last = -1;
  for (int j = 1; j <= max_borders; ++j) {
    const std::int64_t target = static_cast<std::int64_t>(j) * m / (max_borders + 1);
    const std::int32_t k = lower_bound_i32(bpos, nb, target);
    if (k >= nb) break;
    if (k > last) {
      out[count++] = midpoint(v[bpos[k] - 1], v[bpos[k]]);
      last = k;
    }
  }
  return count;
}

// Bin of value x given a feature's increasing borders b[0..nb): the number of
// borders below x; NaN takes bin 0 (nan_max false) or bin nb (nan_max true).
TL_HD int bin_of(double x, const double* b, int nb, bool nan_max) {
  if (num::is_nan(x)) return nan_max ? nb : 0;
  int lo = 0, hi = nb;
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if (b[mid] < x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// bin_of by a branch-free search: pb holds the feature's nb borders followed
// by +inf up to P entries, P a power of two > nb; x finite or NaN (NaN takes
// nan_bin: 0, or nb under nan_max). The same bin as bin_of for every such x.
TL_HD int bin_of_padded(double x, const double* pb, int P, int nan_bin) {
  int pos = 0;  // pb[0..pos) < x
  for (int step = P / 2; step >= 1; step /= 2) pos += pb[pos + step - 1] < x ? step : 0;
  return num::is_nan(x) ? nan_bin : pos;
}

// Prediction-time branch: right when x exceeds the border; NaN goes right
// when nan_right (nan_mode Max, or a Learned split's split_nan_right).
// Equivalent to bin_right(bin_of(x), split code).
TL_HD bool goes_right(double x, double border, bool nan_right) {
  if (num::is_nan(x)) return nan_right;
  return x > border;
}

// The split code of training: split_bin b, plus kNanRight when a Learned
// split sends the NaN bin (bin 0 of a feature with NaN, see compute_borders)
// right. Both backends keep codes in their split arrays while a model grows;
// gbdt::split_nan_from_codes turns them into split_bin and split_nan_right.
inline constexpr std::int32_t kNanRight = std::int32_t(1) << 16;
inline constexpr std::int32_t kSplitBinMask = kNanRight - 1;

// Training-time branch of a row in bin `bin` at a split of code `code` (>= 0):
// right when the bin is above the border, or it is bin 0 and the code says
// NaN goes right (the flag is only set where bin 0 holds NaN alone).
TL_HD bool bin_right(int bin, std::int32_t code) {
  // | and & rather than || and &&: no branch on the row's bin (the CPU's
  // per-node leaf update mispredicted half of them).
  return (bin > (code & kSplitBinMask)) | ((bin == 0) & ((code & kNanRight) != 0));
}

// Whether feature f's padded borders (count c) start with the NaN bin's
// border -infinity: the feature had NaN under nan_mode Min or Learned.
TL_HD bool has_nan_bin(const double* padded_f, int count) {
  return count > 0 && padded_f[0] == -double_of(0x7ff0000000000000ULL);
}

// Whether NaN goes right at split s: its split_nan_right entry under nan_mode
// Learned (snan non-null), else nan_max (nan_mode Max).
TL_HD bool nan_goes_right(const std::uint8_t* snan, std::int64_t s, bool nan_max) {
  return snan ? snan[s] != 0 : nan_max;
}

// The Learned choice for one candidate: the gain with the NaN rows moved
// right, when it beats the gain with them left (NaN and ties: left).
TL_HD bool nan_right_wins(double gain_left, double gain_right) { return gain_right > gain_left; }

// Offsets of the split and leaf arrays of tree t, given depths of trees < t
// accumulated by the caller.
struct TreeOffsets {
  std::int64_t split = 0;
  std::int64_t leaf = 0;
};

}  // namespace tl::gbdt

namespace tl::detail {

// Backend entry points (validated inputs only).
template <class T>
GbdtModel gbdt_fit_cpu(const Context& ctx, MatrixView<const T> X, const double* y, const double* weight,
                       const GbdtParams& params, const GbdtEvalSet<T>& eval, bool record_train_loss,
                       GbdtFitInfo* info, const GbdtCallback& callback);
template <class T>
GbdtModel gbdt_fit_cuda(const Context& ctx, MatrixView<const T> X, const double* y, const double* weight,
                        const GbdtParams& params, const GbdtEvalSet<T>& eval, bool record_train_loss,
                        GbdtFitInfo* info, const GbdtCallback& callback);
template <class T>
void gbdt_predict_cpu(const Context& ctx, const GbdtModel& model, MatrixView<const T> X, std::int64_t tree_begin,
                      std::int64_t tree_end, double* acc, GbdtOutput kind, MatrixView<float> out);
template <class T>
void gbdt_predict_cuda(const Context& ctx, const GbdtModel& model, MatrixView<const T> X, std::int64_t tree_begin,
                       std::int64_t tree_end, double* acc, GbdtOutput kind, MatrixView<float> out);
template <class T>
GbdtModel gbdt_borders_cpu(const Context& ctx, MatrixView<const T> X, int border_count, GbdtNanMode nan_mode);
template <class T>
GbdtModel gbdt_borders_cuda(const Context& ctx, MatrixView<const T> X, int border_count, GbdtNanMode nan_mode);

}  // namespace tl::detail
