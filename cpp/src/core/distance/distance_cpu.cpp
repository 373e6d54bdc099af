// CPU building blocks of the distance kernels (distance_cpu.hpp): the block
// kernels of each metric family, the row loops, the ranking keys and the
// packing of the right-hand rows.
#include "core/distance/distance_cpu.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/cpu/float_bits.hpp"
#include "core/cpu/cpu_clones.hpp"
#include "twinlearn/core/parallel.hpp"

namespace tl::detail {
namespace {

using dist::Family;

// R left-hand rows against JB panel columns, the R x JB accumulators held
// in registers over all d features (each one chain over f = 0, 1, ... from
// +0.0, as everywhere), then stored to acc.
template <class T, Family F, int R, int JB>
inline __attribute__((always_inline)) void accumulate_tile(const T* __restrict const* xr,
                                                           const T* __restrict panel, std::int64_t NB,
                                                           std::int64_t j0, std::int64_t d, T p,
                                                           T* __restrict acc) {
  using S = dist::Step<T, F>;
  T a[R][JB];
#pragma GCC unroll 8
  for (int u = 0; u < R; ++u)
#pragma GCC unroll 32
    for (int j = 0; j < JB; ++j) a[u][j] = T(0);
  for (std::int64_t f = 0; f < d; ++f) {
    const T* __restrict y = panel + f * NB + j0;
    T yv[JB];
#pragma GCC unroll 32
    for (int j = 0; j < JB; ++j) yv[j] = y[j];
#pragma GCC unroll 8
    for (int u = 0; u < R; ++u) {
      const T v = xr[u][f];
#pragma GCC unroll 32
      for (int j = 0; j < JB; ++j) a[u][j] = S::apply(v, yv[j], a[u][j], p);
    }
  }
#pragma GCC unroll 8
  for (int u = 0; u < R; ++u)
#pragma GCC unroll 32
    for (int j = 0; j < JB; ++j) acc[u * NB + j0 + j] = a[u][j];
}

// R left-hand rows against the whole panel: tiles of JB columns, then of
// JB / 2 (panel widths are multiples of 8), then single columns.
template <class T, Family F, int R, int JB>
inline __attribute__((always_inline)) void accumulate_rows(const T* __restrict x, std::int64_t ldx,
                                                           const T* __restrict panel, std::int64_t NB,
                                                           std::int64_t d, T p, T* __restrict acc) {
  const T* xr[R];
  for (int u = 0; u < R; ++u) xr[u] = x + u * ldx;
  std::int64_t j0 = 0;
  for (; j0 + JB <= NB; j0 += JB) accumulate_tile<T, F, R, JB>(xr, panel, NB, j0, d, p, acc);
  for (; j0 + JB / 2 <= NB; j0 += JB / 2) accumulate_tile<T, F, R, JB / 2>(xr, panel, NB, j0, d, p, acc);
  for (; j0 < NB; ++j0) accumulate_tile<T, F, R, 1>(xr, panel, NB, j0, d, p, acc);
}

// The rows' accumulators against a packed panel (d x NB): R rows at a time,
// one row for the rest.
template <class T, Family F, int R, int JB>
inline __attribute__((always_inline)) void accumulate_block_body(const T* __restrict x, std::int64_t ldx,
                                                                 std::int64_t nr, const T* __restrict panel,
                                                                 std::int64_t NB, std::int64_t d, T p,
                                                                 T* __restrict acc) {
  std::int64_t r = 0;
  for (; r + R <= nr; r += R) accumulate_rows<T, F, R, JB>(x + r * ldx, ldx, panel, NB, d, p, acc + r * NB);
  for (; r < nr; ++r) accumulate_rows<T, F, 1, JB>(x + r * ldx, ldx, panel, NB, d, p, acc + r * NB);
}

// Baseline and AVX2 builds: 4 rows x two 256-bit registers' worth of columns.
template <class T, Family F>
TL_CPU_CLONES void accumulate_block_t(const T* __restrict x, std::int64_t ldx, std::int64_t nr,
                                      const T* __restrict panel, std::int64_t NB, std::int64_t d, T p,
                                      T* __restrict acc) {
  accumulate_block_body<T, F, 4, static_cast<int>(64 / sizeof(T))>(x, ldx, nr, panel, NB, d, p, acc);
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TL_DISTANCE_AVX512 1
// AVX-512 build: 8 rows x two 512-bit registers' worth of columns (16
// accumulator registers; for float32 dot products on a 32-row block against
// 64 columns, 143 GFLOP/s per core against 81 for the AVX2 build and 72 for
// the AVX2 shape compiled for AVX-512).
template <class T, Family F>
__attribute__((target("arch=x86-64-v4", "prefer-vector-width=512"))) void accumulate_block_avx512(
    const T* __restrict x, std::int64_t ldx, std::int64_t nr, const T* __restrict panel, std::int64_t NB,
    std::int64_t d, T p, T* __restrict acc) {
  accumulate_block_body<T, F, 8, static_cast<int>(128 / sizeof(T))>(x, ldx, nr, panel, NB, d, p, acc);
}
#else
#define TL_DISTANCE_AVX512 0
#endif

template <class T, Family F>
BlockKernel<T> block_kernel_for() {
#if TL_DISTANCE_AVX512
  if (cpu_isa() == CpuIsa::Avx512) return &accumulate_block_avx512<T, F>;
#endif
  return &accumulate_block_t<T, F>;
}

}  // namespace

template <class T>
BlockKernel<T> block_kernel(dist::Family fam) {
  switch (fam) {
    case Family::Dot: return block_kernel_for<T, Family::Dot>();
    case Family::L2: return block_kernel_for<T, Family::L2>();
    case Family::L1: return block_kernel_for<T, Family::L1>();
    case Family::Linf: return block_kernel_for<T, Family::Linf>();
    case Family::Lp: return block_kernel_for<T, Family::Lp>();
  }
  return nullptr;
}

template <class T>
TL_CPU_CLONES void sqnorms_rows(const T* x, std::int64_t ldx, std::int64_t n, std::int64_t d, T* out) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = dist::sqnorm(x + i * ldx, d);
}
template <class T>
TL_CPU_CLONES void dot_rows(const T* x, std::int64_t ldx, std::int64_t n, std::int64_t d, const T* c, T* out) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = dist::accumulate<T, Family::Dot>(x + i * ldx, c, d, T(0));
}
template <class T>
TL_CPU_CLONES void sqdiff_rows(const T* x, std::int64_t ldx, std::int64_t n, std::int64_t d,
                                    const std::int32_t* labels, const T* centers, T* out) {
  for (std::int64_t i = 0; i < n; ++i)
    out[i] = dist::accumulate<T, Family::L2>(x + i * ldx, centers + static_cast<std::int64_t>(labels[i]) * d, d, T(0));
}

namespace {
// rank_key of a value (>= +0, -0 or NaN) by its bits, with masks (so the
// minimum over keys vectorizes): NaN the largest key, ±0 zero (the
// magnitude), other values their bits.
template <class T>
RankKey<T> key_of_bits(typename FloatBits<T>::U b) {
  using B = FloatBits<T>;
  using U = typename B::U;
  const U nan = U(0) - B::is_nan(b);
  return static_cast<RankKey<T>>((nan & static_cast<U>(kNanRankKey<T>)) | (~nan & (b & B::MAGNITUDE)));
}
}  // namespace

template <class T>
TL_CPU_CLONES RankKey<T> sq_distances_and_keys(T xn, const T* __restrict yn, const T* __restrict dot,
                                               std::int64_t nc, T* __restrict v, RankKey<T>* __restrict key) {
  using B = FloatBits<T>;
  using U = typename B::U;
  RankKey<T> kmin = kNanRankKey<T>;
  for (std::int64_t j = 0; j < nc; ++j) {
    // s = (xn + yn) - 2 dot, then s < 0 ? +0 : s (sq_from_dot): a negative
    // non-NaN s other than -0 becomes +0.
    const T s = num::sub(num::add(xn, yn[j]), num::mul(T(2), dot[j]));
    const U b = B::bits(s), mag = b & B::MAGNITUDE;
    const bool negative = (b & B::SIGN) != 0 && mag <= B::INF && mag != 0;
    const U vb = b & (U(0) - U(!negative));
    v[j] = B::from(vb);
    const RankKey<T> kj = key_of_bits<T>(vb);
    key[j] = kj;
    kmin = kj < kmin ? kj : kmin;
  }
  return kmin;
}

template <class T>
TL_CPU_CLONES RankKey<T> rank_keys(const T* __restrict v, std::int64_t n, RankKey<T>* __restrict key) {
  RankKey<T> kmin = kNanRankKey<T>;
  for (std::int64_t j = 0; j < n; ++j) {
    const RankKey<T> kj = key_of_bits<T>(FloatBits<T>::bits(v[j]));
    key[j] = kj;
    kmin = kj < kmin ? kj : kmin;
  }
  return kmin;
}

template <class T>
TL_CPU_CLONES std::int64_t first_key(const RankKey<T>* __restrict key, std::int64_t n, RankKey<T> k) {
  using K = RankKey<T>;  // positions in the keys' width, so the lanes match
  K first = static_cast<K>(n);
  for (K j = 0; j < static_cast<K>(n); ++j) {
    const K at = key[j] == k ? j : static_cast<K>(n);
    first = at < first ? at : first;
  }
  return first;
}

template <class T>
void row_sqnorms_cpu(const Context& ctx, MatrixView<const T> X, T* out) {
  check_host_rows(X, "X");
  const std::int64_t nb = (X.rows + 1023) / 1024;
  parallel_for(ctx, nb, [&](std::int64_t b) {
    const std::int64_t r0 = b * 1024, r1 = std::min(X.rows, (b + 1) * 1024);
    sqnorms_rows(X.data + r0 * X.row_stride, X.row_stride, r1 - r0, X.cols, out + r0);
  });
}

template <class T>
PackedPanels<T> pack_panels(const Context& ctx, MatrixView<const T> Y, bool with_norms) {
  check_host_rows(Y, "Y");
  PackedPanels<T> P;
  P.n = Y.rows;
  P.d = Y.cols;
  P.width = std::min(kPanel, std::max<std::int64_t>(8, (Y.rows + 7) / 8 * 8));
  P.npanels = (Y.rows + P.width - 1) / P.width;
  P.data.assign(static_cast<std::size_t>(P.npanels * P.d * P.width), T(0));
  parallel_for(ctx, P.npanels, [&](std::int64_t q) {
    T* out = P.data.data() + q * P.d * P.width;
    const std::int64_t rows = P.rows_in(q);
    for (std::int64_t j = 0; j < rows; ++j) {
      const T* row = Y.data + (q * P.width + j) * Y.row_stride;
      for (std::int64_t f = 0; f < P.d; ++f) out[f * P.width + j] = row[f];
    }
  });
  if (with_norms) {
    P.norms.resize(static_cast<std::size_t>(P.n));
    row_sqnorms_cpu(ctx, Y, P.norms.data());
  }
  return P;
}

#define TL_INST(T)                                                                                               \
  template BlockKernel<T> block_kernel<T>(dist::Family);                                                        \
  template RankKey<T> sq_distances_and_keys<T>(T, const T*, const T*, std::int64_t, T*, RankKey<T>*);         \
  template RankKey<T> rank_keys<T>(const T*, std::int64_t, RankKey<T>*);                                        \
  template std::int64_t first_key<T>(const RankKey<T>*, std::int64_t, RankKey<T>);                            \
  template void row_sqnorms_cpu<T>(const Context&, MatrixView<const T>, T*);                                     \
  template void sqnorms_rows<T>(const T*, std::int64_t, std::int64_t, std::int64_t, T*);                         \
  template void dot_rows<T>(const T*, std::int64_t, std::int64_t, std::int64_t, const T*, T*);                   \
  template void sqdiff_rows<T>(const T*, std::int64_t, std::int64_t, std::int64_t, const std::int32_t*, const T*, \
                               T*);                                                                              \
  template PackedPanels<T> pack_panels<T>(const Context&, MatrixView<const T>, bool);
TL_INST(float)
TL_INST(double)
#undef TL_INST

}  // namespace tl::detail
