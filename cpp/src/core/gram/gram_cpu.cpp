// CPU backend of the canonical Gram product (order: twinlearn/core/gram.hpp).
//
// One parallel task per chunk. A task walks its rows in sub-blocks small
// enough to stay in the core's first-level cache: each sub-block's rows of
// Zc, widened to double, go into a panel (rows x Dp, zero-padded to Dp
// columns), and a register micro-kernel of mr x kNR outputs runs over the
// panel for every block of the upper triangle, carrying that block's
// accumulators from one sub-block to the next:
// acc[r][c] = fma(panel[i][j + r], panel[i][k + c], acc[r][c]) for the rows i
// in increasing order, so every output element is one fma chain over the
// chunk's rows whatever the sub-blocks, the blocking, the instruction set
// and the thread count. The vector lanes run across output columns, never
// across rows. The chunk partials of a batch are then merged by the
// canonical tree, one task per output row.
#include <algorithm>
#include <vector>

#include "core/gram/gram_common.hpp"
#include "core/cpu/cpu_clones.hpp"
#include "twinlearn/core/parallel.hpp"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__CUDACC__)
#define TL_GRAM_AVX2 1
#include <immintrin.h>
#else
#define TL_GRAM_AVX2 0
#endif

namespace tl::detail {
namespace {

constexpr std::int64_t kNR = 8;    // output columns per block
constexpr std::int64_t kPad = 24;  // a multiple of every kernel's mr and of kNR
constexpr std::int64_t kPanelBytes = 48 << 10;  // a sub-block's panel

// acc[r][c] (ldc apart) continues over rows: acc[r][c] = fma(a[i*lda + r], b[i*lda + c], acc[r][c]).
using Micro = void (*)(std::int64_t rows, const double* a, const double* b, std::int64_t lda, double* acc,
                       std::int64_t ldc);

template <int MR>
void micro_portable(std::int64_t rows, const double* a, const double* b, std::int64_t lda, double* acc,
                    std::int64_t ldc) {
  double c[MR][kNR];
  for (std::int64_t r = 0; r < MR; ++r)
    for (std::int64_t q = 0; q < kNR; ++q) c[r][q] = acc[r * ldc + q];
  for (std::int64_t i = 0; i < rows; ++i) {
    const double* ai = a + i * lda;
    const double* bi = b + i * lda;
    for (std::int64_t r = 0; r < MR; ++r)
      for (std::int64_t q = 0; q < kNR; ++q) c[r][q] = num::fma(ai[r], bi[q], c[r][q]);
  }
  for (std::int64_t r = 0; r < MR; ++r)
    for (std::int64_t q = 0; q < kNR; ++q) acc[r * ldc + q] = c[r][q];
}

#if TL_GRAM_AVX2
// The same chains with FMA instructions: each lane is one output element and
// _mm256_fmadd_pd / _mm512_fmadd_pd round once per lane, exactly as std::fma.
// AVX2: 6 x 8 outputs in 12 registers of 4 doubles.
__attribute__((target("avx2,fma"))) void micro_avx2(std::int64_t rows, const double* a, const double* b,
                                                     std::int64_t lda, double* acc, std::int64_t ldc) {
  constexpr int MR = 6;
  __m256d c[MR][2];
  for (int r = 0; r < MR; ++r) {
    c[r][0] = _mm256_loadu_pd(acc + r * ldc);
    c[r][1] = _mm256_loadu_pd(acc + r * ldc + 4);
  }
  for (std::int64_t i = 0; i < rows; ++i) {
    const double* ai = a + i * lda;
    const __m256d b0 = _mm256_loadu_pd(b + i * lda), b1 = _mm256_loadu_pd(b + i * lda + 4);
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
      const __m256d av = _mm256_set1_pd(ai[r]);
      c[r][0] = _mm256_fmadd_pd(av, b0, c[r][0]);
      c[r][1] = _mm256_fmadd_pd(av, b1, c[r][1]);
    }
  }
  for (int r = 0; r < MR; ++r) {
    _mm256_storeu_pd(acc + r * ldc, c[r][0]);
    _mm256_storeu_pd(acc + r * ldc + 4, c[r][1]);
  }
}

// AVX-512: 12 x 8 outputs in 12 registers of 8 doubles (of the shapes tried
// for D = 64 and 256, with 6 x 16, 8 x 16, 4 x 24 and 8 x 8, the fastest
// or level with the fastest).
__attribute__((target("avx512f"))) void micro_avx512(std::int64_t rows, const double* a, const double* b,
                                                     std::int64_t lda, double* acc, std::int64_t ldc) {
  constexpr int MR = 12;
  __m512d c[MR];
  for (int r = 0; r < MR; ++r) c[r] = _mm512_loadu_pd(acc + r * ldc);
  for (std::int64_t i = 0; i < rows; ++i) {
    const double* ai = a + i * lda;
    const __m512d bv = _mm512_loadu_pd(b + i * lda);
#pragma GCC unroll 12
    for (int r = 0; r < MR; ++r) c[r] = _mm512_fmadd_pd(_mm512_set1_pd(ai[r]), bv, c[r]);
  }
  for (int r = 0; r < MR; ++r) _mm512_storeu_pd(acc + r * ldc, c[r]);
}
#endif

// The blocking of a D x D product, the same for every chunk of a call: the
// micro-kernel for this CPU (core/cpu/cpu_clones.hpp; all give the same
// bits), the panel's padded width and sub-block rows, and the blocks (j, k)
// of the upper triangle.
struct Blocking {
  Micro micro = &micro_portable<6>;
  std::int64_t mr = 6;  // output rows per block
  std::int64_t Dp = 0, sub = 0;
  std::vector<std::int64_t> bj, bk;

  explicit Blocking(std::int64_t D) {
#if TL_GRAM_AVX2
    switch (cpu_isa()) {
      case CpuIsa::Avx512: micro = &micro_avx512, mr = 12; break;
      case CpuIsa::Avx2: micro = &micro_avx2, mr = 6; break;
      case CpuIsa::Baseline: break;
    }
#endif
    Dp = (D + kPad - 1) / kPad * kPad;
    sub = std::clamp<std::int64_t>(kPanelBytes / (Dp * 8), 16, 256);
    for (std::int64_t j = 0; j < D; j += mr)
      for (std::int64_t k = j / kNR * kNR; k < D; k += kNR) bj.push_back(j), bk.push_back(k);
  }
};

// row[c] = gram_detail::centred(x[c * stride], off, c, s, weighted) for c < n,
// with the steps chosen outside the loop so that it vectorizes.
template <class T>
TL_CPU_CLONES void widen_row(double* __restrict row, const T* __restrict x, std::int64_t stride, std::int64_t n,
                             const T* __restrict off, T s, bool weighted) {
  if (stride != 1) {
    for (std::int64_t c = 0; c < n; ++c) row[c] = gram_detail::centred(x[c * stride], off, c, s, weighted);
  } else if (off && weighted) {
    for (std::int64_t c = 0; c < n; ++c) row[c] = gram_detail::centred_by(x[c], true, off[c], s, true);
  } else if (off) {
    for (std::int64_t c = 0; c < n; ++c) row[c] = gram_detail::centred_by(x[c], true, off[c], s, false);
  } else if (weighted) {
    for (std::int64_t c = 0; c < n; ++c) row[c] = gram_detail::centred_by(x[c], false, T(0), s, true);
  } else {
    for (std::int64_t c = 0; c < n; ++c) row[c] = x[c];
  }
}

// The partial of rows [r0, r1): P (D x D, upper triangle written) of
// Zcᵀ Zc over those rows, one fma chain in double per element in row order.
template <class T>
void chunk_partial(MatrixView<const T> X, MatrixView<const T> Y, VectorView<const T> w, const T* offset,
                   std::int64_t r0, std::int64_t r1, const Blocking& B, double* P) {
  const std::int64_t d = X.cols, D = X.cols + Y.cols, mr = B.mr, Dp = B.Dp, sub = B.sub;
  const std::vector<std::int64_t>& bj = B.bj;
  const std::vector<std::int64_t>& bk = B.bk;
  const std::int64_t nblocks = static_cast<std::int64_t>(bj.size()), bsize = mr * kNR;
  std::vector<double> acc(static_cast<std::size_t>(nblocks * bsize), 0.0);
  std::vector<double> panel(static_cast<std::size_t>(sub * Dp), 0.0);
  const bool weighted = w.data != nullptr;
  for (std::int64_t s0 = r0; s0 < r1; s0 += sub) {
    const std::int64_t s1 = std::min(r1, s0 + sub);
    for (std::int64_t i = s0; i < s1; ++i) {
      double* row = panel.data() + (i - s0) * Dp;
      const T s = weighted ? num::sqrt(w[i]) : T(1);
      widen_row(row, &X(i, 0), X.col_stride, d, offset, s, weighted);
      if (D > d) widen_row(row + d, &Y(i, 0), Y.col_stride, D - d, offset ? offset + d : nullptr, s, weighted);
    }
    for (std::int64_t q = 0; q < nblocks; ++q)
      B.micro(s1 - s0, panel.data() + bj[q], panel.data() + bk[q], Dp, acc.data() + q * bsize, kNR);
  }
  for (std::int64_t q = 0; q < nblocks; ++q) {
    const std::int64_t j = bj[q], k = bk[q];
    for (std::int64_t r = 0; r < mr && j + r < D; ++r)
      for (std::int64_t c = std::max<std::int64_t>(0, j + r - k); c < kNR && k + c < D; ++c)
        P[(j + r) * D + k + c] = acc[q * bsize + r * kNR + c];
  }
}

}  // namespace

template <class T>
NumericMode gram_cpu(const Context& ctx, MatrixView<const T> X, MatrixView<const T> Y, VectorView<const T> w,
                     const T* offset, std::int64_t chunk, std::vector<double>& batches) {
  TL_REQUIRE(X.on_host() && (Y.cols == 0 || Y.on_host()) && (!w.data || w.on_host()), ValueError,
             "the CPU backend needs host arrays");
  const std::int64_t n = X.rows, D = X.cols + Y.cols, DD = D * D;
  const std::int64_t nchunks = (n + chunk - 1) / chunk;
  const std::int64_t per_batch = gram_detail::batch_chunks(D, sizeof(double), std::int64_t(64) << 20);
  const std::int64_t nbatches = (nchunks + per_batch - 1) / per_batch;
  batches.assign(static_cast<std::size_t>(nbatches * DD), 0.0);
  std::vector<double> partials(static_cast<std::size_t>(std::min(per_batch, nchunks) * DD));
  const Blocking blocking(D);
  for (std::int64_t b = 0; b < nbatches; ++b) {
    const std::int64_t c0 = b * per_batch, nc = std::min(per_batch, nchunks - c0);
    parallel_for(ctx, nc, [&](std::int64_t c) {
      const std::int64_t r0 = (c0 + c) * chunk, r1 = std::min(n, r0 + chunk);
      chunk_partial(X, Y, w, offset, r0, r1, blocking, partials.data() + c * DD);
    });
    double* out = batches.data() + b * DD;
    parallel_for(ctx, D, [&](std::int64_t j) {
      for (std::int64_t k = j; k < D; ++k) {
        gram_detail::TreeStack st;
        for (std::int64_t c = 0; c < nc; ++c) st.push(partials[c * DD + j * D + k]);
        out[j * D + k] = st.result();
      }
    });
  }
  return NumericMode::Identical;
}

template NumericMode gram_cpu<float>(const Context&, MatrixView<const float>, MatrixView<const float>,
                                     VectorView<const float>, const float*, std::int64_t, std::vector<double>&);
template NumericMode gram_cpu<double>(const Context&, MatrixView<const double>, MatrixView<const double>,
                                      VectorView<const double>, const double*, std::int64_t, std::vector<double>&);

}  // namespace tl::detail
