// CUDA nearest neighbours, the exact search (the templates of
// distance_cuda_impl.cuh): knn_split_kernel's sorted lists per (query, index
// split), their fill and merge, and the launch facts of the kernel.
#pragma once
#include <cstdint>

#include "neighbors/distance/distance_cuda_pairwise.cuh"

namespace tl::detail {
namespace {

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
  fill_lists_kernel<T><<<blocks_for(total, 256), 256, 0, stream>>>(lv, li, total);
  TL_CUDA_CHECK_LAUNCH("fill_lists_kernel");
}
template <class T>
void finish_lists(const T* lv, const std::int64_t* li, std::int64_t rows, std::int64_t nsplit, std::int64_t k,
                  const Metric& metric, T* dv, std::int64_t* iv, T* dist_out, std::int64_t* ind_out,
                  cudaStream_t stream) {
  merge_lists_kernel<T><<<blocks_for(rows, 128), 128, 0, stream>>>(
      lv, li, rows, static_cast<int>(nsplit), k, metric.kind, static_cast<T>(metric.p), dv, iv);
  TL_CUDA_CHECK_LAUNCH("merge_lists_kernel");
  TL_CUDA_CHECK(cudaMemcpyAsync(dist_out, dv, sizeof(T) * rows * k, cudaMemcpyDeviceToHost, stream));
  TL_CUDA_CHECK(cudaMemcpyAsync(ind_out, iv, sizeof(std::int64_t) * rows * k, cudaMemcpyDeviceToHost, stream));
}

template <class T>
std::size_t knn_smem_bytes() {
  return sizeof(Smem<T>) + sizeof(T) * Cfg<T>::BM * Cfg<T>::BN + (sizeof(std::int64_t) + sizeof(T)) * Cfg<T>::BM;
}

template <class T>
int knn_blocks_per_sm(const Metric& metric) {
  return with_family(metric, [](auto fam) { return knn_split_occupancy<T, decltype(fam)::value>(); });
}

}  // namespace
}  // namespace tl::detail
