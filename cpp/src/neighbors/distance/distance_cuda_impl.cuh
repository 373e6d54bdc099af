// CUDA backend of pairwise distances and brute-force nearest neighbours: the
// templates. Translation units that compile in parallel instantiate them:
// distance_cuda_<dtype>.cu (pairwise distances, distance blocks) and
// distance_cuda_<dtype>_knn.cu (the k-nearest search) the entry points, and
// distance_cuda_<dtype>_<family>.cu the kernels of one metric family
// (TL_DISTANCE_CUDA_FAMILY). One file held every kernel variant and was the
// longest step of the build.
#pragma once
#include <algorithm>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

#include "core/cuda/blas.cuh"
#include "core/cuda/tf32_split.cuh"
#include "core/cuda/wmma_tile.cuh"
#include "neighbors/distance/distance_impl.hpp"
#include "neighbors/distance/distance_tile.cuh"

namespace tl::detail {
namespace {

using dist::Family;
using tile::Cfg;
using tile::Smem;

int sm_count(int dev) {
  int sms = 0;
  TL_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return sms > 0 ? sms : 1;
}

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
// the distance_cuda_pairwise_*.cu files (TL_DISTANCE_CUDA_PAIRWISE below), so
// that the kernels of the families compile in parallel.
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

// ---------------------------------------------------------------------------
// Nearest neighbours
// ---------------------------------------------------------------------------

// k nearest of a tile of queries within one split of the index, kept in a
// sorted list per (query, split) in global memory. Block (blockIdx.x,
// blockIdx.y) = (query tile, index split): it walks the index tiles of its
// split in order; after each tile's ranking values are in shared memory, warp
// w filters queries w, w + 8, ... of the tile: lanes test 32 candidates at a
// time against the list's current worst entry, and each passing candidate is
// inserted by the whole warp (insert_sorted). The lists end up holding the k
// lexicographically smallest (value, index) pairs of the split, a set that
// does not depend on the order of insertion.
template <class T>
__device__ __forceinline__ void insert_sorted(T* __restrict__ lv, std::int64_t* __restrict__ li, std::int64_t k,
                                              T cv, std::int64_t ci, T& wv, std::int64_t& wi) {
  if (!dist::nearer(cv, ci, wv, wi)) return;
  const int lane = threadIdx.x % 32;
  unsigned cnt = 0;
  for (std::int64_t e = lane; e < k; e += 32) cnt += dist::nearer(lv[e], li[e], cv, ci) ? 1u : 0u;
#pragma unroll
  for (int o = 16; o >= 1; o >>= 1) cnt += __shfl_xor_sync(0xffffffffu, cnt, o);
  const std::int64_t pos = cnt;
  // Shift [pos, k-2] to [pos+1, k-1], from the top down, 32 entries a round.
  for (std::int64_t hi = k - 1; hi > pos; hi -= 32) {
    const std::int64_t e = hi - lane;
    const bool act = e > pos;
    T tv{};
    std::int64_t ti = 0;
    if (act) {
      tv = lv[e - 1];
      ti = li[e - 1];
    }
    __syncwarp();
    if (act) {
      lv[e] = tv;
      li[e] = ti;
    }
    __syncwarp();
  }
  if (lane == 0) {
    lv[pos] = cv;
    li[pos] = ci;
  }
  __syncwarp();
  wv = lv[k - 1];
  wi = li[k - 1];
  __syncwarp();
}

// The lanes of a warp each offer one candidate (cv, ci) when `pass`; the
// passing ones are inserted one at a time, in lane order (insert_sorted).
// Every lane of the warp calls it.
template <class T>
__device__ __forceinline__ void insert_passing(bool pass, T v, std::int64_t c, T* __restrict__ lv,
                                               std::int64_t* __restrict__ li, std::int64_t k, T& wv,
                                               std::int64_t& wi) {
  unsigned ball = __ballot_sync(0xffffffffu, pass);
  while (ball) {
    const int src = __ffs(ball) - 1;
    ball &= ball - 1;
    const T cv = __shfl_sync(0xffffffffu, v, src);
    const std::int64_t ci = __shfl_sync(0xffffffffu, c, src);
    insert_sorted(lv, li, k, cv, ci, wv, wi);
  }
}

template <class T, Family F>
__global__ void __launch_bounds__(tile::kThreads)
    knn_split_kernel(const T* __restrict__ Q, const T* __restrict__ qn, std::int64_t m, const T* __restrict__ Y,
                     const T* __restrict__ yn, std::int64_t n, std::int64_t d, MetricKind kind, T p, std::int64_t k,
                     std::int64_t tiles_per_split, int nsplit, T* __restrict__ list_v,
                     std::int64_t* __restrict__ list_i) {
  constexpr int BM = Cfg<T>::BM, BN = Cfg<T>::BN, TM = Cfg<T>::TM, TN = Cfg<T>::TN;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  Smem<T>& s = *reinterpret_cast<Smem<T>*>(smem_raw);
  T(*dt)[BN] = reinterpret_cast<T(*)[BN]>(smem_raw + sizeof(Smem<T>));
  const std::int64_t row0 = static_cast<std::int64_t>(blockIdx.x) * BM;
  const int split = blockIdx.y;
  const std::int64_t ntiles = (n + BN - 1) / BN;
  const std::int64_t t0 = split * tiles_per_split, t1 = min(ntiles, t0 + tiles_per_split);
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16, lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  // The worst entry (value, index) of each of the block's lists, kept in
  // shared memory from list to list (each query's list has one warp for the
  // whole kernel: queries w, w + 8, ... go to warp w at every tile), so that
  // the filter does not wait on a global load per query and tile.
  std::int64_t* worst_i = reinterpret_cast<std::int64_t*>(smem_raw + sizeof(Smem<T>) + sizeof(T) * BM * BN);
  T* worst_v = reinterpret_cast<T*>(worst_i + BM);
  for (int e = threadIdx.x; e < BM; e += tile::kThreads) {
    const std::int64_t r = min(row0 + e, m - 1);
    worst_v[e] = list_v[(r * nsplit + split) * k + k - 1];
    worst_i[e] = list_i[(r * nsplit + split) * k + k - 1];
  }
  // The queries' norms of this thread's rows, the same for every tile.
  T xr[TM];
#pragma unroll
  for (int i = 0; i < TM; ++i) xr[i] = qn ? qn[min(row0 + tile::row_of<T>(ty, i), m - 1)] : T(0);
  T acc[TM][TN];
  for (std::int64_t t = t0; t < t1; ++t) {
    const std::int64_t col0 = t * BN;
    tile::compute_tile<T, F>(Q, m, Y, n, d, row0, col0, p, s, acc);
    // Each run of kVec consecutive columns goes to dt as one 128-bit store (a
    // quarter warp's stores then fill 128 contiguous bytes: no bank conflict).
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      const int ri = tile::row_of<T>(ty, i);
#pragma unroll
      for (int j0 = 0; j0 < TN; j0 += tile::kVec<T>) {
        T v[tile::kVec<T>];
#pragma unroll
        for (int q = 0; q < tile::kVec<T>; ++q) {
          const std::int64_t c = min(col0 + tile::col_of<T>(tx, j0 + q), n - 1);
          v[q] = qn ? dist::rank_value(kind, acc[i][j0 + q], xr[i], yn[c]) : acc[i][j0 + q];
        }
        tile::store_vec(&dt[ri][tile::col_of<T>(tx, j0)], v);
      }
    }
    __syncthreads();
    for (int qq = warp; qq < BM; qq += tile::kThreads / 32) {
      const std::int64_t r = row0 + qq;
      if (r >= m) break;
      T* lv = list_v + (r * nsplit + split) * k;
      std::int64_t* li = list_i + (r * nsplit + split) * k;
      T wv = worst_v[qq];
      std::int64_t wi = worst_i[qq];
      for (int j0 = 0; j0 < BN; j0 += 32) {
        const std::int64_t c = col0 + j0 + lane;
        const T v = dt[qq][j0 + lane];
        insert_passing(c < n && dist::nearer(v, c, wv, wi), v, c, lv, li, k, wv, wi);
      }
      if (lane == 0) {
        worst_v[qq] = wv;
        worst_i[qq] = wi;
      }
    }
    __syncthreads();
  }
}

// Fills every list slot with the empty sentinel. One thread per slot.
template <class T>
__global__ void fill_lists_kernel(T* __restrict__ lv, std::int64_t* __restrict__ li, std::int64_t total) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < total) {
    lv[i] = dist::empty_value<T>();
    li[i] = dist::kNoIndex;
  }
}

// One thread per query: merges its nsplit sorted lists, taking the k
// smallest (value, index) pairs, and writes the reported distances.
template <class T>
__global__ void merge_lists_kernel(const T* __restrict__ lv, const std::int64_t* __restrict__ li, std::int64_t m,
                                   int nsplit, std::int64_t k, MetricKind kind, T p, T* __restrict__ dist_out,
                                   std::int64_t* __restrict__ ind_out) {
  const std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= m) return;
  constexpr int kMaxSplit = 64;
  std::int64_t head[kMaxSplit];
  for (int s = 0; s < nsplit; ++s) head[s] = 0;
  const T* v = lv + r * nsplit * k;
  const std::int64_t* ix = li + r * nsplit * k;
  for (std::int64_t t = 0; t < k; ++t) {
    int best = -1;
    T bv = dist::empty_value<T>();
    std::int64_t bi = dist::kNoIndex;
    for (int s = 0; s < nsplit; ++s) {
      if (head[s] >= k) continue;
      const T cv = v[s * k + head[s]];
      const std::int64_t ci = ix[s * k + head[s]];
      if (best < 0 || dist::nearer(cv, ci, bv, bi)) {
        best = s;
        bv = cv;
        bi = ci;
      }
    }
    ++head[best];
    dist_out[r * k + t] = num::canonical(dist::output_value(kind, bv, p));
    ind_out[r * k + t] = bi;
  }
}

// A block of queries' lists: all slots empty before the search; after it,
// merged (nsplit lists per query), their distances reported and copied with
// the indices to the host outputs of the block.
template <class T>
void start_lists(T* lv, std::int64_t* li, std::int64_t total, cudaStream_t stream) {
  fill_lists_kernel<T><<<static_cast<unsigned>((total + 255) / 256), 256, 0, stream>>>(lv, li, total);
  TL_CUDA_CHECK_LAUNCH("fill_lists_kernel");
}
template <class T>
void finish_lists(const T* lv, const std::int64_t* li, std::int64_t rows, std::int64_t nsplit, std::int64_t k,
                  const Metric& metric, T* dv, std::int64_t* iv, T* dist_out, std::int64_t* ind_out,
                  cudaStream_t stream) {
  merge_lists_kernel<T><<<static_cast<unsigned>((rows + 127) / 128), 128, 0, stream>>>(
      lv, li, rows, static_cast<int>(nsplit), k, metric.kind, static_cast<T>(metric.p), dv, iv);
  TL_CUDA_CHECK_LAUNCH("merge_lists_kernel");
  TL_CUDA_CHECK(cudaMemcpyAsync(dist_out, dv, sizeof(T) * rows * k, cudaMemcpyDeviceToHost, stream));
  TL_CUDA_CHECK(cudaMemcpyAsync(ind_out, iv, sizeof(std::int64_t) * rows * k, cudaMemcpyDeviceToHost, stream));
}

// Fast mode's search (float, dot-product metrics): the dot products of a
// block of queries with a chunk of the index from one cuBLAS TF32 GEMM over
// split operands (3xTF32, core/cuda/tf32_split.cuh; about float's accuracy,
// no bit promise), then this kernel: warp w takes queries w, w + warps, ...
// of the block, ranks the chunk's candidates (rank_value) and inserts those
// that beat its list's worst entry (insert_sorted), as knn_split_kernel does.
// The chunks come in index order, into one list per query. A warp step covers
// 256 candidates, eight per lane from two 128-bit loads (rows of dots have a
// leading dimension ldd, a multiple of 4), so the loads of a step are in
// flight together. The per-candidate test is one comparison with the list's
// worst value (an empty list's NaN counts as +inf; the data are finite); the
// insertions (rare once a list has filled) run only in steps where some lane
// has a candidate, and insert_sorted decides each exactly against the list's
// current worst (value, index), so the order of insertion is free. Sq: the
// (squared) Euclidean metrics, whose ranking value is one FMA and a clamp.
template <class T, bool Sq>
__global__ void knn_chunk_select_kernel(const T* __restrict__ dots, std::int64_t rows, int nb, std::int64_t ldd,
                                        std::int64_t j0, const T* __restrict__ qn, const T* __restrict__ yn,
                                        MetricKind kind, std::int64_t k, T* __restrict__ list_v,
                                        std::int64_t* __restrict__ list_i) {
  static_assert(std::is_same_v<T, float>, "the fast search is float only");
  constexpr int kStep = 256, kPer = 8;
  const int lane = threadIdx.x % 32;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / 32);
  const T* ynj = yn + j0;
  for (std::int64_t q = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32; q < rows;
       q += warps) {
    T* lv = list_v + q * k;
    std::int64_t* li = list_i + q * k;
    T wv = lv[k - 1];
    std::int64_t wi = li[k - 1];
    T bound = isnan(wv) ? INFINITY : wv;
    const T* drow = dots + q * ldd;
    const T xq = qn[q];
    for (int c0 = 0; c0 < nb; c0 += kStep) {
      T v[kPer];
      bool pass[kPer];
      bool any = false;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int c = c0 + h * 128 + 4 * lane;
        T dv[4];
        if (c + 4 <= nb) {
          const float4 d4 = *reinterpret_cast<const float4*>(drow + c);
          dv[0] = d4.x, dv[1] = d4.y, dv[2] = d4.z, dv[3] = d4.w;
        } else {
#pragma unroll
          for (int j = 0; j < 4; ++j) dv[j] = c + j < nb ? drow[c + j] : T(0);
        }
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const int cj = c + j;
          const T y = cj < nb ? ynj[cj] : T(0);
          T r;
          if constexpr (Sq) {
            r = fmaxf(fmaf(-2.0f, dv[j], xq + y), 0.0f);
          } else {
            r = dist::rank_value(kind, dv[j], xq, y);
          }
          v[h * 4 + j] = r;
          pass[h * 4 + j] = cj < nb && r <= bound;
          any |= pass[h * 4 + j];
        }
      }
      if (!__any_sync(0xffffffffu, any)) continue;
#pragma unroll
      for (int e = 0; e < kPer; ++e) {
        const std::int64_t ci = j0 + c0 + (e / 4) * 128 + 4 * lane + e % 4;
        insert_passing(pass[e], v[e], ci, lv, li, k, wv, wi);
      }
      bound = isnan(wv) ? INFINITY : wv;
    }
  }
}

// Fast mode's fused search (float, dot-product metrics): knn_split_kernel's
// lists, index splits and tie rule, with each 128 x 64 tile of dot products
// from core/cuda/wmma_tile.cuh (3xTF32 on the tensor cores, about float's
// accuracy, no bit promise) instead of the SIMT tile, and no dot-product
// matrix in global memory. Warp w filters queries w, w + 8, ... of the tile:
// one comparison per candidate with the list's worst value (an empty list's
// NaN counts as +inf; the data are finite), then insert_sorted decides
// exactly. Sq: the (squared) Euclidean ranking value as one FMA and a clamp.
template <bool Sq>
__global__ void __launch_bounds__(kWmThreads)
    knn_wmma_kernel(const float* __restrict__ Q, const float* __restrict__ qn, std::int64_t m,
                    const float* __restrict__ Y, const float* __restrict__ yn, std::int64_t n, int d, MetricKind kind,
                    std::int64_t k, std::int64_t tiles_per_split, int nsplit, float* __restrict__ list_v,
                    std::int64_t* __restrict__ list_i) {
  __shared__ WmmaTileSmem s;
  const std::int64_t row0 = static_cast<std::int64_t>(blockIdx.x) * kWmRows;
  const int split = blockIdx.y;
  const std::int64_t ntiles = (n + kWmCols - 1) / kWmCols;
  const std::int64_t t0 = split * tiles_per_split, t1 = min(ntiles, t0 + tiles_per_split);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const bool vec = wmma_vec_ok(Q, Y, d);
  for (std::int64_t t = t0; t < t1; ++t) {
    const std::int64_t col0 = t * kWmCols;
    wmma_dot_tile(Q, m, row0, Y, n, col0, d, vec, s);
    for (int qq = warp; qq < kWmRows; qq += kWmThreads / 32) {
      const std::int64_t r = row0 + qq;
      if (r >= m) break;
      float* lv = list_v + (r * nsplit + split) * k;
      std::int64_t* li = list_i + (r * nsplit + split) * k;
      float wv = lv[k - 1];
      std::int64_t wi = li[k - 1];
      const float xq = qn[r];
      for (int j0 = 0; j0 < kWmCols; j0 += 32) {
        const std::int64_t c = col0 + j0 + lane;
        const float dot = s.u.dot[qq][j0 + lane];
        const float y = c < n ? yn[c] : 0.0f;
        float v;
        if constexpr (Sq) {
          v = fmaxf(fmaf(-2.0f, dot, xq + y), 0.0f);
        } else {
          v = dist::rank_value(kind, dot, xq, y);
        }
        const float bound = isnan(wv) ? INFINITY : wv;
        insert_passing(c < n && v <= bound, v, c, lv, li, k, wv, wi);
      }
    }
  }
}

// ---------------------------------------------------------------------------
// The certified search (identical and deterministic modes, float, the
// (squared) Euclidean metrics, d <= dist::kFilterMaxFeatures, k <=
// kKnnCertMaxK): fast mode's search as a filter keeps kl > k candidates per
// query; where dist::knn_list_certified holds, they contain the canonical k
// nearest, which knn_certify_kernel finds by the canonical chains of the kl
// candidates alone. The other queries go through knn_split_kernel.
// ---------------------------------------------------------------------------
inline constexpr std::int64_t kKnnCertMaxK = 64;
inline constexpr int kKnnCertMaxList = 128;  // kl
inline std::int64_t knn_cert_list(std::int64_t k, std::int64_t n) {
  return std::min<std::int64_t>({n, k + std::max<std::int64_t>(k, 16), kKnnCertMaxList});
}

// The largest of n squared norms into *out (block_max_sqnorm). One block.
template <class T>
__global__ void __launch_bounds__(1024) max_norm_kernel(const T* __restrict__ yn, std::int64_t n,
                                                        T* __restrict__ out) {
  const T m = tile::block_max_sqnorm(yn, n);
  if (threadIdx.x == 0) *out = m;
}

// One warp per query q of a block of `rows` (global query q0 + q): its
// filter list (fv, fi: kl values and indices, sorted) holds its canonical k
// nearest when dist::knn_list_certified(fv[k-1], fv[kl-1], qn[q], *yn_max)
// and the list is full. Then each lane computes the canonical values of its
// candidates (lanes take candidates lane, lane + 32, ...: the chain of
// accumulate over the query's and the candidate's rows, then rank_value, the
// bits of knn_split_kernel), ranks them among the kl by the tie rule (nearer)
// and writes those of rank below k, as merge_lists_kernel would: the reported
// distance into dv, the index into iv (k per query). Otherwise lane 0 appends
// q0 + q to undecided. (A template, as the other float-only kernels, so
// that only the translation unit of the float search compiles it.)
template <class T>
__global__ void knn_certify_kernel(const T* __restrict__ fv, const std::int64_t* __restrict__ fi,
                                   std::int64_t rows, int kl, std::int64_t k, const T* __restrict__ Q,
                                   const T* __restrict__ qn, const T* __restrict__ Y, const T* __restrict__ yn,
                                   const T* __restrict__ yn_max, std::int64_t d, MetricKind kind, T p,
                                   T* __restrict__ dv, std::int64_t* __restrict__ iv, std::int64_t q0,
                                   std::int64_t* __restrict__ undecided, unsigned int* __restrict__ count) {
  static_assert(std::is_same_v<T, float>, "the certified search is float only");
  constexpr int kPer = kKnnCertMaxList / 32;
  const int lane = threadIdx.x % 32;
  const std::int64_t q = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  if (q >= rows) return;  // the whole warp
  const float* a = fv + q * kl;
  const std::int64_t* ai = fi + q * kl;
  const float xq = qn[q];
  if (ai[kl - 1] == dist::kNoIndex || !dist::knn_list_certified(a[k - 1], a[kl - 1], xq, *yn_max)) {
    if (lane == 0) undecided[atomicAdd(count, 1u)] = q0 + q;
    return;
  }
  const float* qr = Q + q * d;
  float val[kPer];
  std::int64_t idx[kPer];
#pragma unroll
  for (int s = 0; s < kPer; ++s) {
    const int e = lane + 32 * s;
    val[s] = dist::empty_value<float>();
    idx[s] = dist::kNoIndex;
    if (e < kl) {
      const std::int64_t c = ai[e];
      const float acc = dist::accumulate<float, Family::Dot>(qr, Y + c * d, d, 0.0f);
      val[s] = dist::rank_value(kind, acc, xq, yn[c]);
      idx[s] = c;
    }
  }
  // rank[s]: the candidates of the list nearer than this lane's s-th (the
  // indices are distinct, so the ranks are too).
  int rank[kPer] = {};
#pragma unroll
  for (int slot = 0; slot < kPer; ++slot) {
    for (int src = 0; src < 32 && slot * 32 + src < kl; ++src) {
      const float ov = __shfl_sync(0xffffffffu, val[slot], src);
      const std::int64_t oi = __shfl_sync(0xffffffffu, idx[slot], src);
#pragma unroll
      for (int s = 0; s < kPer; ++s) rank[s] += dist::nearer(ov, oi, val[s], idx[s]) ? 1 : 0;
    }
  }
#pragma unroll
  for (int s = 0; s < kPer; ++s) {
    if (lane + 32 * s < kl && rank[s] < k) {
      dv[q * k + rank[s]] = num::canonical(dist::output_value(kind, val[s], p));
      iv[q * k + rank[s]] = idx[s];
    }
  }
}

// Rows idx[0 .. cnt) of A (d features) and their norms into dst, dn: one
// thread per value.
template <class T>
__global__ void gather_rows_kernel(const T* __restrict__ A, const T* __restrict__ an, std::int64_t d,
                                   const std::int64_t* __restrict__ idx, std::int64_t cnt, T* __restrict__ dst,
                                   T* __restrict__ dn) {
  const std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= cnt * d) return;
  const std::int64_t r = e / d, f = e % d;
  dst[e] = A[idx[r] * d + f];
  if (f == 0 && an) dn[r] = an[idx[r]];
}

// TWINLEARN_KNN_FAST_KERNEL=wmma: fast mode's search by the fused
// knn_wmma_kernel instead of the cuBLAS GEMMs (knn_search_fast), which are
// the default: on the H200 the fused kernel took 94.7 ms for a 1M x 64 index
// and 10k queries, k = 10, against 43 ms for the GEMMs and the selection.
inline bool knn_fast_kernel_is_wmma() {
  const char* env = std::getenv("TWINLEARN_KNN_FAST_KERNEL");
  return env != nullptr && std::string(env) == "wmma";
}

// Index rows at which the fast search pays (below, the fused kernel).
inline constexpr std::int64_t kKnnFastMinIndex = 65536;
// Bytes of one block of dot products (fast_chunk_bytes): 128 MiB, two in
// turn (DotsPipeline), a few hundred launches for 10k queries against 1M rows.
inline constexpr std::int64_t kKnnFastChunkBytes = std::int64_t(128) << 20;

// The fast search of knn_search_cuda when it serves (fast mode, float, a
// dot-product metric, an index of at least kKnnFastMinIndex rows, room for
// the split operands in a quarter of the free device memory); false when it
// does not. Query blocks of up to 8192 rows, index chunks sized so that a
// block's dot products fill fast_chunk_bytes(kKnnFastChunkBytes).
// With `undecided`, the certified search instead (identical and
// deterministic modes, float, the (squared) Euclidean metrics, d <=
// dist::kFilterMaxFeatures, k <= kKnnCertMaxK; TWINLEARN_KNN_CERTIFIED=0
// turns it off): the same search keeps knn_cert_list(k, n) candidates per
// query, knn_certify_kernel writes the canonical k nearest of the queries it
// certifies, and the others are returned in `undecided` (their outputs
// left for the caller to fill).
template <class T>
bool knn_search_fast(const Context& ctx, const Side<T>& qs, const Side<T>& ys, std::int64_t m, std::int64_t n,
                     std::int64_t d, const Metric& metric, std::int64_t k, T* dist_out, std::int64_t* ind_out,
                     cudaStream_t stream, std::vector<std::int64_t>* undecided = nullptr) {
  if constexpr (!std::is_same_v<T, float>) {
    return false;
  } else {
    const bool certify = undecided != nullptr;
    const bool sq = metric.kind == MetricKind::Euclidean || metric.kind == MetricKind::SqEuclidean;
    if (certify) {
      const char* env = std::getenv("TWINLEARN_KNN_CERTIFIED");
      if (ctx.mode() == NumericMode::Fast || !sq || d > dist::kFilterMaxFeatures || k > kKnnCertMaxK ||
          (env != nullptr && std::string(env) == "0"))
        return false;
    } else if (ctx.mode() != NumericMode::Fast) {
      return false;
    }
    if (dist::family_of(metric) != Family::Dot || n < kKnnFastMinIndex || m == 0 || d == 0) return false;
    const std::int64_t kl = certify ? knn_cert_list(k, n) : k;  // the lists' length
    const int dev = ctx.device().id;
    // Query blocks of at most 8192 rows, of equal size (one warp per query in
    // the selection: the more queries, the more warps in flight); index chunks
    // of a multiple of 32 rows such that a block's dot products fill about
    // fast_chunk_bytes(kKnnFastChunkBytes).
    const std::int64_t nblk = (m + 8191) / 8192;
    const std::int64_t QB = std::min<std::int64_t>(m, ((m + nblk - 1) / nblk + 31) / 32 * 32), d3 = 3 * d;
    const std::int64_t NB = std::min<std::int64_t>(
        n, std::max<std::int64_t>(
               1024, fast_chunk_bytes(kKnnFastChunkBytes) / (std::int64_t(sizeof(float)) * QB) / 32 * 32));
    const std::int64_t ldmax = (NB + 3) / 4 * 4;
    std::size_t free_b = 0, total_b = 0;
    TL_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    const std::size_t need = sizeof(float) * static_cast<std::size_t>(d3 * (m + n) + 2 * QB * ldmax) +
                             static_cast<std::size_t>(QB * (kl + k) + m) * 2 * (sizeof(float) + sizeof(std::int64_t));
    if (need > free_b / 4) return false;
    DeviceBuffer<float> q3(static_cast<std::size_t>(m * d3), dev), y3(static_cast<std::size_t>(n * d3), dev);
    split_tf32(qs.rows.view.data, m, d, false, q3.data(), stream);
    split_tf32(ys.rows.view.data, n, d, true, y3.data(), stream);
    DotsPipeline pipe(stream, dev, static_cast<std::size_t>(QB * ldmax));
    DeviceBuffer<float> lv(static_cast<std::size_t>(QB * kl), dev), dv(static_cast<std::size_t>(QB * k), dev);
    DeviceBuffer<std::int64_t> li(static_cast<std::size_t>(QB * kl), dev), iv(static_cast<std::size_t>(QB * k), dev);
    // The certified search's filter lists (merged), the largest index norm,
    // the undecided queries and their number.
    DeviceBuffer<float> fv(certify ? static_cast<std::size_t>(QB * kl) : 0, dev), yn_max(certify ? 1 : 0, dev);
    DeviceBuffer<std::int64_t> fi(certify ? static_cast<std::size_t>(QB * kl) : 0, dev);
    DeviceBuffer<std::int64_t> und(certify ? static_cast<std::size_t>(m) : 0, dev);
    DeviceBuffer<unsigned int> und_count(certify ? 1 : 0, dev);
    if (certify) {
      max_norm_kernel<T><<<1, 1024, 0, stream>>>(ys.norm_ptr(), n, yn_max.data());
      TL_CUDA_CHECK_LAUNCH("max_norm_kernel");
      TL_CUDA_CHECK(cudaMemsetAsync(und_count.data(), 0, sizeof(unsigned int), stream));
    }
    const Metric filter{MetricKind::SqEuclidean};
    CublasLease blas(dev, stream);
    for (std::int64_t q0 = 0; q0 < m; q0 += QB) {
      const std::int64_t rows = std::min(QB, m - q0);
      start_lists(lv.data(), li.data(), rows * kl, stream);
      const unsigned grid = static_cast<unsigned>(std::min<std::int64_t>((rows * 32 + 255) / 256, 4096));
      for (std::int64_t j0 = 0; j0 < n; j0 += NB) {
        const std::int64_t nb = std::min(NB, n - j0);
        const std::int64_t ldd = (nb + 3) / 4 * 4;  // <= ldmax
        // dots: rows x nb, leading dimension ldd; the selection of this chunk
        // runs beside the next chunk's GEMM.
        float* dots = pipe.next();
        split_dots(blas.get(), q3.data() + q0 * d3, rows, y3.data() + j0 * d3, nb, d3, dots, ldd);
        const auto select = sq ? knn_chunk_select_kernel<T, true> : knn_chunk_select_kernel<T, false>;
        select<<<grid, 256, 0, pipe.reader()>>>(dots, rows, static_cast<int>(nb), ldd, j0, qs.norm_ptr() + q0,
                                                ys.norm_ptr(), metric.kind, kl, lv.data(), li.data());
        TL_CUDA_CHECK_LAUNCH("knn_chunk_select_kernel");
        pipe.read();
      }
      pipe.join();
      if (!certify) {
        finish_lists(lv.data(), li.data(), rows, 1, k, metric, dv.data(), iv.data(), dist_out + q0 * k,
                     ind_out + q0 * k, stream);
        continue;
      }
      // The filter's values as they are (the squared-distance ranking
      // values), then the canonical k nearest of the certified queries.
      merge_lists_kernel<float><<<static_cast<unsigned>((rows + 127) / 128), 128, 0, stream>>>(
          lv.data(), li.data(), rows, 1, kl, filter.kind, 0.0f, fv.data(), fi.data());
      TL_CUDA_CHECK_LAUNCH("merge_lists_kernel");
      knn_certify_kernel<T><<<static_cast<unsigned>((rows * 32 + 255) / 256), 256, 0, stream>>>(
          fv.data(), fi.data(), rows, static_cast<int>(kl), k, qs.rows.view.data + q0 * d, qs.norm_ptr() + q0,
          ys.rows.view.data, ys.norm_ptr(), yn_max.data(), d, metric.kind, static_cast<float>(metric.p), dv.data(),
          iv.data(), q0, und.data(), und_count.data());
      TL_CUDA_CHECK_LAUNCH("knn_certify_kernel");
      TL_CUDA_CHECK(cudaMemcpyAsync(dist_out + q0 * k, dv.data(), sizeof(T) * rows * k, cudaMemcpyDeviceToHost,
                                    stream));
      TL_CUDA_CHECK(cudaMemcpyAsync(ind_out + q0 * k, iv.data(), sizeof(std::int64_t) * rows * k,
                                    cudaMemcpyDeviceToHost, stream));
    }
    if (certify) {
      unsigned int cnt = 0;
      TL_CUDA_CHECK(cudaMemcpyAsync(&cnt, und_count.data(), sizeof(unsigned int), cudaMemcpyDeviceToHost, stream));
      TL_CUDA_CHECK(cudaStreamSynchronize(stream));
      undecided->resize(cnt);
      if (cnt) {
        TL_CUDA_CHECK(cudaMemcpyAsync(undecided->data(), und.data(), sizeof(std::int64_t) * cnt,
                                      cudaMemcpyDeviceToHost, stream));
        TL_CUDA_CHECK(cudaStreamSynchronize(stream));
      }
      std::sort(undecided->begin(), undecided->end());
    }
    TL_CUDA_CHECK(cudaStreamSynchronize(stream));
    return true;
  }
}

template <class T>
std::size_t knn_smem_bytes() {
  return sizeof(Smem<T>) + sizeof(T) * Cfg<T>::BM * Cfg<T>::BN + (sizeof(std::int64_t) + sizeof(T)) * Cfg<T>::BM;
}

// Blocks of knn_wmma_kernel<sq> in flight per multiprocessor.
inline int knn_wmma_blocks_per_sm(bool sq) {
  int blocks = 0;
  TL_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &blocks, sq ? knn_wmma_kernel<true> : knn_wmma_kernel<false>, kWmThreads, 0));
  return std::max(blocks, 1);
}

template <class T>
int knn_blocks_per_sm(const Metric& metric) {
  return with_family(metric, [](auto fam) { return knn_split_occupancy<T, decltype(fam)::value>(); });
}

}  // namespace

template <class T>
void pairwise_distances_cuda(const Context& ctx, MatrixView<const T> X, MatrixView<const T> Y, Metric metric,
                             MatrixView<T> out) {
  const PreparedPair<T> p(ctx, X, Y, metric);
  const std::int64_t m = X.rows, n = Y.rows, d = X.cols;
  if (!out.on_host()) {
    TL_REQUIRE(out.col_stride == 1, ValueError, "out: a CUDA output needs unit column stride");
    launch_pairwise(p.a.rows.view.data, p.a.norm_ptr(), m, p.b.rows.view.data, p.b.norm_ptr(), n, d, metric, out.data,
                    out.row_stride, p.stream);
    TL_CUDA_CHECK(cudaStreamSynchronize(p.stream));
    return;
  }
  pairwise_batches(p, m, n, d, metric, [&](std::int64_t r0, std::int64_t rows, const T* buf) {
    TL_CUDA_CHECK(cudaMemcpy2DAsync(out.data + r0 * out.row_stride, sizeof(T) * out.row_stride, buf, sizeof(T) * n,
                                    sizeof(T) * n, rows, cudaMemcpyDeviceToHost, p.stream));
  });
  TL_CUDA_CHECK(cudaStreamSynchronize(p.stream));
}

template <class T>
void distance_blocks_cuda(const Context& ctx, MatrixView<const T> index, MatrixView<const T> queries, Metric metric,
                          DistanceBlockSink<T> sink, void* state) {
  const PreparedPair<T> p(ctx, queries, index, metric);
  const std::int64_t m = queries.rows, n = index.rows, d = queries.cols;
  std::vector<T> host(static_cast<std::size_t>(batch_rows<T>(m, n) * n));
  pairwise_batches(p, m, n, d, metric, [&](std::int64_t r0, std::int64_t rows, const T* buf) {
    TL_CUDA_CHECK(cudaMemcpyAsync(host.data(), buf, sizeof(T) * rows * n, cudaMemcpyDeviceToHost, p.stream));
    TL_CUDA_CHECK(cudaStreamSynchronize(p.stream));
    sink(state, r0, rows, host.data());
  });
}

namespace {

// The search of knn_search_cuda by knn_split_kernel (or, with wm, the fused
// tensor-core kernel): the m queries Q (norms qn, device rows) against the
// index side ys; k nearest per query into the host outputs.
template <class T>
void knn_search_split(const T* Qall, const T* qnall, std::int64_t m, const Side<T>& ys, std::int64_t n,
                      std::int64_t d, const Metric& metric, std::int64_t k, bool wm, int dev, T* dist_out,
                      std::int64_t* ind_out, cudaStream_t stream) {
  const bool sq = metric.kind == MetricKind::Euclidean || metric.kind == MetricKind::SqEuclidean;
  const std::int64_t BM = wm ? kWmRows : Cfg<T>::BM, BN = wm ? kWmCols : Cfg<T>::BN;
  const std::int64_t ntiles = (n + BN - 1) / BN;
  // Splits of the index so that the grid fills the GPU about four times over
  // with a short last wave (blocks in flight from the occupancy calculator);
  // the result does not depend on the split (see knn_split_kernel).
  const std::int64_t qtiles_all = (m + BM - 1) / BM;
  const std::int64_t slots = static_cast<std::int64_t>(sm_count(dev)) *
                            (wm ? knn_wmma_blocks_per_sm(sq) : knn_blocks_per_sm<T>(metric));
  std::int64_t nsplit = std::max<std::int64_t>(1, slots * 4 / qtiles_all);
  nsplit = std::min<std::int64_t>({nsplit, ntiles, k > 256 ? 16 : 64});
  const std::int64_t tiles_per_split = (ntiles + nsplit - 1) / nsplit;
  nsplit = (ntiles + tiles_per_split - 1) / tiles_per_split;
  // Queries per batch: the lists take at most about 512 MiB.
  const std::int64_t per_query = nsplit * k * static_cast<std::int64_t>(sizeof(T) + sizeof(std::int64_t));
  std::int64_t mb = std::max<std::int64_t>(BM, (std::int64_t(512) << 20) / per_query / BM * BM);
  mb = std::min(mb, m);
  DeviceBuffer<T> lv(static_cast<std::size_t>(mb * nsplit * k), dev);
  DeviceBuffer<std::int64_t> li(static_cast<std::size_t>(mb * nsplit * k), dev);
  DeviceBuffer<T> dv(static_cast<std::size_t>(mb * k), dev);
  DeviceBuffer<std::int64_t> iv(static_cast<std::size_t>(mb * k), dev);
  for (std::int64_t q0 = 0; q0 < m; q0 += mb) {
    const std::int64_t rows = std::min(mb, m - q0);
    const std::int64_t total = rows * nsplit * k;
    start_lists(lv.data(), li.data(), total, stream);
    const dim3 grid(static_cast<unsigned>((rows + BM - 1) / BM), static_cast<unsigned>(nsplit));
    const T* Q = Qall + q0 * d;
    const T* qn = qnall ? qnall + q0 : nullptr;
    const T* Y = ys.rows.view.data;
    bool launched = false;
    if constexpr (std::is_same_v<T, float>) {
      if (wm) {
        const auto kernel = sq ? knn_wmma_kernel<true> : knn_wmma_kernel<false>;
        kernel<<<grid, kWmThreads, 0, stream>>>(Q, qn, rows, Y, ys.norm_ptr(), n, static_cast<int>(d), metric.kind, k,
                                                tiles_per_split, static_cast<int>(nsplit), lv.data(), li.data());
        TL_CUDA_CHECK_LAUNCH("knn_wmma_kernel");
        launched = true;
      }
    }
    if (!launched)
      with_family(metric, [&](auto fam) {
        constexpr Family F = decltype(fam)::value;
        const bool dot = F == Family::Dot;
        launch_knn_split_kernel<T, F>(grid, stream, Q, dot ? qn : nullptr, rows, Y, dot ? ys.norm_ptr() : nullptr, n,
                                      d, metric, k, tiles_per_split, static_cast<int>(nsplit), lv.data(), li.data());
      });
    finish_lists(lv.data(), li.data(), rows, nsplit, k, metric, dv.data(), iv.data(), dist_out + q0 * k,
                 ind_out + q0 * k, stream);
  }
  TL_CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace

template <class T>
void knn_search_cuda(const Context& ctx, MatrixView<const T> index, MatrixView<const T> queries, Metric metric,
                     std::int64_t k, T* dist_out, std::int64_t* ind_out) {
  const PreparedPair<T> p(ctx, queries, index, metric);
  const int dev = p.dev;
  cudaStream_t stream = p.stream;
  const Side<T>&qs = p.a, &ys = p.b;
  const std::int64_t m = queries.rows, n = index.rows, d = queries.cols;
  const bool wmma = knn_fast_kernel_is_wmma();
  if (!wmma && knn_search_fast(ctx, qs, ys, m, n, d, metric, k, dist_out, ind_out, stream)) return;
  // The certified search (identical and deterministic modes): the queries it
  // leaves undecided go through knn_split_kernel, gathered, and their rows of
  // the outputs are filled from there.
  std::vector<std::int64_t> undecided;
  if (knn_search_fast(ctx, qs, ys, m, n, d, metric, k, dist_out, ind_out, stream, &undecided)) {
    const std::int64_t u = static_cast<std::int64_t>(undecided.size());
    if (u == 0) return;
    DeviceBuffer<std::int64_t> idx(static_cast<std::size_t>(u), dev);
    DeviceBuffer<T> qu(static_cast<std::size_t>(u * d), dev), qnu(static_cast<std::size_t>(u), dev);
    TL_CUDA_CHECK(cudaMemcpyAsync(idx.data(), undecided.data(), sizeof(std::int64_t) * u, cudaMemcpyHostToDevice,
                                  stream));
    gather_rows_kernel<T><<<static_cast<unsigned>((u * d + 255) / 256), 256, 0, stream>>>(
        qs.rows.view.data, qs.norm_ptr(), d, idx.data(), u, qu.data(), qnu.data());
    TL_CUDA_CHECK_LAUNCH("gather_rows_kernel");
    std::vector<T> du(static_cast<std::size_t>(u * k));
    std::vector<std::int64_t> iu(static_cast<std::size_t>(u * k));
    knn_search_split(qu.data(), qs.norm_ptr() ? qnu.data() : nullptr, u, ys, n, d, metric, k, false, dev, du.data(),
                     iu.data(), stream);
    for (std::int64_t j = 0; j < u; ++j) {
      std::copy_n(du.data() + j * k, k, dist_out + undecided[j] * k);
      std::copy_n(iu.data() + j * k, k, ind_out + undecided[j] * k);
    }
    return;
  }
  // TWINLEARN_KNN_FAST_KERNEL=wmma with fast mode, float, a dot-product
  // metric and an index of at least kKnnFastMinIndex rows: the fused
  // tensor-core kernel in place of the SIMT one, with the same splits and
  // lists.
  const bool wm = wmma && std::is_same_v<T, float> && ctx.mode() == NumericMode::Fast &&
                  dist::family_of(metric) == Family::Dot && n >= kKnnFastMinIndex && d > 0;
  knn_search_split(qs.rows.view.data, qs.norm_ptr(), m, ys, n, d, metric, k, wm, dev, dist_out, ind_out, stream);
}

}  // namespace tl::detail

// The entry points of distance_impl.hpp for one dtype, in two parts that
// separate translation units compile in parallel: the k-nearest search (its
// top-k kernels are most of the build time) and the rest.
#define TL_DISTANCE_CUDA_INST_KNN(T)                                                                              \
  namespace tl::detail {                                                                                          \
  template void knn_search_cuda<T>(const Context&, MatrixView<const T>, MatrixView<const T>, Metric, std::int64_t,  \
                                   T*, std::int64_t*);                                                            \
  }
#define TL_DISTANCE_CUDA_INST_PAIRWISE(T)                                                                         \
  namespace tl::detail {                                                                                          \
  template void pairwise_distances_cuda<T>(const Context&, MatrixView<const T>, MatrixView<const T>, Metric,        \
                                           MatrixView<T>);                                                        \
  template void distance_blocks_cuda<T>(const Context&, MatrixView<const T>, MatrixView<const T>, Metric,           \
                                        DistanceBlockSink<T>, void*);                                             \
  }

// One family's kernels for one dtype, defined in the including file: the
// launchers of pairwise_kernel<T, F> and knn_split_kernel<T, F>, and the
// latter's occupancy.
#define TL_DISTANCE_CUDA_FAMILY(T, F)                                                                            \
  namespace tl::detail {                                                                                         \
  template <>                                                                                                    \
  void launch_pairwise_kernel<T, F>(unsigned grid, cudaStream_t stream, const T* X, const T* xn, std::int64_t m,  \
                                    const T* Y, const T* yn, std::int64_t n, std::int64_t d, MetricKind kind, T p, \
                                    std::int64_t ncol_tiles, T* out, std::int64_t ldo) {                         \
    pairwise_kernel<T, F><<<grid, tile::kThreads, 0, stream>>>(X, xn, m, Y, yn, n, d, kind, p, ncol_tiles, out,   \
                                                               ldo);                                             \
  }                                                                                                              \
  template <>                                                                                                    \
  void launch_knn_split_kernel<T, F>(dim3 grid, cudaStream_t stream, const T* Q, const T* qn, std::int64_t m,     \
                                     const T* Y, const T* yn, std::int64_t n, std::int64_t d, Metric metric,      \
                                     std::int64_t k, std::int64_t tiles_per_split, int nsplit, T* lv,             \
                                     std::int64_t* li) {                                                         \
    const std::size_t bytes = knn_smem_bytes<T>();                                                               \
    TL_CUDA_CHECK(cudaFuncSetAttribute(knn_split_kernel<T, F>, cudaFuncAttributeMaxDynamicSharedMemorySize,      \
                                       static_cast<int>(bytes)));                                                \
    knn_split_kernel<T, F><<<grid, tile::kThreads, bytes, stream>>>(Q, qn, m, Y, yn, n, d, metric.kind,           \
                                                                    static_cast<T>(metric.p), k, tiles_per_split, \
                                                                    nsplit, lv, li);                             \
    TL_CUDA_CHECK_LAUNCH("knn_split_kernel");                                                                    \
  }                                                                                                              \
  template <>                                                                                                    \
  int knn_split_occupancy<T, F>() {                                                                              \
    const std::size_t bytes = knn_smem_bytes<T>();                                                               \
    TL_CUDA_CHECK(cudaFuncSetAttribute(knn_split_kernel<T, F>, cudaFuncAttributeMaxDynamicSharedMemorySize,      \
                                       static_cast<int>(bytes)));                                                \
    int blocks = 0;                                                                                              \
    TL_CUDA_CHECK(                                                                                               \
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, knn_split_kernel<T, F>, tile::kThreads, bytes));  \
    return blocks > 0 ? blocks : 1;                                                                              \
  }                                                                                                              \
  }
