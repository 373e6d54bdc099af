// CPU backend of the gradient-boosted trees: each tree's gradients and
// hessians of the rows, and their fixed-point versions.
#include <algorithm>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif
#include <vector>

#include "core/cpu/cpu_clones.hpp"
#include "ensemble/gbdt/gbdt_cpu.hpp"
#include "ensemble/gbdt/gbdt_cpu_trainer.hpp"

namespace tl::gbdt_cpu {
namespace {

// ---------------------------------------------------------------------------
// Gradients of a block of rows (gbdt::row_gradients) and their largest |g|
// and |h|, in two builds of the same code: the plain one, and one for CPUs
// with FMA instructions, where every std::fma of the loss (the exp of
// Logloss's sigmoid takes thirteen) is one instruction instead of a library
// call. Both round each fma once, exactly: the same bits. Chosen at run
// time (use_fma_build), so that a test can run both builds in one process.
// ---------------------------------------------------------------------------
struct GradientRows {
  GbdtLoss loss;
  int D;
  double param;
  const double* approx;
  const double* y;
  const gbdt::RowSampler* rs;
  const double* w;
  double* g;
  double* h;
  std::int64_t r0, r1;
};

inline void gradient_rows(const GradientRows& a, double& maxg, double& maxh) {
  double mg = 0.0, mh = 0.0;
  const int D = a.D;
  for (std::int64_t i = a.r0; i < a.r1; ++i) {
    gbdt::row_gradients(a.loss, D, a.approx + i * D, a.y[i], gbdt::row_weight(*a.rs, a.w, i), a.param, a.g + i * D,
                        a.h + i * D);
    for (int k = 0; k < D; ++k) {
      const double ag = gbdt::abs_bits(a.g[i * D + k]), ah = gbdt::abs_bits(a.h[i * D + k]);
      mg = ag > mg ? ag : mg;
      mh = ah > mh ? ah : mh;
    }
  }
  maxg = mg;
  maxh = mh;
}

#if defined(__x86_64__) && defined(__GNUC__)
// gradient_rows with its callees inlined (flatten) under the AVX2 + FMA
// target, as logistic_cpu.cpp's evaluation.
__attribute__((target("avx2,fma"), flatten)) void gradient_rows_fma(const GradientRows& a, double& maxg,
                                                                     double& maxh) {
  gradient_rows(a, maxg, maxh);
}
// The FMA build where the CPU runs it (TWINLEARN_CPU_ISA=baseline asks for
// the plain build; tests compare the two).
bool use_fma_build() { return detail::cpu_has_avx2_fma(); }

// gbdt::round_to_i64's first step for four values: t + (t < 0 ? -0.5 : 0.5)
// (its truncation is the caller's).
__attribute__((target("avx2,fma"))) inline __m256d add_half_away4(__m256d t) {
  return _mm256_add_pd(t, _mm256_blendv_pd(_mm256_set1_pd(0.5), _mm256_set1_pd(-0.5),
                                           _mm256_cmp_pd(t, _mm256_setzero_pd(), _CMP_LT_OQ)));
}

// 2^e of four exponents in the normal range (gbdt::pow2).
__attribute__((target("avx2,fma"))) inline __m256d pow2_4(__m128i e) {
  return _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_cvtepi32_epi64(_mm_add_epi32(e, _mm_set1_epi32(1023))), 52));
}

// gbdt::exp of four values: its steps lane by lane, each operation the
// scalar one (the reduction's products and differences, the thirteen fmas,
// the scaling by 2^k in the same one or two products), so each lane has the
// scalar bits; its special cases (NaN, overflow, underflow) by masks.
__attribute__((target("avx2,fma"))) inline __m256d exp4(__m256d x) {
  const __m256d t = _mm256_mul_pd(x, _mm256_set1_pd(1.4426950408889634));
  const __m256d kd = _mm256_round_pd(add_half_away4(t), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);  // round_to_i64
  const __m256d r = _mm256_sub_pd(_mm256_sub_pd(x, _mm256_mul_pd(kd, _mm256_set1_pd(6.93147180369123816490e-01))),
                                  _mm256_mul_pd(kd, _mm256_set1_pd(1.90821492927058770002e-10)));
  static constexpr double c[14] = {1.6059043836821613e-10, 2.08767569878681e-09,  2.505210838544172e-08,
                                   2.755731922398589e-07,  2.7557319223985893e-06, 2.48015873015873e-05,
                                   1.984126984126984e-04,  1.388888888888889e-03,  8.333333333333333e-03,
                                   4.1666666666666664e-02, 1.6666666666666666e-01, 0.5,
                                   1.0,                    1.0};
  __m256d p = _mm256_set1_pd(c[0]);
  for (int j = 1; j < 14; ++j) p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(c[j]));
  // 2^k as 2^e1 2^e2: e1 = k, e2 = 0 in the normal range; else the scalar
  // code's two factors (2^1023 or 2^-1000 first).
  const __m128i k = _mm256_cvttpd_epi32(kd);
  const __m128i hi = _mm_cmpgt_epi32(k, _mm_set1_epi32(1023)), lo = _mm_cmpgt_epi32(_mm_set1_epi32(-1022), k);
  const __m128i e1 = _mm_blendv_epi8(_mm_blendv_epi8(k, _mm_set1_epi32(1023), hi), _mm_set1_epi32(-1000), lo);
  const __m128i e2 = _mm_sub_epi32(k, e1);
  __m256d v = _mm256_mul_pd(_mm256_mul_pd(p, pow2_4(e1)), pow2_4(e2));
  v = _mm256_blendv_pd(v, _mm256_set1_pd(num::double_from_bits(0x7ff0000000000000ULL)),
                       _mm256_cmp_pd(x, _mm256_set1_pd(709.782712893384), _CMP_GT_OQ));
  v = _mm256_blendv_pd(v, _mm256_setzero_pd(), _mm256_cmp_pd(x, _mm256_set1_pd(-745.1332191019412), _CMP_LT_OQ));
  return _mm256_blendv_pd(v, _mm256_set1_pd(num::quiet_nan(0.0)), _mm256_cmp_pd(x, x, _CMP_UNORD_Q));
}

// Logloss / CrossEntropy rows (one output), four at a time: p = 1 / (1 +
// exp(-f)), g = w (p - y), h = w (p (1 - p)), each operation the scalar
// one (gbdt::row_gradients), so the same bits; the weights row by row
// (gbdt::row_weight), the last rows by the scalar code.
__attribute__((target("avx2,fma"))) void logloss_rows_avx2(const GradientRows& a, double& maxg, double& maxh) {
  const __m256d one = _mm256_set1_pd(1.0), sign = _mm256_set1_pd(-0.0);
  __m256d mg = _mm256_setzero_pd(), mh = _mm256_setzero_pd();
  std::int64_t i = a.r0;
  for (; i + 4 <= a.r1; i += 4) {
    alignas(32) double wv[4];
    for (int j = 0; j < 4; ++j) wv[j] = gbdt::row_weight(*a.rs, a.w, i + j);
    const __m256d w = _mm256_load_pd(wv);
    const __m256d e = exp4(_mm256_xor_pd(_mm256_loadu_pd(a.approx + i), sign));
    const __m256d p = _mm256_div_pd(one, _mm256_add_pd(one, e));
    const __m256d g = _mm256_mul_pd(w, _mm256_sub_pd(p, _mm256_loadu_pd(a.y + i)));
    const __m256d h = _mm256_mul_pd(w, _mm256_mul_pd(p, _mm256_sub_pd(one, p)));
    _mm256_storeu_pd(a.g + i, g);
    _mm256_storeu_pd(a.h + i, h);
    mg = _mm256_max_pd(_mm256_andnot_pd(sign, g), mg);  // (|g| > mg ? |g| : mg), NaN |g| ignored: as the scalar loop
    mh = _mm256_max_pd(_mm256_andnot_pd(sign, h), mh);
  }
  GradientRows tail = a;
  tail.r0 = i;
  gradient_rows_fma(tail, maxg, maxh);
  alignas(32) double lg[4], lh[4];
  _mm256_store_pd(lg, mg);
  _mm256_store_pd(lh, mh);
  for (int j = 0; j < 4; ++j) {
    maxg = lg[j] > maxg ? lg[j] : maxg;
    maxh = lh[j] > maxh ? lh[j] : maxh;
  }
}
bool vector_logloss(const GradientRows& a) {
  return a.D == 1 && (a.loss == GbdtLoss::Logloss || a.loss == GbdtLoss::CrossEntropy);
}

// gbdt::round_to_i64 of four values below 2^31 in magnitude: t plus
// (t < 0 ? -0.5 : 0.5), truncated (the 32-bit truncation, widened); ok
// loses the lanes outside that range (and NaN).
__attribute__((target("avx2,fma"))) inline __m256i round4(__m256d t, __m256d& ok) {
  const __m256d r = add_half_away4(t);
  ok = _mm256_and_pd(ok, _mm256_cmp_pd(_mm256_andnot_pd(_mm256_set1_pd(-0.0), r), _mm256_set1_pd(2147483647.0),
                                       _CMP_LT_OQ));
  return _mm256_cvtepi32_epi64(_mm256_cvttpd_epi32(r));
}

inline void quantize_pair(const double* g, const double* h, std::int64_t i, double sg, double sh, std::int64_t* q) {
  q[2 * i] = gbdt::quantize(g[i], sg);
  q[2 * i + 1] = gbdt::quantize(h[i], sh);
}

// q[2i], q[2i + 1] = gbdt::quantize(g[i], sg), gbdt::quantize(h[i], sh) for
// rows i0..i1 (one output, no count channel), four rows at a time: the
// product, the added half and the truncation as the scalar code; the values
// fit int32 (|v| <= 2^30 after scaling), so the truncation is the 32-bit
// one, widened. A group holding anything else (NaN) goes the scalar way.
__attribute__((target("avx2,fma"))) void quantize_pairs_avx2(const double* g, const double* h, std::int64_t i0,
                                                             std::int64_t i1, double sg, double sh,
                                                             std::int64_t* q) {
  const __m256d vsg = _mm256_set1_pd(sg), vsh = _mm256_set1_pd(sh);
  std::int64_t i = i0;
  for (; i + 4 <= i1; i += 4) {
    __m256d ok = _mm256_castsi256_pd(_mm256_set1_epi64x(-1));
    const __m256i qg = round4(_mm256_mul_pd(_mm256_loadu_pd(g + i), vsg), ok);
    const __m256i qh = round4(_mm256_mul_pd(_mm256_loadu_pd(h + i), vsh), ok);
    if (_mm256_movemask_pd(ok) != 0xf) {
      for (std::int64_t j = i; j < i + 4; ++j) quantize_pair(g, h, j, sg, sh, q);
      continue;
    }
    // (g0 h0 g2 h2) and (g1 h1 g3 h3), then rows 0, 1 and 2, 3 side by side.
    const __m256i lo = _mm256_unpacklo_epi64(qg, qh), hi = _mm256_unpackhi_epi64(qg, qh);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + 2 * i), _mm256_permute2x128_si256(lo, hi, 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + 2 * i + 4), _mm256_permute2x128_si256(lo, hi, 0x31));
  }
  for (; i < i1; ++i) quantize_pair(g, h, i, sg, sh, q);
}
#else
void gradient_rows_fma(const GradientRows& a, double& maxg, double& maxh) { gradient_rows(a, maxg, maxh); }
void logloss_rows_avx2(const GradientRows& a, double& maxg, double& maxh) { gradient_rows(a, maxg, maxh); }
bool use_fma_build() { return false; }
bool vector_logloss(const GradientRows&) { return false; }
void quantize_pairs_avx2(const double*, const double*, std::int64_t, std::int64_t, double, double, std::int64_t*) {}
#endif

// One block's gradients in the widest build this CPU runs.
void gradient_block(const GradientRows& a, bool fma, double& maxg, double& maxh) {
  if (fma && vector_logloss(a)) {
    logloss_rows_avx2(a, maxg, maxh);
  } else if (fma) {
    gradient_rows_fma(a, maxg, maxh);
  } else {
    gradient_rows(a, maxg, maxh);
  }
}

}  // namespace

// g, h per row and output (the row's weight from gbdt::row_weight: sample
// weight times the tree's bootstrap weight); then their fixed-point versions.
template <class T>
void CpuTrainer<T>::gradients(const gbdt::RowSampler& rs) {
  const std::int64_t nb = ceil_div(n_, kRowBlock);
  std::vector<double> mg(static_cast<std::size_t>(nb), 0.0), mh(static_cast<std::size_t>(nb), 0.0);
  const bool fma = use_fma_build();
  pfor(ctx_, nb, n_ * D_ * 8, [&](std::int64_t b) {
    const GradientRows gr{p_.loss, D_, p_.loss_param, approx_.data(), y_, &rs, w_, g_.data(), h_.data(),
                          b * kRowBlock, std::min(n_, (b + 1) * kRowBlock)};
    gradient_block(gr, fma, mg[b], mh[b]);
  });
  double maxg = 0.0, maxh = 0.0;
  for (std::int64_t b = 0; b < nb; ++b) {
    maxg = mg[b] > maxg ? mg[b] : maxg;
    maxh = mh[b] > maxh ? mh[b] : maxh;
  }
  const int eg = gbdt::quant_exponent(maxg), eh = gbdt::quant_exponent(maxh);
  const double sg = gbdt::pow2(eg), sh = gbdt::pow2(eh);
  isg_ = gbdt::pow2(-eg);
  ish_ = gbdt::pow2(-eh);
  pfor(ctx_, nb, n_ * D_, [&](std::int64_t b) {
    const std::int64_t r1 = std::min(n_, (b + 1) * kRowBlock);
    if (fma && Dh_ == 1) {
      quantize_pairs_avx2(g_.data(), h_.data(), b * kRowBlock, r1, sg, sh, q_.data());
      return;
    }
    for (std::int64_t i = b * kRowBlock; i < r1; ++i) {
      for (int k = 0; k < D_; ++k) {
        q_[2 * (i * Dh_ + k)] = gbdt::quantize(g_[i * D_ + k], sg);
        q_[2 * (i * Dh_ + k) + 1] = gbdt::quantize(h_[i * D_ + k], sh);
      }
      if (Dh_ > D_) {  // the count channel: the row takes part in the tree
        q_[2 * (i * Dh_ + D_)] = gbdt::row_weight(rs, w_, i) > 0.0;
        q_[2 * (i * Dh_ + D_) + 1] = 0;
      }
    }
  });
}

template void CpuTrainer<float>::gradients(const gbdt::RowSampler&);
template void CpuTrainer<double>::gradients(const gbdt::RowSampler&);

}  // namespace tl::gbdt_cpu

namespace tl::detail {

void gbdt_gradients_cpu(GbdtLoss loss, int D, double param, const double* approx, const double* y, const double* w,
                        std::int64_t n, double* g, double* h, double* maxg, double* maxh) {
  const gbdt::RowSampler rs;
  const gbdt_cpu::GradientRows gr{loss, D, param, approx, y, &rs, w, g, h, 0, n};
  gbdt_cpu::gradient_block(gr, gbdt_cpu::use_fma_build(), *maxg, *maxh);
}

}  // namespace tl::detail
