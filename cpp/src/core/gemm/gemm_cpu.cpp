// CPU backend of the canonical GEMM.
//
// C is cut into macro tiles of kMC x kNC, one parallel task each. A task
// keeps its tile in a local buffer, walks k in blocks of kKC, packs the B
// block into panels of kNR columns (kKC x kNR contiguous, zero-padded past
// n), and runs a kMR x kNR register micro-kernel per panel: for each p in
// increasing order, acc[r][c] = fma(A[i+r, p], Bpanel[p][c], acc[r][c]). The
// accumulators carry from one k block to the next through the tile buffer in
// T, so every C element is one fma chain over p = 0..k-1, whatever the
// blocking and the thread count. The vector lanes run across c (different C
// elements), never across p.
#include <algorithm>
#include <vector>

#include "core/gemm/gemm_common.hpp"
#include "core/cpu/cpu_clones.hpp"
#include "twinlearn/core/parallel.hpp"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__CUDACC__)
#define TL_GEMM_AVX2 1
#include <immintrin.h>
#else
#define TL_GEMM_AVX2 0
#endif

namespace tl::detail {
namespace {

template <class T>
struct Blocking;
// kNR spans two AVX2 registers; kMR x kNR accumulators plus a B row and an
// A broadcast fit the 16 vector registers.
template <>
struct Blocking<float> {
  static constexpr std::int64_t kMR = 6, kNR = 16, kMC = 96, kNC = 256, kKC = 256;
};
template <>
struct Blocking<double> {
  static constexpr std::int64_t kMR = 6, kNR = 8, kMC = 96, kNC = 128, kKC = 256;
};

// acc (kMR x kNR, row stride ldc) continues its chains over kc steps:
// acc[r][c] = fma(a[r][p], bp[p * kNR + c], acc[r][c]) for p = 0..kc-1.
// a[r] points at A[i+r, p0]; consecutive p are acs elements apart.
// Portable version: std::fma per element (a libm call on baseline x86-64).
template <class T>
void micro_kernel_portable(std::int64_t kc, const T* const* a, std::int64_t acs, const T* bp, T* c,
                           std::int64_t ldc) {
  constexpr std::int64_t MR = Blocking<T>::kMR, NR = Blocking<T>::kNR;
  T acc[MR][NR];
  for (std::int64_t r = 0; r < MR; ++r)
    for (std::int64_t j = 0; j < NR; ++j) acc[r][j] = c[r * ldc + j];
  for (std::int64_t p = 0; p < kc; ++p) {
    const T* b = bp + p * NR;
    for (std::int64_t r = 0; r < MR; ++r) {
      const T av = a[r][p * acs];
      for (std::int64_t j = 0; j < NR; ++j) acc[r][j] = num::fma(av, b[j], acc[r][j]);
    }
  }
  for (std::int64_t r = 0; r < MR; ++r)
    for (std::int64_t j = 0; j < NR; ++j) c[r * ldc + j] = acc[r][j];
}

#if TL_GEMM_AVX2
// The same chains with AVX2 FMA instructions: each vector lane is one C
// element, and _mm256_fmadd_p[sd] rounds once per lane, as std::fma does.
// 12 accumulator registers (6 rows x 2 vectors), 2 for the B row, 1 broadcast.
#define TL_AVX2_FN __attribute__((target("avx2,fma"), always_inline)) static inline
template <class T>
struct Avx;
template <>
struct Avx<float> {
  using V = __m256;
  TL_AVX2_FN V load(const float* p) { return _mm256_loadu_ps(p); }
  TL_AVX2_FN void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  TL_AVX2_FN V bcast(float x) { return _mm256_set1_ps(x); }
  TL_AVX2_FN V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static constexpr int kW = 8;
};
template <>
struct Avx<double> {
  using V = __m256d;
  TL_AVX2_FN V load(const double* p) { return _mm256_loadu_pd(p); }
  TL_AVX2_FN void store(double* p, V v) { _mm256_storeu_pd(p, v); }
  TL_AVX2_FN V bcast(double x) { return _mm256_set1_pd(x); }
  TL_AVX2_FN V fma(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
  static constexpr int kW = 4;
};

template <class T>
__attribute__((target("avx2,fma"))) void micro_kernel_avx2(std::int64_t kc, const T* const* a, std::int64_t acs,
                                                            const T* bp, T* c, std::int64_t ldc) {
  using X = Avx<T>;
  using V = typename X::V;
  constexpr int W = X::kW;
  static_assert(Blocking<T>::kNR == 2 * W && Blocking<T>::kMR == 6, "6 x 2-vector register tile");
  V c00 = X::load(c + 0 * ldc), c01 = X::load(c + 0 * ldc + W);
  V c10 = X::load(c + 1 * ldc), c11 = X::load(c + 1 * ldc + W);
  V c20 = X::load(c + 2 * ldc), c21 = X::load(c + 2 * ldc + W);
  V c30 = X::load(c + 3 * ldc), c31 = X::load(c + 3 * ldc + W);
  V c40 = X::load(c + 4 * ldc), c41 = X::load(c + 4 * ldc + W);
  V c50 = X::load(c + 5 * ldc), c51 = X::load(c + 5 * ldc + W);
  const T *a0 = a[0], *a1 = a[1], *a2 = a[2], *a3 = a[3], *a4 = a[4], *a5 = a[5];
  for (std::int64_t p = 0; p < kc; ++p) {
    const V b0 = X::load(bp + p * 2 * W), b1 = X::load(bp + p * 2 * W + W);
    const std::int64_t o = p * acs;
    V av = X::bcast(a0[o]);
    c00 = X::fma(av, b0, c00);
    c01 = X::fma(av, b1, c01);
    av = X::bcast(a1[o]);
    c10 = X::fma(av, b0, c10);
    c11 = X::fma(av, b1, c11);
    av = X::bcast(a2[o]);
    c20 = X::fma(av, b0, c20);
    c21 = X::fma(av, b1, c21);
    av = X::bcast(a3[o]);
    c30 = X::fma(av, b0, c30);
    c31 = X::fma(av, b1, c31);
    av = X::bcast(a4[o]);
    c40 = X::fma(av, b0, c40);
    c41 = X::fma(av, b1, c41);
    av = X::bcast(a5[o]);
    c50 = X::fma(av, b0, c50);
    c51 = X::fma(av, b1, c51);
  }
  X::store(c + 0 * ldc, c00), X::store(c + 0 * ldc + W, c01);
  X::store(c + 1 * ldc, c10), X::store(c + 1 * ldc + W, c11);
  X::store(c + 2 * ldc, c20), X::store(c + 2 * ldc + W, c21);
  X::store(c + 3 * ldc, c30), X::store(c + 3 * ldc + W, c31);
  X::store(c + 4 * ldc, c40), X::store(c + 4 * ldc + W, c41);
  X::store(c + 5 * ldc, c50), X::store(c + 5 * ldc + W, c51);
}

#undef TL_AVX2_FN

#endif

template <class T>
using MicroKernel = void (*)(std::int64_t, const T* const*, std::int64_t, const T*, T*, std::int64_t);

// The micro-kernel for this CPU: chosen at run time, so the binary runs on
// any x86-64 and uses FMA instructions where they exist. Both compute the
// same bits.
template <class T>
MicroKernel<T> select_micro_kernel() {
#if TL_GEMM_AVX2
  if (cpu_has_avx2_fma()) return &micro_kernel_avx2<T>;
#endif
  return &micro_kernel_portable<T>;
}

// Packs B[p0..p0+kc, j0..j0+nc) (as op(B)) into panels of NR columns:
// panel q holds op(B)[p0+p, j0 + q*NR + c] at out[q * kc * NR + p * NR + c],
// zero past column n.
template <class T>
void pack_b(MatrixView<const T> B, bool transpose_b, std::int64_t n, std::int64_t p0, std::int64_t kc,
            std::int64_t j0, std::int64_t nc, T* out) {
  constexpr std::int64_t NR = Blocking<T>::kNR;
  const std::int64_t npanels = (nc + NR - 1) / NR;
  for (std::int64_t q = 0; q < npanels; ++q) {
    T* panel = out + q * kc * NR;
    const std::int64_t jb = j0 + q * NR;
    const std::int64_t w = std::min(NR, n - jb);
    if (!transpose_b) {
      for (std::int64_t p = 0; p < kc; ++p) {
        const T* row = B.data + (p0 + p) * B.row_stride + jb * B.col_stride;
        for (std::int64_t c = 0; c < w; ++c) panel[p * NR + c] = row[c * B.col_stride];
        for (std::int64_t c = w; c < NR; ++c) panel[p * NR + c] = T(0);
      }
    } else {
      for (std::int64_t c = 0; c < NR; ++c) {
        if (c < w) {
          const T* row = B.data + (jb + c) * B.row_stride + p0 * B.col_stride;
          for (std::int64_t p = 0; p < kc; ++p) panel[p * NR + c] = row[p * B.col_stride];
        } else {
          for (std::int64_t p = 0; p < kc; ++p) panel[p * NR + c] = T(0);
        }
      }
    }
  }
}

}  // namespace

template <class T>
void gemm_cpu(const Context& ctx, MatrixView<const T> A, MatrixView<const T> B, bool transpose_b, MatrixView<T> C) {
  using Bk = Blocking<T>;
  constexpr std::int64_t MR = Bk::kMR, NR = Bk::kNR, MC = Bk::kMC, NC = Bk::kNC, KC = Bk::kKC;
  const std::int64_t m = A.rows, k = A.cols, n = C.cols;
  const std::int64_t mt = (m + MC - 1) / MC, nt = (n + NC - 1) / NC;
  const MicroKernel<T> micro_kernel = select_micro_kernel<T>();
  parallel_for(ctx, mt * nt, [&](std::int64_t task) {
    const std::int64_t i0 = (task / nt) * MC, j0 = (task % nt) * NC;
    const std::int64_t mc = std::min(MC, m - i0), nc = std::min(NC, n - j0);
    const std::int64_t mc_pad = (mc + MR - 1) / MR * MR, nc_pad = (nc + NR - 1) / NR * NR;
    // The tile's chains, +0.0 at p = 0; padded rows and columns are computed
    // and dropped.
    std::vector<T> tile(static_cast<std::size_t>(mc_pad * nc_pad), T(0));
    std::vector<T> packed(static_cast<std::size_t>(std::min(KC, std::max<std::int64_t>(k, 1)) * nc_pad));
    for (std::int64_t p0 = 0; p0 < k; p0 += KC) {
      const std::int64_t kc = std::min(KC, k - p0);
      pack_b(B, transpose_b, n, p0, kc, j0, nc, packed.data());
      for (std::int64_t ir = 0; ir < mc_pad; ir += MR) {
        const T* a[MR];
        for (std::int64_t r = 0; r < MR; ++r) {
          const std::int64_t i = std::min(i0 + ir + r, m - 1);  // padded rows repeat the last row
          a[r] = A.data + i * A.row_stride + p0 * A.col_stride;
        }
        for (std::int64_t jr = 0; jr < nc_pad; jr += NR)
          micro_kernel(kc, a, A.col_stride, packed.data() + jr * kc, tile.data() + ir * nc_pad + jr, nc_pad);
      }
    }
    for (std::int64_t r = 0; r < mc; ++r)
      for (std::int64_t c = 0; c < nc; ++c) C(i0 + r, j0 + c) = gemm_detail::canonical(tile[r * nc_pad + c]);
  });
}

template void gemm_cpu<float>(const Context&, MatrixView<const float>, MatrixView<const float>, bool,
                              MatrixView<float>);
template void gemm_cpu<double>(const Context&, MatrixView<const double>, MatrixView<const double>, bool,
                               MatrixView<double>);

}  // namespace tl::detail
