// CPU backend of the gradient-boosted trees. The reference the CUDA backend
// is tested against: the same steps in the same order, with OpenMP threads
// deciding only who computes which feature or row block.
#include <algorithm>
#include <cstdlib>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif
#include <cstring>
#include <vector>

#include "core/reduce/cpu_clones.hpp"
#include "ensemble/gbdt/gbdt_cpu.hpp"
#include "ensemble/gbdt/gbdt_driver.hpp"
#include "twinlearn/core/parallel.hpp"
#include "twinlearn/core/ties.hpp"
#include "twinlearn/core/tree.hpp"

namespace tl {
namespace {

using gbdt::kMaxBordersPadded;
constexpr std::int64_t kRowBlock = 8192;  // rows per task in row-parallel loops (results do not depend on it)
constexpr std::int64_t kHistGroupBytes = 32 << 10;  // one task's features' histogram of a leaf, at most (speed)
constexpr std::int64_t kPrefetchRows = 16;          // how far ahead the histogram loop fetches a listed row (speed)

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// fn(i) for i in [0, n): on the context's threads, or serially when the
// work (an element count) is too small to pay for a parallel region. Every
// caller's result is the same either way.
template <class Fn>
void pfor(const Context& ctx, std::int64_t n, std::int64_t work, Fn&& fn) {
  if (n <= 1 || work < (std::int64_t(1) << 15) || ctx.n_threads() == 1) {
    for (std::int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  parallel_for(ctx, n, fn);
}

// ---------------------------------------------------------------------------
// Borders and bins
// ---------------------------------------------------------------------------
struct Borders {
  int F = 0;
  std::vector<double> padded;  // F * kMaxBordersPadded
  std::vector<int> count;      // F
  bool nan_max = false;
};

// Per-feature NaN counts over all rows; raises on infinities, and on NaN under nan_mode Forbidden.
template <class T>
std::vector<std::int64_t> count_nan(const Context& ctx, MatrixView<const T> X, GbdtNanMode nan_mode) {
  const std::int64_t n = X.rows, F = X.cols, nb = ceil_div(n, kRowBlock);
  std::vector<std::int64_t> part(static_cast<std::size_t>(nb * (F + 1)), 0);
  pfor(ctx, nb, n * F, [&](std::int64_t b) {
    std::int64_t* c = part.data() + b * (F + 1);
    const std::int64_t r1 = std::min(n, (b + 1) * kRowBlock);
    for (std::int64_t i = b * kRowBlock; i < r1; ++i)
      for (std::int64_t f = 0; f < F; ++f) {
        const T v = X(i, f);
        c[f] += num::is_nan(v);
        c[F] += num::is_inf(v);
      }
  });
  std::vector<std::int64_t> nan(static_cast<std::size_t>(F + 1), 0);
  for (std::int64_t b = 0; b < nb; ++b)
    for (std::int64_t f = 0; f <= F; ++f) nan[f] += part[b * (F + 1) + f];
  TL_REQUIRE(nan[F] == 0, ValueError, "Input X contains infinity or a value too large for dtype('float64').");
  if (nan_mode == GbdtNanMode::Forbidden)
    for (std::int64_t f = 0; f < F; ++f)
      TL_REQUIRE(nan[f] == 0, ValueError, "Input X contains NaN (feature ", f, ") and nan_mode is 'Forbidden'.");
  nan.resize(static_cast<std::size_t>(F));
  return nan;
}

// keys sorted ascending by an LSD radix sort, 11 bits a pass; passes whose
// digit is the same for every key are skipped.
template <class K>
void radix_sort(std::vector<K>& keys, std::vector<K>& tmp) {
  const std::size_t m = keys.size();
  tmp.resize(m);
  constexpr int kBits = 11, kBuckets = 1 << kBits;
  std::vector<std::size_t> count(kBuckets);
  for (int shift = 0; shift < static_cast<int>(8 * sizeof(K)); shift += kBits) {
    std::fill(count.begin(), count.end(), 0);
    for (std::size_t i = 0; i < m; ++i) ++count[(keys[i] >> shift) & (kBuckets - 1)];
    if (m == 0 || count[(keys[0] >> shift) & (kBuckets - 1)] == m) continue;  // one digit: nothing moves
    std::size_t pos = 0;
    for (int d = 0; d < kBuckets; ++d) {
      const std::size_t c = count[d];
      count[d] = pos;
      pos += c;
    }
    for (std::size_t i = 0; i < m; ++i) tmp[count[(keys[i] >> shift) & (kBuckets - 1)]++] = keys[i];
    keys.swap(tmp);
  }
}

// v sorted ascending (non-NaN values, no -0: canonical_key's, each a value
// of type T), by radix_sort on their ties::total_order_key as T: a float's
// key is half a double's and takes three passes instead of four, and the
// order is the same, float -> double being exact and increasing. Equal
// values are equal bits here, so the sorted array is the one std::sort
// gives: the borders do not depend on the sorting method. (std::sort took
// about an eighth of the CPU fit of 200k x 28 rows, 100 trees of depth 6.)
template <class T>
void sort_sample(std::vector<double>& v) {
  using K = typename num::math_detail::Fmt<T>::U;
  std::vector<K> keys(v.size()), tmp;
  for (std::size_t i = 0; i < v.size(); ++i) keys[i] = ties::total_order_key(static_cast<T>(v[i]));
  radix_sort(keys, tmp);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(ties::from_total_order_key<T>(keys[i]));
}

template <class T>
Borders compute_borders(const Context& ctx, MatrixView<const T> X, int border_count, GbdtNanMode nan_mode) {
  const std::int64_t n = X.rows;
  const int F = static_cast<int>(X.cols);
  Borders B;
  B.F = F;
  B.nan_max = nan_mode == GbdtNanMode::Max;
  // Slots past a feature's borders hold +inf, so bin_matrix can search them
  // as they are (gbdt::bin_of_padded).
  B.padded.assign(static_cast<std::size_t>(F) * kMaxBordersPadded, gbdt::double_of(0x7ff0000000000000ULL));
  B.count.assign(static_cast<std::size_t>(F), 0);
  const std::vector<std::int64_t> nan = count_nan(ctx, X, nan_mode);
  const std::int64_t S = std::min<std::int64_t>(n, gbdt::kBorderSample);
  pfor(ctx, F, S * F * 16, [&](std::int64_t f) {
    std::vector<double> v;
    v.reserve(static_cast<std::size_t>(S));
    for (std::int64_t k = 0; k < S; ++k) {
      const std::int64_t row = n <= gbdt::kBorderSample ? k : k * n / S;
      const double x = gbdt::canonical_key(static_cast<double>(X(row, f)));
      if (!num::is_nan(x)) v.push_back(x);
    }
    sort_sample<T>(v);
    const std::int64_t m = static_cast<std::int64_t>(v.size());
    std::vector<std::int32_t> bpos;
    for (std::int64_t i = 1; i < m; ++i)
      if (v[i - 1] < v[i]) bpos.push_back(static_cast<std::int32_t>(i));
    const bool has_nan = nan[f] > 0;
    const int maxb = has_nan ? std::min(border_count, kMaxBordersPadded - 2) : border_count;
    double* out = B.padded.data() + f * kMaxBordersPadded;
    // NaN's own bin: below every value (Min, Learned) or above (Max).
    const bool nan_low = nan_mode != GbdtNanMode::Max;
    int c = gbdt::select_borders(v.data(), m, bpos.data(), static_cast<std::int32_t>(bpos.size()), maxb,
                                 has_nan && nan_low ? out + 1 : out);
    if (has_nan) {
      if (nan_low)
        out[0] = -gbdt::double_of(0x7ff0000000000000ULL);
      else
        out[c] = gbdt::double_of(0x7ff0000000000000ULL);
      ++c;
    }
    B.count[f] = c;
  });
  return B;
}

// Feature-major bins: bins[f * n + i]. Each value's bin is gbdt::bin_of,
// found by gbdt::bin_of_padded over the feature's padded borders (+inf past
// the count, compute_borders) up to the smallest power of two above the
// count; the data are finite or NaN (infinities were refused).
template <class T>
void bin_matrix(const Context& ctx, MatrixView<const T> X, const Borders& B, std::vector<std::uint8_t>& bins) {
  const std::int64_t n = X.rows, F = X.cols;
  bins.assign(static_cast<std::size_t>(n * F), 0);
  pfor(ctx, ceil_div(n, kRowBlock), n * F, [&](std::int64_t b) {
    const std::int64_t r1 = std::min(n, (b + 1) * kRowBlock);
    for (std::int64_t f = 0; f < F; ++f) {
      const double* bf = B.padded.data() + f * kMaxBordersPadded;
      int P = 1;
      while (P < B.count[f] + 1) P *= 2;
      const int nan_bin = B.nan_max ? B.count[f] : 0;
      std::uint8_t* col = bins.data() + f * n;
      for (std::int64_t i = b * kRowBlock; i < r1; ++i)
        col[i] = static_cast<std::uint8_t>(gbdt::bin_of_padded(static_cast<double>(X(i, f)), bf, P, nan_bin));
    }
  });
}

// bins (feature-major, n x F) row-major: out[i * F + f] = bins[f * n + i].
std::vector<std::uint8_t> row_major(const Context& ctx, const std::vector<std::uint8_t>& bins, std::int64_t n, int F) {
  std::vector<std::uint8_t> out(static_cast<std::size_t>(n * F));
  pfor(ctx, ceil_div(n, kRowBlock), n * F, [&](std::int64_t b) {
    const std::int64_t r1 = std::min(n, (b + 1) * kRowBlock);
    for (std::int64_t f = 0; f < F; ++f) {
      const std::uint8_t* col = bins.data() + f * n;
      for (std::int64_t i = b * kRowBlock; i < r1; ++i) out[static_cast<std::size_t>(i * F + f)] = col[i];
    }
  });
  return out;
}

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
  v = _mm256_blendv_pd(v, _mm256_set1_pd(gbdt::double_of(0x7ff0000000000000ULL)),
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

// cnt[leaf[i]] += 1 for i < m (m <= kRowBlock). With few leaves, four
// tables take the rows in turn, so that a run of rows in one leaf does not
// wait on each increment before the next.
void count_leaves(const std::int32_t* leaf, std::int64_t m, std::int64_t L, std::int64_t* cnt) {
  constexpr std::int64_t kMaxL = 256;
  if (L > kMaxL) {
    for (std::int64_t i = 0; i < m; ++i) cnt[leaf[i]] += 1;
    return;
  }
  std::int32_t t[4][kMaxL];
  for (auto& ti : t) std::fill(ti, ti + L, 0);
  std::int64_t i = 0;
  for (; i + 4 <= m; i += 4) {
    ++t[0][leaf[i]];
    ++t[1][leaf[i + 1]];
    ++t[2][leaf[i + 2]];
    ++t[3][leaf[i + 3]];
  }
  for (; i < m; ++i) ++t[0][leaf[i]];
  for (std::int64_t l = 0; l < L; ++l) cnt[l] += t[0][l] + t[1][l] + t[2][l] + t[3][l];
}

// ---------------------------------------------------------------------------
// Trainer
// ---------------------------------------------------------------------------
template <class T>
class CpuTrainer {
 public:
  CpuTrainer(const Context& ctx, MatrixView<const T> X, const double* y, const double* w, const GbdtParams& p,
             const GbdtEvalSet<T>& eval)
      : ctx_(ctx), p_(p), n_(X.rows), F_(static_cast<int>(X.cols)), D_(gbdt::outputs_of(p)),
        Dh_(gbdt::hist_channels(p, D_)), y_(y), w_(w) {
    B_ = compute_borders(ctx, X, p.border_count, p.nan_mode);
    bin_matrix(ctx, X, B_, bins_);
    int maxb = 0;
    bool any = false;
    for (int f = 0; f < F_; ++f) {
      maxb = std::max(maxb, B_.count[f]);
      any = any || B_.count[f] > 0;
    }
    Bp_ = maxb + 1;
    depth_ = any ? p.max_depth : 0;
    if (p.nan_mode == GbdtNanMode::Learned) nan_bin_ = gbdt::nan_bins(B_.padded, B_.count);
    if (eval.X.rows > 0) {
      has_eval_ = true;
      m_ = eval.X.rows;
      ey_ = eval.y;
      ew_ = eval.weight;
      count_nan(ctx, eval.X, p.nan_mode);
      bin_matrix(ctx, eval.X, B_, ebins_);
    }
    const std::size_t nD = static_cast<std::size_t>(n_ * D_);
    approx_.resize(nD);
    g_.resize(nD);
    h_.resize(nD);
    q_.resize(static_cast<std::size_t>(n_ * 2 * Dh_));
    rbins_ = row_major(ctx, bins_, n_, F_);
    leaf_.resize(static_cast<std::size_t>(n_));
    if (depth_ > 0) {
      const std::size_t hs = (std::size_t(1) << (depth_ - 1)) * F_ * Bp_ * Dh_ * 2;
      prev_.resize(hs);
      cur_.resize(hs);
    }
  }

  void init(const std::vector<double>& base) {
    for (std::int64_t i = 0; i < n_; ++i)
      for (int k = 0; k < D_; ++k) approx_[i * D_ + k] = base[k];
    if (has_eval_) {
      eapprox_.resize(static_cast<std::size_t>(m_ * D_));
      for (std::int64_t i = 0; i < m_; ++i)
        for (int k = 0; k < D_; ++k) eapprox_[i * D_ + k] = base[k];
    }
  }

  const std::vector<int>& border_counts() const { return B_.count; }

  // nb[f]: the borders of feature f the split search may use (0 under rsm
  // for a feature outside the tree's subset).
  void grow_tree(int t, const std::vector<int>& nb) {
    nb_ = nb;
    gradients(gbdt::row_sampler(p_, t));
    const int depth = depth_;
    const std::int64_t nleaves = std::int64_t(1) << depth;
    const bool dw = gbdt_per_node(p_.grow_policy);
    const std::int64_t nsplit = gbdt_tree_splits(p_.grow_policy, depth);
    std::vector<std::int32_t> sf(static_cast<std::size_t>(nsplit)), sb(static_cast<std::size_t>(nsplit));
    std::vector<double> sg(static_cast<std::size_t>(nsplit));
    std::vector<double> values(static_cast<std::size_t>(nleaves * D_));
    std::fill(leaf_.begin(), leaf_.end(), 0);
    if (depth == 0) {
      // No feature can split: one leaf from the totals.
      std::vector<std::int64_t> G(D_, 0), H(D_, 0);
      for (std::int64_t i = 0; i < n_; ++i)
        for (int k = 0; k < D_; ++k) {
          G[k] += q_[2 * (i * Dh_ + k)];
          H[k] += q_[2 * (i * Dh_ + k) + 1];
        }
      for (int k = 0; k < D_; ++k)
        values[k] = gbdt::leaf_value(gbdt::dequantize(G[k], isg_), gbdt::dequantize(H[k], ish_), p_.l2_leaf_reg,
                                     p_.learning_rate);
    }
    std::vector<std::int64_t> counts(static_cast<std::size_t>(nleaves), 0);
    int grown = depth;  // the tree's depth: less than depth_ when the split constraints stop it
    const bool constrained = gbdt::has_split_constraints(p_);
    for (int d = 0; d < depth; ++d) {
      const std::int64_t L = std::int64_t(1) << d;
      choose_slots(d, counts);
      build_histograms(L);
      if (d > 0) subtract_siblings(L);
      if (dw) {
        // Every level is grown (a node that does not split sends its rows
        // left); gbdt::trim_trees drops the levels below the last split.
        const std::int64_t o = L - 1;
        best_splits(L, sf.data() + o, sb.data() + o, sg.data() + o);
        update_leaves(d, sf.data() + o, sb.data() + o, counts, d + 1 < depth);
        if (d + 1 < depth) std::swap(prev_, cur_);
        continue;
      }
      best_split(L, &sf[d], &sb[d], &sg[d]);
      if (constrained && !gbdt::level_splits(sg[d], p_.min_split_gain)) {
        grown = d;
        break;
      }
      update_leaves(d, &sf[d], &sb[d], counts, d + 1 < depth);
      if (d + 1 < depth) std::swap(prev_, cur_);
    }
    if (grown < depth) {
      // Stopped at level `grown`: its 2^grown leaves keep the values of their totals.
      sf.resize(grown);
      sb.resize(grown);
      sg.resize(grown);
      values.resize(static_cast<std::size_t>((std::int64_t(1) << grown) * D_));
      total_values(std::int64_t(1) << grown, values);
    } else if (depth > 0) {
      const std::int64_t o = gbdt::split_slot(dw, depth - 1, 0);
      std::vector<std::int64_t> tot;
      leaf_totals(depth, sf.data() + o, sb.data() + o, dw, tot);
      if (p_.grow_policy == GbdtGrowPolicy::Lossguide) keep_best_first(depth, sf, sb, sg, tot);
      gbdt::values_from_totals(tot, isg_, ish_, p_.l2_leaf_reg, p_.learning_rate, values.data(), values.size());
    }
    apply_tree(values);
    if (has_eval_) apply_tree_eval(grown, sf, sb, values);
    tree_depth_.push_back(grown);
    split_feature_.insert(split_feature_.end(), sf.begin(), sf.end());
    split_bin_.insert(split_bin_.end(), sb.begin(), sb.end());
    split_gain_.insert(split_gain_.end(), sg.begin(), sg.end());
    leaf_values_.insert(leaf_values_.end(), values.begin(), values.end());
  }

  double loss(bool eval) {
    const std::int64_t n = eval ? m_ : n_;
    const double* a = eval ? eapprox_.data() : approx_.data();
    const double* y = eval ? ey_ : y_;
    const double* w = eval ? ew_ : w_;
    const std::int64_t nc = ceil_div(n, gbdt::kLossChunk);
    std::vector<double> part(static_cast<std::size_t>(2 * nc));
    pfor(ctx_, nc, n * D_ * 8, [&](std::int64_t c) {
      double s = 0.0, ws = 0.0;
      const std::int64_t r1 = std::min(n, (c + 1) * gbdt::kLossChunk);
      for (std::int64_t i = c * gbdt::kLossChunk; i < r1; ++i) {
        const double wi = w ? w[i] : 1.0;
        s = num::add(s, num::mul(wi, gbdt::row_loss(p_.loss, D_, a + i * D_, y[i], p_.loss_param)));
        ws = num::add(ws, wi);
      }
      part[2 * c] = s;
      part[2 * c + 1] = ws;
    });
    return gbdt::finish_loss(p_.loss, part);
  }

  // The eval set's approximations themselves: no copy on the CPU.
  const double* eval_raw() { return eapprox_.data(); }

  void export_model(GbdtModel& m, int n_trees) {
    gbdt::set_borders(m, F_, B_.padded, B_.count);
    m.tree_depth.assign(tree_depth_.begin(), tree_depth_.begin() + n_trees);
    std::size_t ns = 0, nl = 0;
    for (int t = 0; t < n_trees; ++t) {
      ns += static_cast<std::size_t>(gbdt_tree_splits(p_.grow_policy, tree_depth_[t]));
      nl += (std::size_t(1) << tree_depth_[t]) * D_;
    }
    m.split_feature.assign(split_feature_.begin(), split_feature_.begin() + ns);
    m.split_bin.assign(split_bin_.begin(), split_bin_.begin() + ns);
    m.split_gain.assign(split_gain_.begin(), split_gain_.begin() + ns);
    m.leaf_values.assign(leaf_values_.begin(), leaf_values_.begin() + nl);
  }

 private:
  // g, h per row and output (the row's weight from gbdt::row_weight: sample
  // weight times the tree's bootstrap weight); then their fixed-point versions.
  void gradients(const gbdt::RowSampler& rs) {
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

  // Which leaves get their histogram built at level d: the root at level 0;
  // then, of each pair of siblings, the one with fewer rows (the other comes
  // from its parent by subtraction). The choice only affects speed.
  void choose_slots(int d, const std::vector<std::int64_t>& counts) {
    const std::int64_t L = std::int64_t(1) << d;
    built_.assign(static_cast<std::size_t>(L), 0);
    if (d == 0) {
      built_[0] = 1;
      return;
    }
    const std::int64_t half = L / 2;
    for (std::int64_t p = 0; p < half; ++p) {
      const std::int64_t c = counts[p] <= counts[p + half] ? p : p + half;
      built_[c] = 1;
    }
  }

  // hist entry (leaf, f, bin, k) at 2 * (((leaf * F + f) * Bp + bin) * D + k) (+1 for h).
  std::size_t hidx(std::int64_t leaf, std::int64_t f, std::int64_t b, int k) const {
    return static_cast<std::size_t>(2 * (((leaf * F_ + f) * Bp_ + b) * Dh_ + k));
  }

  // The level's built leaves' histograms in cur_. Their entries are integer
  // sums, so neither the order rows are added in nor which thread adds them
  // changes a bit. A task takes a group of features, small enough that a
  // leaf's histogram of the group stays in the first-level cache, and adds
  // the rows of each built leaf in turn (build_order), every row's bins of
  // the group read side by side (rbins_) and its (g, h) pairs read once for
  // the group. With fewer groups than threads a task also takes a share of
  // the rows, into a partial histogram; the partials are merged after.
  void build_histograms(std::int64_t L) {
    build_order(L);
    const int nt = ctx_.n_threads();
    const std::int64_t nrows = seg_[L];
    const std::int64_t w = 2 * Dh_;
    const std::int64_t fstride = Bp_ * w;  // int64 entries per feature
    // Groups: as few as the cache allows, rounded up to a multiple of the
    // threads (a static schedule then gives every thread the same features).
    const std::int64_t gmax = std::max<std::int64_t>(1, kHistGroupBytes / (fstride * 8));
    std::int64_t ngroups = std::min<std::int64_t>(F_, ceil_div(ceil_div(F_, gmax), nt) * nt);
    const std::int64_t G = ceil_div(F_, ngroups);
    ngroups = ceil_div(F_, G);
    std::int64_t rb = ngroups >= nt ? 1 : ceil_div(nt, ngroups);
    rb = std::max<std::int64_t>(1, std::min(rb, ceil_div(nrows, 4 * kRowBlock)));
    const std::size_t part_size = static_cast<std::size_t>(L * G * fstride);
    while (rb > 1 && rb * ngroups * part_size * sizeof(std::int64_t) > (std::size_t(256) << 20)) --rb;
    const std::int64_t rows_per = ceil_div(nrows, rb);
    if (rb == 1) {
      pfor(ctx_, ngroups, nrows * F_, [&](std::int64_t g) {
        const int f0 = static_cast<int>(g * G), f1 = std::min(F_, static_cast<int>(g * G + G));
        for (std::int64_t leaf = 0; leaf < L; ++leaf) {
          if (!built_[leaf]) continue;
          std::int64_t* h = cur_.data() + hidx(leaf, f0, 0, 0);
          std::fill(h, h + (f1 - f0) * fstride, 0);
          add_rows(seg_[leaf], seg_[leaf + 1], f0, f1, h, fstride);
        }
      });
      return;
    }
    std::vector<std::int64_t> parts(static_cast<std::size_t>(ngroups * rb) * part_size, 0);
    pfor(ctx_, ngroups * rb, nrows * F_, [&](std::int64_t task) {
      const std::int64_t g = task / rb, r = task % rb;
      const int f0 = static_cast<int>(g * G), f1 = std::min(F_, static_cast<int>(g * G + G));
      const std::int64_t r0 = r * rows_per, r1 = std::min(nrows, r0 + rows_per);
      for (std::int64_t leaf = 0; leaf < L; ++leaf) {
        const std::int64_t a = std::max(r0, seg_[leaf]), b = std::min(r1, seg_[leaf + 1]);
        if (a < b) add_rows(a, b, f0, f1, parts.data() + task * part_size + leaf * G * fstride, fstride);
      }
    });
    pfor(ctx_, ngroups, L * F_ * fstride * rb, [&](std::int64_t g) {
      const int f0 = static_cast<int>(g * G), f1 = std::min(F_, static_cast<int>(g * G + G));
      const std::int64_t m = (f1 - f0) * fstride;
      for (std::int64_t leaf = 0; leaf < L; ++leaf) {
        if (!built_[leaf]) continue;
        std::int64_t* dst = cur_.data() + hidx(leaf, f0, 0, 0);
        std::fill(dst, dst + m, 0);
        for (std::int64_t r = 0; r < rb; ++r) {
          const std::int64_t* s = parts.data() + (g * rb + r) * part_size + leaf * G * fstride;
          for (std::int64_t e = 0; e < m; ++e) dst[e] += s[e];
        }
      }
    });
  }

  // The rows of the level's built leaves grouped by leaf, each leaf's in
  // increasing order: order_[seg_[l] .. seg_[l + 1]) (empty for a leaf not
  // built), placed by the per-block leaf counts update_leaves left. At the
  // root the positions are the rows themselves (no list).
  void build_order(std::int64_t L) {
    seg_.assign(static_cast<std::size_t>(L + 1), 0);
    listed_ = L > 1;
    if (L == 1) {
      seg_[1] = n_;
      return;
    }
    const std::int64_t nb = ceil_div(n_, kRowBlock);
    std::vector<std::int64_t> off(static_cast<std::size_t>(nb * L));
    std::int64_t o = 0;
    for (std::int64_t leaf = 0; leaf < L; ++leaf) {
      seg_[leaf] = o;
      if (!built_[leaf]) continue;
      for (std::int64_t b = 0; b < nb; ++b) {
        off[b * L + leaf] = o;
        o += blk_counts_[b * L + leaf];
      }
    }
    seg_[L] = o;
    order_.resize(static_cast<std::size_t>(o));
    pfor(ctx_, nb, n_, [&](std::int64_t b) {
      // The block's rows of built leaves, by a branch-free compaction (a
      // branch on the leaf mispredicts half the time), then placed.
      std::vector<std::int32_t> rows(static_cast<std::size_t>(kRowBlock)), leaves(rows.size());
      const std::uint8_t* built = built_.data();
      const std::int32_t* lf = leaf_.data();
      const std::int64_t r0 = b * kRowBlock, r1 = std::min(n_, r0 + kRowBlock);
      std::int64_t m = 0;
      for (std::int64_t i = r0; i < r1; ++i) {
        const std::int32_t leaf = lf[i];
        rows[m] = static_cast<std::int32_t>(i);
        leaves[m] = leaf;
        m += built[leaf];
      }
      std::int64_t* ob = off.data() + b * L;
      std::int32_t* out = order_.data();
      for (std::int64_t k = 0; k < m; ++k) out[ob[leaves[k]]++] = rows[k];
    });
  }

  // Adds the rows at positions r0..r1 of the level's order (the rows
  // themselves at the root) for features f0..f1 into h: feature f0 + j's
  // entry (bin, k) at h[j * fstride + bin * 2 * Dh_ + 2 * k] (+1 for h).
  void add_rows(std::int64_t r0, std::int64_t r1, int f0, int f1, std::int64_t* h, std::int64_t fstride) const {
    const std::int32_t* rows = listed_ ? order_.data() : nullptr;
    if (Dh_ == 1) {
      if (rows) {
        add_pairs<true>(rows, r0, r1, f0, f1, h, fstride);
      } else {
        add_pairs<false>(rows, r0, r1, f0, f1, h, fstride);
      }
      return;
    }
    const std::int64_t w = 2 * Dh_;
    for (std::int64_t r = r0; r < r1; ++r) {
      const std::int64_t i = rows ? rows[r] : r;
      const std::int64_t* q = q_.data() + i * w;
      const std::uint8_t* bi = rbins_.data() + i * F_ + f0;
      for (int f = 0; f < f1 - f0; ++f) {
        std::int64_t* e = h + f * fstride + static_cast<std::int64_t>(bi[f]) * w;
        for (std::int64_t j = 0; j < w; ++j) e[j] += q[j];
      }
    }
  }
  // One (g, h) pair a row: each entry's update is one 128-bit add.
  template <bool Indexed>
  void add_pairs(const std::int32_t* rows, std::int64_t r0, std::int64_t r1, int f0, int f1, std::int64_t* h,
                 std::int64_t fstride) const {
    typedef std::int64_t Pair __attribute__((vector_size(16)));
    const int nf = f1 - f0;
    for (std::int64_t r = r0; r < r1; ++r) {
      const std::int64_t i = Indexed ? rows[r] : r;
      if (Indexed && r + kPrefetchRows < r1) {  // the rows ahead are scattered: fetch them early
        const std::int64_t ia = rows[r + kPrefetchRows];
        __builtin_prefetch(q_.data() + 2 * ia);
        __builtin_prefetch(rbins_.data() + ia * F_ + f0);
        __builtin_prefetch(rbins_.data() + ia * F_ + f1 - 1);
      }
      Pair q;
      std::memcpy(&q, q_.data() + 2 * i, sizeof q);
      const std::uint8_t* bi = rbins_.data() + i * F_ + f0;
      for (int f = 0; f < nf; ++f) {
        std::int64_t* e = h + f * fstride + 2 * static_cast<std::int64_t>(bi[f]);
        Pair v;
        std::memcpy(&v, e, sizeof v);
        v += q;
        std::memcpy(e, &v, sizeof v);
      }
    }
  }

  // The sibling of each built leaf: parent (previous level) minus built child.
  void subtract_siblings(std::int64_t L) {
    const std::int64_t half = L / 2;
    const std::int64_t per_leaf = static_cast<std::int64_t>(F_) * Bp_ * Dh_ * 2;
    pfor(ctx_, half, half * per_leaf, [&](std::int64_t p) {
      const std::int64_t c = built_[p] ? p : p + half;
      const std::int64_t o = c == p ? p + half : p;
      const std::int64_t* par = prev_.data() + p * per_leaf;
      const std::int64_t* ch = cur_.data() + c * per_leaf;
      std::int64_t* out = cur_.data() + o * per_leaf;
      for (std::int64_t e = 0; e < per_leaf; ++e) out[e] = par[e] - ch[e];
    });
  }

  // Gain of splitting leaf `leaf` at each border b < nb[f] of feature f,
  // summed over outputs in output order: tl[b]. With tr (nan_mode Learned, a
  // feature with a NaN bin): also the gain with bin 0's NaN rows sent right,
  // tr[b] for 1 <= b < nb (tr[0] = -infinity: border 0 keeps NaN left).
  void leaf_gains(std::int64_t leaf, std::int64_t f, int nb, double* tl, double* tr) const {
    const double lambda = p_.l2_leaf_reg, mcw = p_.min_child_weight;
    std::fill(tl, tl + nb, 0.0);
    if (tr) std::fill(tr, tr + nb, 0.0);
    for (int k = 0; k < D_; ++k) {
      std::int64_t Gt = 0, Ht = 0;
      for (int b = 0; b <= nb; ++b) {
        Gt += cur_[hidx(leaf, f, b, k)];
        Ht += cur_[hidx(leaf, f, b, k) + 1];
      }
      const double G = gbdt::dequantize(Gt, isg_), H = gbdt::dequantize(Ht, ish_);
      const std::int64_t Gn = cur_[hidx(leaf, f, 0, k)], Hn = cur_[hidx(leaf, f, 0, k) + 1];  // the NaN bin (tr)
      std::int64_t GL = 0, HL = 0;
      double gain = 0.0, gain_r = 0.0;
      for (int b = 0; b < nb; ++b) {
        const std::int64_t dg = cur_[hidx(leaf, f, b, k)], dh = cur_[hidx(leaf, f, b, k) + 1];
        // An empty bin leaves the prefix, hence the gain, unchanged: reuse it
        // (exact). b = 1 is the first border with a NaN-right gain: computed.
        if (b <= 1 || dg != 0 || dh != 0) {
          GL += dg;
          HL += dh;
          gain = gbdt::prefix_gain(GL, HL, Gt, Ht, G, H, isg_, ish_, lambda, mcw);
          if (tr && b > 0) gain_r = gbdt::prefix_gain(GL - Gn, HL - Hn, Gt, Ht, G, H, isg_, ish_, lambda, mcw);
        }
        tl[b] = num::add(tl[b], gain);
        if (tr) tr[b] = num::add(tr[b], gain_r);
      }
    }
    if (Dh_ > D_) {  // min_data_in_leaf: candidates leaving a child too few rows score -infinity
      const double ninf = -gbdt::double_of(0x7ff0000000000000ULL);
      std::int64_t Ct = 0;
      for (int b = 0; b <= nb; ++b) Ct += cur_[hidx(leaf, f, b, D_)];
      const std::int64_t Cn = cur_[hidx(leaf, f, 0, D_)];
      std::int64_t CL = 0;
      for (int b = 0; b < nb; ++b) {
        CL += cur_[hidx(leaf, f, b, D_)];
        if (!gbdt::counts_allow(CL, Ct, p_.min_data_in_leaf)) tl[b] = ninf;
        if (tr && !gbdt::counts_allow(CL - Cn, Ct, p_.min_data_in_leaf)) tr[b] = ninf;
      }
    }
    if (tr) tr[0] = -gbdt::double_of(0x7ff0000000000000ULL);
  }

  // Score of every candidate (f, border b): sum over leaves (in leaf order)
  // of the leaf's gain summed over outputs (in output order); the best by
  // gbdt::better_candidate.
  void best_split(std::int64_t L, std::int32_t* bf, std::int32_t* bb, double* bg) {
    std::vector<double> score(static_cast<std::size_t>(F_) * Bp_, 0.0);
    pfor(ctx_, F_, L * F_ * Bp_ * D_ * 8, [&](std::int64_t f) {
      const int nb = nb_[f];
      if (nb == 0) return;
      double* sc = score.data() + f * Bp_;
      std::vector<double> tl(static_cast<std::size_t>(nb));
      for (std::int64_t leaf = 0; leaf < L; ++leaf) {
        leaf_gains(leaf, f, nb, tl.data(), nullptr);
        for (int b = 0; b < nb; ++b) sc[b] = num::add(sc[b], tl[b]);
      }
    });
    double best = 0.0;
    std::int64_t bi = -1;
    for (int f = 0; f < F_; ++f)
      for (int b = 0; b < nb_[f]; ++b) {
        const std::int64_t idx = static_cast<std::int64_t>(f) * Bp_ + b;
        if (bi < 0 || gbdt::better_candidate(score[idx], idx, best, bi)) {
          best = score[idx];
          bi = idx;
        }
      }
    *bf = static_cast<std::int32_t>(bi / Bp_);
    *bb = static_cast<std::int32_t>(bi % Bp_);
    *bg = best;
  }

  // Depthwise: each of the L leaves' own best candidate by its own gain
  // (gbdt::better_candidate over f * Bp + b; under nan_mode Learned a
  // candidate's gain is the better of its NaN-left and NaN-right gains, see
  // gbdt::nan_right_wins), kept when gbdt::node_splits, else (-1, -1, 0):
  // the leaf does not split. bb holds split codes (gbdt::kNanRight).
  void best_splits(std::int64_t L, std::int32_t* bf, std::int32_t* bb, double* bg) {
    std::vector<double> fscore(static_cast<std::size_t>(L * F_));
    std::vector<std::int64_t> fidx(static_cast<std::size_t>(L * F_), -1);
    std::vector<std::uint8_t> fright(static_cast<std::size_t>(L * F_), 0);
    pfor(ctx_, F_, L * F_ * Bp_ * D_ * 8, [&](std::int64_t f) {
      const int nb = nb_[f];
      if (nb == 0) return;
      const bool learn = !nan_bin_.empty() && nan_bin_[f];
      std::vector<double> tl(static_cast<std::size_t>(nb)), tr(learn ? static_cast<std::size_t>(nb) : 0);
      for (std::int64_t leaf = 0; leaf < L; ++leaf) {
        leaf_gains(leaf, f, nb, tl.data(), learn ? tr.data() : nullptr);
        std::int64_t bi = -1;
        for (int b = 0; b < nb; ++b) {
          const std::int64_t idx = f * Bp_ + b;
          const bool right = learn && gbdt::nan_right_wins(tl[b], tr[b]);
          const double score = right ? tr[b] : tl[b];
          if (bi < 0 || gbdt::better_candidate(score, idx, fscore[leaf * F_ + f], bi)) {
            fscore[leaf * F_ + f] = score;
            fright[leaf * F_ + f] = right;
            bi = idx;
          }
        }
        fidx[leaf * F_ + f] = bi;
      }
    });
    for (std::int64_t leaf = 0; leaf < L; ++leaf) {
      double best = 0.0;
      std::int64_t bi = -1;
      bool right = false;
      for (std::int64_t f = 0; f < F_; ++f) {
        const std::int64_t idx = fidx[leaf * F_ + f];
        if (idx >= 0 && (bi < 0 || gbdt::better_candidate(fscore[leaf * F_ + f], idx, best, bi))) {
          best = fscore[leaf * F_ + f];
          right = fright[leaf * F_ + f];
          bi = idx;
        }
      }
      const bool split = bi >= 0 && gbdt::node_splits(best, p_.min_split_gain);
      bf[leaf] = split ? static_cast<std::int32_t>(bi / Bp_) : -1;
      bb[leaf] = split ? static_cast<std::int32_t>(bi % Bp_) | (right ? gbdt::kNanRight : 0) : -1;
      bg[leaf] = split ? best : 0.0;
    }
  }

  // Level d's split: sf[0], sb[0] for every leaf (SymmetricTree) or sf[p],
  // sb[p] for the leaf with prefix p (Depthwise; feature -1: no split).
  void update_leaves(int d, const std::int32_t* sf, const std::int32_t* sb, std::vector<std::int64_t>& counts,
                     bool want_counts) {
    const bool dw = gbdt_per_node(p_.grow_policy);
    const std::int64_t nb = ceil_div(n_, kRowBlock);
    const std::int64_t L2 = std::int64_t(2) << d;
    std::vector<std::int64_t>& part = blk_counts_;
    part.assign(want_counts ? static_cast<std::size_t>(nb * L2) : 0, 0);
    const std::int32_t f0 = sf[0], b0 = sb[0];  // the level's split (SymmetricTree), read once
    pfor(ctx_, nb, n_, [&](std::int64_t blk) {
      const std::int64_t r0 = blk * kRowBlock, r1 = std::min(n_, r0 + kRowBlock);
      std::int32_t* __restrict__ lf = leaf_.data();
      const int shift = d;  // locals, which the stores into leaf_ cannot change: the loop vectorizes
      if (!dw) {
        // One split for every row: a branch-free pass over the split feature's bins.
        if (f0 >= 0) {
          const std::uint8_t* __restrict__ col = bins_.data() + static_cast<std::int64_t>(f0) * n_;
          const std::int32_t code = b0;
          for (std::int64_t i = r0; i < r1; ++i)
            lf[i] += static_cast<std::int32_t>(gbdt::bin_right(col[i], code)) << shift;
        }
      } else {
        // Per node: the leaf's own split (feature -1: the row stays left),
        // without branches on the data (a right-or-left branch mispredicts
        // half the time); the row's bins side by side (rbins_).
        const std::uint8_t* rb = rbins_.data();
        const std::int64_t F = F_;
        for (std::int64_t i = r0; i < r1; ++i) {
          const std::int32_t leaf = lf[i];
          const std::int32_t f = sf[leaf];
          const int bin = rb[i * F + (f < 0 ? 0 : f)];
          const int right = static_cast<int>(f >= 0) & static_cast<int>(gbdt::bin_right(bin, sb[leaf]));
          lf[i] = leaf + (right << shift);
        }
      }
      if (want_counts) count_leaves(lf + r0, r1 - r0, L2, part.data() + blk * L2);
    });
    if (!want_counts) return;
    std::fill(counts.begin(), counts.begin() + L2, 0);
    for (std::int64_t blk = 0; blk < nb; ++blk)
      for (std::int64_t l = 0; l < L2; ++l) counts[l] += part[blk * L2 + l];
  }

  // Fixed-point gradient and hessian totals (tot[2 * (j * D + k)], + 1) of
  // the final leaves j from the last level's histograms, leaf p's split at
  // (sf[0], sb[0]) (SymmetricTree) or (sf[p], sb[p]) (per node; feature -1:
  // every row left, the totals from feature 0).
  void leaf_totals(int depth, const std::int32_t* sf, const std::int32_t* sb, bool dw,
                   std::vector<std::int64_t>& tot) {
    const std::int64_t L = std::int64_t(1) << (depth - 1);
    tot.assign(static_cast<std::size_t>(4 * L * D_), 0);
    for (std::int64_t j = 0; j < 2 * L; ++j) {
      const std::int64_t p = j % L;
      const bool right = j >= L;
      const std::int32_t f0 = sf[dw ? p : 0];
      const int f = f0 < 0 ? 0 : f0;
      const int b = f0 < 0 ? Bp_ : sb[dw ? p : 0];
      const int last = f0 < 0 ? Bp_ - 1 : B_.count[f];
      for (int k = 0; k < D_; ++k) {
        std::int64_t GL = 0, HL = 0, Gt = 0, Ht = 0;
        for (int bin = 0; bin <= last; ++bin) {
          const std::int64_t g = cur_[hidx(p, f, bin, k)], h = cur_[hidx(p, f, bin, k) + 1];
          Gt += g;
          Ht += h;
          if (!gbdt::bin_right(bin, b)) {
            GL += g;
            HL += h;
          }
        }
        tot[2 * (j * D_ + k)] = right ? Gt - GL : GL;
        tot[2 * (j * D_ + k) + 1] = right ? Ht - HL : HL;
      }
    }
  }

  // Lossguide: the cut tree (gbdt::lossguide_cut), each row moved to its leaf in it.
  void keep_best_first(int depth, std::vector<std::int32_t>& sf, std::vector<std::int32_t>& sb,
                       std::vector<double>& sg, std::vector<std::int64_t>& tot) {
    const std::vector<std::int64_t> map =
        gbdt::lossguide_cut(depth, p_.max_leaves, D_, sf.data(), sb.data(), sg.data(), tot);
    pfor(ctx_, ceil_div(n_, kRowBlock), n_, [&](std::int64_t blk) {
      const std::int64_t r1 = std::min(n_, (blk + 1) * kRowBlock);
      for (std::int64_t i = blk * kRowBlock; i < r1; ++i) leaf_[i] = static_cast<std::int32_t>(map[leaf_[i]]);
    });
  }

  // Values of the L leaves of the current level from their totals (feature
  // 0's histogram summed over its bins: every row of a leaf is in one of them).
  void total_values(std::int64_t L, std::vector<double>& values) {
    for (std::int64_t j = 0; j < L; ++j)
      for (int k = 0; k < D_; ++k) {
        std::int64_t G = 0, H = 0;
        for (int bin = 0; bin < Bp_; ++bin) {
          G += cur_[hidx(j, 0, bin, k)];
          H += cur_[hidx(j, 0, bin, k) + 1];
        }
        values[j * D_ + k] = gbdt::leaf_value(gbdt::dequantize(G, isg_), gbdt::dequantize(H, ish_), p_.l2_leaf_reg,
                                              p_.learning_rate);
      }
  }

  void apply_tree(const std::vector<double>& values) {
    pfor(ctx_, ceil_div(n_, kRowBlock), n_ * D_, [&](std::int64_t blk) {
      const std::int64_t r1 = std::min(n_, (blk + 1) * kRowBlock);
      for (std::int64_t i = blk * kRowBlock; i < r1; ++i)
        for (int k = 0; k < D_; ++k)
          approx_[i * D_ + k] = num::add(approx_[i * D_ + k], values[leaf_[i] * D_ + k]);
    });
  }

  void apply_tree_eval(int depth, const std::vector<std::int32_t>& sf, const std::vector<std::int32_t>& sb,
                       const std::vector<double>& values) {
    const bool dw = gbdt_per_node(p_.grow_policy);
    pfor(ctx_, ceil_div(m_, kRowBlock), m_ * (depth + D_), [&](std::int64_t blk) {
      const std::int64_t r1 = std::min(m_, (blk + 1) * kRowBlock);
      for (std::int64_t i = blk * kRowBlock; i < r1; ++i) {
        std::int64_t leaf = 0;
        for (int d = 0; d < depth; ++d) {
          const std::int64_t s = gbdt::split_slot(dw, d, leaf);
          if (sf[s] < 0) continue;
          leaf |= static_cast<std::int64_t>(gbdt::bin_right(ebins_[static_cast<std::int64_t>(sf[s]) * m_ + i], sb[s])) << d;
        }
        for (int k = 0; k < D_; ++k)
          eapprox_[i * D_ + k] = num::add(eapprox_[i * D_ + k], values[leaf * D_ + k]);
      }
    });
  }

  const Context& ctx_;
  GbdtParams p_;
  std::int64_t n_;
  int F_, D_;
  int Dh_;  // histogram channels per row: D_ outputs, plus the count channel under min_data_in_leaf > 1
  const double* y_;
  const double* w_;
  Borders B_;
  std::vector<std::uint8_t> bins_;
  int Bp_ = 1;
  int depth_ = 0;
  bool has_eval_ = false;
  std::int64_t m_ = 0;
  const double* ey_ = nullptr;
  const double* ew_ = nullptr;
  std::vector<std::uint8_t> ebins_;
  std::vector<double> eapprox_;
  std::vector<double> approx_, g_, h_;
  std::vector<std::int64_t> q_;  // fixed-point (g, h) pairs, Dh_ a row
  double isg_ = 1.0, ish_ = 1.0;
  std::vector<std::int32_t> leaf_;
  std::vector<std::uint8_t> built_;
  std::vector<std::uint8_t> rbins_;          // bins_ row-major: rbins_[i * F + f]
  std::vector<std::int32_t> order_;          // build_order: the built leaves' rows, leaf after leaf
  std::vector<std::int64_t> seg_;            // build_order: leaf l's rows at order_[seg_[l] .. seg_[l + 1])
  bool listed_ = false;                      // build_order: order_ lists the rows (else positions are rows)
  std::vector<std::int64_t> blk_counts_;     // update_leaves: rows per (row block, leaf) of the next level
  std::vector<int> nb_;  // borders per feature the current tree's splits may use
  std::vector<std::uint8_t> nan_bin_;  // nan_mode Learned: 1 where feature f has a NaN bin (bin 0); else empty
  std::vector<std::int64_t> prev_, cur_;
  std::vector<std::int32_t> tree_depth_;  // per grown tree
  std::vector<std::int32_t> split_feature_, split_bin_;
  std::vector<double> split_gain_, leaf_values_;
};

}  // namespace

namespace detail {

void gbdt_gradients_cpu(GbdtLoss loss, int D, double param, const double* approx, const double* y, const double* w,
                        std::int64_t n, double* g, double* h, double* maxg, double* maxh) {
  const gbdt::RowSampler rs;
  const GradientRows gr{loss, D, param, approx, y, &rs, w, g, h, 0, n};
  gradient_block(gr, use_fma_build(), *maxg, *maxh);
}

template <class T>
GbdtModel gbdt_fit_cpu(const Context& ctx, MatrixView<const T> X, const double* y, const double* weight,
                       const GbdtParams& params, const GbdtEvalSet<T>& eval, bool record_train_loss,
                       GbdtFitInfo* info, const GbdtCallback& callback) {
  TL_REQUIRE(X.on_host(), ValueError, "the CPU backend needs host arrays");
  CpuTrainer<T> tr(ctx, X, y, weight, params, eval);
  return gbdt::run_fit(tr, params, y, weight, X.rows, eval.y, eval.weight, eval.X.rows, record_train_loss,
                       ctx.n_threads(), info, callback);
}

template <class T>
GbdtModel gbdt_borders_cpu(const Context& ctx, MatrixView<const T> X, int border_count, GbdtNanMode nan_mode) {
  TL_REQUIRE(X.on_host(), ValueError, "the CPU backend needs host arrays");
  Borders B = compute_borders(ctx, X, border_count, nan_mode);
  GbdtModel m;
  gbdt::set_borders(m, B.F, B.padded, B.count);
  return m;
}

template <class T>
void gbdt_predict_cpu(const Context& ctx, const GbdtModel& model, MatrixView<const T> X, std::int64_t tree_begin,
                      std::int64_t tree_end, double* acc, GbdtOutput kind, MatrixView<float> out) {
  TL_REQUIRE(X.on_host() && (acc || out.on_host()), ValueError, "the CPU backend needs host arrays");
  std::vector<std::int64_t> so, lo;
  gbdt::tree_offsets(model, &so, &lo);
  const int D = model.n_outputs;
  const bool nan_max = model.nan_mode == GbdtNanMode::Max;
  const std::uint8_t* nan_right = model.split_nan_right.empty() ? nullptr : model.split_nan_right.data();
  const bool depthwise = gbdt_per_node(model.grow_policy);
  const std::int64_t n = X.rows;
  pfor(ctx, ceil_div(n, kRowBlock), n * (tree_end - tree_begin) * 4, [&](std::int64_t blk) {
    std::vector<double> a(static_cast<std::size_t>(D)), pr(static_cast<std::size_t>(D));
    const std::int64_t r1 = std::min(n, (blk + 1) * kRowBlock);
    for (std::int64_t i = blk * kRowBlock; i < r1; ++i) {
      for (int k = 0; k < D; ++k) a[k] = acc ? acc[i * D + k] : model.base_score[k];
      for (std::int64_t t = tree_begin; t < tree_end; ++t) {
        const int depth = model.tree_depth[t];
        std::int64_t leaf = 0;
        for (int d = 0; d < depth; ++d) {
          const std::int64_t s = so[t] + gbdt::split_slot(depthwise, d, leaf);
          const int f = model.split_feature[s];
          if (f < 0) continue;  // a Depthwise node that does not split: left
          const double x = static_cast<double>(X(i, f));
          leaf |= static_cast<std::int64_t>(gbdt::goes_right(x, model.split_border[s], gbdt::nan_goes_right(nan_right, s, nan_max))) << d;
        }
        const double* v = model.leaf_values.data() + lo[t] + leaf * D;
        for (int k = 0; k < D; ++k) a[k] = num::add(a[k], v[k]);
      }
      if (acc) {
        for (int k = 0; k < D; ++k) acc[i * D + k] = a[k];
      } else if (kind != GbdtOutput::Raw) {
        gbdt::link(model.loss, D, kind, a.data(), pr.data());
        for (int k = 0; k < D; ++k) out(i, k) = static_cast<float>(pr[k]);
      } else {
        for (int k = 0; k < D; ++k) out(i, k) = static_cast<float>(a[k]);
      }
    }
  });
}

#define TL_GBDT_INSTANTIATE(T)                                                                                    \
  template GbdtModel gbdt_fit_cpu<T>(const Context&, MatrixView<const T>, const double*, const double*,            \
                                     const GbdtParams&, const GbdtEvalSet<T>&, bool, GbdtFitInfo*,                 \
                                     const GbdtCallback&);                                                         \
  template GbdtModel gbdt_borders_cpu<T>(const Context&, MatrixView<const T>, int, GbdtNanMode);                  \
  template void gbdt_predict_cpu<T>(const Context&, const GbdtModel&, MatrixView<const T>, std::int64_t,          \
                                    std::int64_t, double*, GbdtOutput, MatrixView<float>);
TL_GBDT_INSTANTIATE(float)
TL_GBDT_INSTANTIATE(double)
#undef TL_GBDT_INSTANTIATE

}  // namespace detail
}  // namespace tl
