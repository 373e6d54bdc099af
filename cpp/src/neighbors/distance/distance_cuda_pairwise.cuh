// CUDA pairwise distances (the templates of distance_cuda_impl.cuh): the
// tile kernel, the launchers that the per-family translation units define,
// the metric-family switch, and the staging of both sides with the batched
// loop over an output buffer.
#pragma once
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "core/cuda/launch.cuh"
#include "core/distance/distance_tile.cuh"
#include "neighbors/distance/distance_impl.hpp"

namespace tl::detail {
namespace {

using dist::Family;
using tile::Cfg;
using tile::Smem;

// ---------------------------------------------------------------------------
// Pairwise distances
// ---------------------------------------------------------------------------

// Block b computes the tile (row tile b / ncol_tiles, column tile b %
// ncol_tiles) of out (m x n, row stride ldo, device memory); threads as in
// distance_tile.cuh, each writing the TM x TN distances it owns.
template <class T, Family F>
__global__ void __launch_bounds__(tile::kThreads)
    pairwise_kernel(const T* __restrict__ X, const T* __restrict__ xn, std::int64_t m, const T* __restrict__ Y,
                    const T* __restrict__ yn, std::int64_t n, std::int64_t d, MetricKind kind, T p,
                    std::int64_t ncol_tiles, T* __restrict__ out, std::int64_t ldo) {
  constexpr int BM = Cfg<T>::BM, BN = Cfg<T>::BN, TM = Cfg<T>::TM, TN = Cfg<T>::TN;
  __shared__ Smem<T> s;
  const std::int64_t row0 = (static_cast<std::int64_t>(blockIdx.x) / ncol_tiles) * BM;
  const std::int64_t col0 = (static_cast<std::int64_t>(blockIdx.x) % ncol_tiles) * BN;
  T acc[TM][TN];
  tile::compute_tile<T, F>(X, m, Y, n, d, row0, col0, p, s, acc);
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const std::int64_t r = row0 + tile::row_of<T>(ty, i);
    if (r >= m) continue;
    const T xr = xn ? xn[r] : T(0);
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const std::int64_t c = col0 + tile::col_of<T>(tx, j);
      if (c >= n) continue;
      const T rv = xn ? dist::rank_value(kind, acc[i][j], xr, yn[c]) : acc[i][j];
      out[r * ldo + c] = num::canonical(dist::output_value(kind, rv, p));
    }
  }
}

}  // namespace

// Launches pairwise_kernel<T, F> (arguments as the kernel's, grid blocks of
// tile::kThreads threads). Each (T, F) is defined, with its kernel, in one of
// the distance_cuda_<dtype>_<family>.cu files (TL_DISTANCE_CUDA_FAMILY,
// distance_cuda_impl.cuh), so that the kernels of the families compile in
// parallel.
template <class T, Family F>
void launch_pairwise_kernel(unsigned grid, cudaStream_t stream, const T* X, const T* xn, std::int64_t m, const T* Y,
                            const T* yn, std::int64_t n, std::int64_t d, MetricKind kind, T p, std::int64_t ncol_tiles,
                            T* out, std::int64_t ldo);
// Launches knn_split_kernel<T, F> (arguments as the kernel's), and the
// number of its blocks resident per SM, defined with it.
template <class T, Family F>
void launch_knn_split_kernel(dim3 grid, cudaStream_t stream, const T* Q, const T* qn, std::int64_t m, const T* Y,
                             const T* yn, std::int64_t n, std::int64_t d, Metric metric, std::int64_t k,
                             std::int64_t tiles_per_split, int nsplit, T* lv, std::int64_t* li);
template <class T, Family F>
int knn_split_occupancy();
#define TL_DISTANCE_FAMILY_DECLARE(T, F)                                                                    \
  template <>                                                                                                 \
  void launch_pairwise_kernel<T, F>(unsigned, cudaStream_t, const T*, const T*, std::int64_t, const T*,       \
                                    const T*, std::int64_t, std::int64_t, MetricKind, T, std::int64_t, T*,    \
                                    std::int64_t);                                                            \
  template <>                                                                                                 \
  void launch_knn_split_kernel<T, F>(dim3, cudaStream_t, const T*, const T*, std::int64_t, const T*,          \
                                     const T*, std::int64_t, std::int64_t, Metric, std::int64_t,              \
                                     std::int64_t, int, T*, std::int64_t*);                                   \
  template <>                                                                                                 \
  int knn_split_occupancy<T, F>();
#define TL_DISTANCE_FAMILY_DECLARE_ALL(T)              \
  TL_DISTANCE_FAMILY_DECLARE(T, dist::Family::Dot)     \
  TL_DISTANCE_FAMILY_DECLARE(T, dist::Family::L2)      \
  TL_DISTANCE_FAMILY_DECLARE(T, dist::Family::L1)      \
  TL_DISTANCE_FAMILY_DECLARE(T, dist::Family::Linf)    \
  TL_DISTANCE_FAMILY_DECLARE(T, dist::Family::Lp)
TL_DISTANCE_FAMILY_DECLARE_ALL(float)
TL_DISTANCE_FAMILY_DECLARE_ALL(double)

namespace {

// Calls fn(std::integral_constant<Family, F>{}) for the metric's family F:
// one switch for every kernel templated on the family. Only the Dot family
// reads the rows' squared norms.
template <class Fn>
decltype(auto) with_family(const Metric& metric, Fn&& fn) {
  switch (dist::family_of(metric)) {
    case Family::Dot: return fn(std::integral_constant<Family, Family::Dot>{});
    case Family::L2: return fn(std::integral_constant<Family, Family::L2>{});
    case Family::L1: return fn(std::integral_constant<Family, Family::L1>{});
    case Family::Linf: return fn(std::integral_constant<Family, Family::Linf>{});
    case Family::Lp: break;
  }
  return fn(std::integral_constant<Family, Family::Lp>{});
}

// Launches pairwise_kernel for X (m rows) against Y (n rows), all on the device.
template <class T>
void launch_pairwise(const T* X, const T* xn, std::int64_t m, const T* Y, const T* yn, std::int64_t n,
                     std::int64_t d, Metric metric, T* out, std::int64_t ldo, cudaStream_t stream) {
  if (m == 0 || n == 0) return;
  const std::int64_t rt = (m + Cfg<T>::BM - 1) / Cfg<T>::BM, ct = (n + Cfg<T>::BN - 1) / Cfg<T>::BN;
  const unsigned grid = static_cast<unsigned>(rt * ct);
  const T p = static_cast<T>(metric.p);
  with_family(metric, [&](auto fam) {
    constexpr Family F = decltype(fam)::value;
    const bool dot = F == Family::Dot;
    launch_pairwise_kernel<T, F>(grid, stream, X, dot ? xn : nullptr, m, Y, dot ? yn : nullptr, n, d, metric.kind, p,
                                 ct, out, ldo);
  });
  TL_CUDA_CHECK_LAUNCH("pairwise_kernel");
}

// Device data of one side: the staged rows and, for dot metrics, their norms.
template <class T>
struct Side {
  StagedMatrix<T> rows;
  DeviceBuffer<T> norms;
  const T* norm_ptr() const { return norms.size() ? norms.data() : nullptr; }
};

template <class T>
Side<T> prepare_side(const Context& ctx, MatrixView<const T> A, bool with_norms) {
  Side<T> s;
  s.rows = stage_to_device(ctx, A);
  if (with_norms && A.rows > 0) {
    s.norms = DeviceBuffer<T>(static_cast<std::size_t>(A.rows), ctx.device().id);
    tile::row_sqnorms(s.rows.view.data, A.rows, A.cols, s.norms.data(), tl_stream(ctx));
  }
  return s;
}

// Rows of X per batch when the output goes through a device buffer: about
// 64M entries at a time, whole row tiles.
template <class T>
std::int64_t batch_rows(std::int64_t m, std::int64_t n) {
  const std::int64_t budget = std::int64_t(64) << 20;
  std::int64_t rows = std::max<std::int64_t>(Cfg<T>::BM, budget / std::max<std::int64_t>(n, 1));
  rows = rows / Cfg<T>::BM * Cfg<T>::BM;
  return std::min(rows, std::max<std::int64_t>(m, 1));
}

// What every entry point starts with: the context's device made current, its
// stream, and both sides staged (with norms for dot metrics). a: the side
// whose rows are the output's rows (X, the queries), b: the other.
template <class T>
struct PreparedPair {
  int dev;
  DeviceGuard guard;
  cudaStream_t stream;
  Side<T> a, b;
  PreparedPair(const Context& ctx, MatrixView<const T> A, MatrixView<const T> B, const Metric& metric)
      : dev(ctx.device().id),
        guard(dev),
        stream(tl_stream(ctx)),
        a(prepare_side(ctx, A, dist::needs_norms(metric))),
        b(prepare_side(ctx, B, dist::needs_norms(metric))) {}
};

// The distances of p.a's m rows to p.b's n, computed into a device buffer
// batch_rows<T> rows at a time; emit(r0, rows, buf) takes each batch (rows x
// n, row stride n) before the next one overwrites it.
template <class T, class Emit>
void pairwise_batches(const PreparedPair<T>& p, std::int64_t m, std::int64_t n, std::int64_t d, const Metric& metric,
                      Emit emit) {
  const std::int64_t rb = batch_rows<T>(m, n);
  DeviceBuffer<T> buf(static_cast<std::size_t>(rb * n), p.dev);
  const T* an = p.a.norm_ptr();
  for (std::int64_t r0 = 0; r0 < m; r0 += rb) {
    const std::int64_t rows = std::min(rb, m - r0);
    launch_pairwise(p.a.rows.view.data + r0 * d, an ? an + r0 : nullptr, rows, p.b.rows.view.data, p.b.norm_ptr(), n,
                    d, metric, buf.data(), n, p.stream);
    emit(r0, rows, buf.data());
  }
}

}  // namespace
}  // namespace tl::detail
