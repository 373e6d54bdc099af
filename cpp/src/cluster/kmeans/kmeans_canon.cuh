// The canonical KMeans assignment (deterministic and identical modes): the
// nearest center of each row, in the bits of the CPU engine. Every pair's dot
// product is the chain of distance.hpp (fma over the features f = 0, 1, ...,
// d-1 in order from +0.0), then sq_from_dot and the argmin rule of
// distance_common.hpp (smaller value, then lower center). Two kernels give
// those bits:
// - assign_kernel: any dtype and width; the tiles of distance_tile.cuh, 8
//   features of 128 rows and 128 centers staged between barriers, the rows
//   loaded again for every tile of centers;
// - assign_canon_kernel: float data with up to CanonAssign::kMaxFeatures
//   features, where CanonAssign::staged_for stages all the centers in two
//   blocks an SM (1.77 against 1.94 ms an assignment for 1M x 64, k = 256 on
//   the H100; slower than assign_kernel elsewhere). A block stages a chunk of
//   centers in shared memory once (all of them when they fit) and a tile of
//   128 rows at a time, every feature of both, transposed, so the walk over
//   the features has no barrier in it; blocks are persistent. Thread mapping
//   and accumulators as distance_tile.cuh (256 threads as 16 x 16, each
//   owning 8 rows x 8 centers of a 128 x 128 tile, 128-bit shared-memory
//   reads); rank_tile and write_row_groups are shared by both kernels.
// The certified assignment (kmeans_mma.cuh, CudaEngine::certified_assign)
// runs assign_canon_kernel over a list of rows only (gathered), and
// certified_rows_kernel below computes the canonical distances of the rows
// it certified.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>

#include "cluster/kmeans/kmeans_wmma.cuh"
#include "core/distance/distance_tile.cuh"

namespace tl::detail {
namespace {

// Ranks one tile's accumulators into a thread's (best, bi): acc[i][j] is
// the dot product of its row i (squared norm xr(i)) and center
// c0 + col_of(tx, j), whose squared norm is cnt[col_of(tx, j)]; centers from
// k on are skipped.
template <class T, int TM, int TN, class RowNorm>
__device__ __forceinline__ void rank_tile(const T (&acc)[TM][TN], RowNorm xr, const T* cnt, int c0, std::int64_t k,
                                          int tx, T (&best)[TM], int (&bi)[TM]) {
#pragma unroll
  for (int j = 0; j < TN; ++j) {
    const int cl = tile::col_of<T>(tx, j), c = c0 + cl;
    if (c >= k) continue;
    const T cc = cnt[cl];
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      const T v = dist::sq_from_dot(xr(i), cc, acc[i][j]);
      if (dist::nearer<T>(v, c, best[i], bi[i])) {
        best[i] = v;
        bi[i] = c;
      }
    }
  }
}

// The (distance, center) minimum of each of a thread's rows across the 16
// lanes of its row group (half-warp shuffles); the lane with tx == 0 writes
// the label and the distance of rows below n and counts changed labels in ch.
// With a list, tile row r stands for row list[r] (gathered rows).
template <class T, int TM>
__device__ __forceinline__ void write_row_groups(T (&best)[TM], int (&bi)[TM], std::int64_t row0, int ty, int tx,
                                                 std::int64_t n, std::int32_t* __restrict__ labels,
                                                 T* __restrict__ mind, unsigned long long& ch,
                                                 const std::int32_t* __restrict__ list = nullptr) {
#pragma unroll
  for (int i = 0; i < TM; ++i) {
#pragma unroll
    for (int o = 8; o >= 1; o >>= 1) {
      const T ov = __shfl_xor_sync(0xffffffffu, best[i], o);
      const int oi = __shfl_xor_sync(0xffffffffu, bi[i], o);
      if (dist::nearer<T>(ov, oi, best[i], bi[i])) {
        best[i] = ov;
        bi[i] = oi;
      }
    }
    std::int64_t r = row0 + tile::row_of<T>(ty, i);
    if (tx == 0 && r < n) {
      if (list) r = list[r];
      const std::int32_t lab = static_cast<std::int32_t>(bi[i]);
      ch += labels[r] != lab;
      labels[r] = lab;
      mind[r] = best[i];
    }
  }
}

// Fused distance + argmin. Block b owns rows [b*BM, b*BM + BM) and walks all
// center tiles; threads as in distance_tile.cuh. Each thread keeps, for each
// of its TM rows, the nearest (distance, center) among its columns; the 16
// threads of a row group then reduce by half-warp shuffles, and the thread
// with tx == 0 writes the label, the distance and whether the label changed.
// Two blocks per SM (at most 128 registers a thread): the center indices are
// kept as 32-bit integers to make room.
template <class T>
__global__ void __launch_bounds__(tile::kThreads, 2)
    assign_kernel(const T* __restrict__ X, const T* __restrict__ xn, std::int64_t n, const T* __restrict__ C,
                  const T* __restrict__ cn, std::int64_t k, std::int64_t d, std::int32_t* __restrict__ labels,
                  T* __restrict__ mind, unsigned long long* __restrict__ changed) {
  constexpr int BM = tile::Cfg<T>::BM, BN = tile::Cfg<T>::BN, TM = tile::Cfg<T>::TM, TN = tile::Cfg<T>::TN;
  __shared__ tile::Smem<T> s;
  const std::int64_t row0 = static_cast<std::int64_t>(blockIdx.x) * BM;
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  T best[TM];
  int bi[TM];
  T xr[TM];
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    best[i] = dist::empty_value<T>();
    bi[i] = INT_MAX;
    xr[i] = xn[min(row0 + tile::row_of<T>(ty, i), n - 1)];
  }
  T acc[TM][TN];
  for (std::int64_t col0 = 0; col0 < k; col0 += BN) {
    tile::compute_tile<T, dist::Family::Dot>(X, n, C, k, d, row0, col0, T(0), s, acc);
    rank_tile(acc, [&](int i) { return xr[i]; }, cn + col0, static_cast<int>(col0), k, tx, best, bi);
  }
  unsigned long long ch = 0;
  write_row_groups(best, bi, row0, ty, tx, n, labels, mind, ch);
  add_block_count(ch, changed);
}

struct CanonAssign {
  static constexpr int kThreads = tile::kThreads;
  static constexpr int kRows = tile::Cfg<float>::BM;     // rows per tile
  static constexpr int kCenters = tile::Cfg<float>::BN;  // centers per tile; a chunk is a multiple
  static constexpr int kPad = 4;                         // keeps a staged feature's row 16-byte aligned
  static constexpr int kMaxFeatures = 128;
  // Shared-memory bytes for d features and a chunk of `chunk` centers:
  // rows [d][kRows + kPad] and their norms, centers [d][chunk + kPad] and
  // theirs.
  static constexpr std::size_t smem_bytes(std::int64_t d, std::int64_t chunk) {
    return sizeof(float) * static_cast<std::size_t>(d * (kRows + kPad) + kRows + d * (chunk + kPad) + chunk);
  }
  // Centers staged at once for k centers and d features: all of them
  // (rounded up to a tile) when they fit `budget` bytes, else as many tiles
  // as fit; 0 when not even one tile fits.
  static int chunk_for(std::int64_t k, std::int64_t d, std::size_t budget) {
    std::int64_t c = padded(k);
    while (c > 0 && smem_bytes(d, c) > budget) c -= kCenters;
    return static_cast<int>(c);
  }
  // A block's share of an SM's shared memory when two blocks share it.
  static std::size_t two_block_budget(int per_sm_bytes, int reserved_per_block) {
    return static_cast<std::size_t>(per_sm_bytes / 2 - reserved_per_block);
  }
  // The engine's staging (CudaEngine::launch_canon): all k centers, when two
  // blocks with all of them fit an SM (`budget` from two_block_budget) and
  // d <= kMaxFeatures; else 0, and assign_kernel serves (it was faster there
  // on the H100: 2.69 against 3.45 ms for 300k x 128, k = 1000, one block an
  // SM; 1.94 against 1.98 ms for 1M x 64, k = 256 in chunks of 128). cap > 0
  // (tests) stages at most cap centers at a time (at least one tile).
  static int staged_for(std::int64_t k, std::int64_t d, std::size_t budget, std::int64_t cap) {
    if (d > kMaxFeatures) return 0;
    if (cap > 0) return chunk_for(std::min(k, std::max<std::int64_t>(kCenters, cap)), d, budget);
    const int chunk = chunk_for(k, d, budget);
    return chunk == padded(k) ? chunk : 0;
  }
  static std::int64_t padded(std::int64_t k) { return (k + kCenters - 1) / kCenters * kCenters; }
};

// Rows [0, rows) of X (row-major, d features, d <= CanonAssign::kMaxFeatures)
// with squared norms xn against the k centers C (row-major) with squared
// norms cn: the nearest center per row into labels, its squared distance
// into mind, the number of changed labels added to *changed. `chunk` centers
// (a multiple of 128) are staged at a time; dynamic shared memory
// CanonAssign::smem_bytes(d, chunk). Any grid: block b takes row tiles
// b, b + grid, ... With a list (the certified assignment's undecided rows),
// the rows are list[0 .. *count) instead and `rows` is not read.
__global__ void __launch_bounds__(CanonAssign::kThreads, 2)
    assign_canon_kernel(const float* __restrict__ X, const float* __restrict__ xn, std::int64_t rows,
                        const float* __restrict__ C, const float* __restrict__ cn, int k, int d, int chunk,
                        std::int32_t* __restrict__ labels, float* __restrict__ mind,
                        unsigned long long* __restrict__ changed, const std::int32_t* __restrict__ list = nullptr,
                        const unsigned int* __restrict__ count = nullptr) {
  using S = CanonAssign;
  if (list) rows = *count;
  if (static_cast<std::int64_t>(blockIdx.x) * S::kRows >= rows) return;  // the whole block: no tile
  constexpr int BM = S::kRows, BN = S::kCenters, XP = BM + S::kPad, V = 4, TM = 8, TN = 8;
  extern __shared__ float4 canon_smem[];
  float* xs = reinterpret_cast<float*>(canon_smem);  // [d][XP]: feature f of tile row r at xs[f * XP + r]
  float* xns = xs + d * XP;                          // [BM]
  float* cs = xns + BM;                              // [d][chunk + kPad]
  const int CP = chunk + S::kPad;
  float* cns = cs + d * CP;  // [chunk]
  const int t = threadIdx.x, tx = t % 16, ty = t / 16;
  const std::int64_t tiles = (rows + BM - 1) / BM;
  const int nchunks = (k + chunk - 1) / chunk;
  const bool xvec = tile::vec_ok(X, d), cvec = tile::vec_ok(C, d);

  // m rows of A from row a0 (lines past `limit` as zeros; with idx, line j
  // is row idx[j] of A), transposed into dst[f * pitch + r], r < m (a
  // multiple of 32): the 32 lanes of a warp take 32 consecutive rows, so the
  // stores of a warp fall in distinct banks.
  auto stage = [&](const float* __restrict__ A, std::int64_t a0, std::int64_t limit, bool vec, int m, float* dst,
                   int pitch, const std::int32_t* __restrict__ idx) {
    auto line = [&](std::int64_t j) { return A + (idx ? static_cast<std::int64_t>(idx[j]) : j) * d; };
    if (vec) {
      const int q4 = d / V;
      for (int e = t; e < m * q4; e += S::kThreads) {
        const int r = e % m, f = (e / m) * V;
        float v[V];
        if (a0 + r < limit) {
          tile::load_vec(line(a0 + r) + f, v);
        } else {
#pragma unroll
          for (int q = 0; q < V; ++q) v[q] = 0.0f;
        }
#pragma unroll
        for (int q = 0; q < V; ++q) dst[(f + q) * pitch + r] = v[q];
      }
    } else {
      for (int e = t; e < m * d; e += S::kThreads) {
        const int r = e % m, f = e / m;
        dst[f * pitch + r] = a0 + r < limit ? line(a0 + r)[f] : 0.0f;
      }
    }
  };
  auto stage_centers = [&](int c0) {
    stage(C, c0, k, cvec, chunk, cs, CP, nullptr);
    for (int e = t; e < chunk; e += S::kThreads) cns[e] = c0 + e < k ? cn[c0 + e] : 0.0f;
  };
  if (nchunks == 1) stage_centers(0);

  unsigned long long ch = 0;
  for (std::int64_t rt = blockIdx.x; rt < tiles; rt += gridDim.x) {
    const std::int64_t row0 = rt * BM;
    __syncthreads();  // the previous tile's readers are done
    stage(X, row0, rows, xvec, BM, xs, XP, list);
    for (int e = t; e < BM; e += S::kThreads) xns[e] = row0 + e < rows ? xn[list ? list[row0 + e] : row0 + e] : 0.0f;
    float best[TM];
    int bi[TM];
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      best[i] = dist::empty_value<float>();
      bi[i] = INT_MAX;
    }
    for (int ci = 0; ci < nchunks; ++ci) {
      const int c0 = ci * chunk;
      if (nchunks > 1) {
        if (ci > 0) __syncthreads();  // the previous chunk's readers are done
        stage_centers(c0);
      }
      __syncthreads();
      const int live = min(chunk, k - c0);
      for (int j0 = 0; j0 < live; j0 += BN) {
        float acc[TM][TN];
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
          for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
        const float* xa = xs + V * ty;
        const float* cb = cs + j0 + V * tx;
#pragma unroll 4
        for (int f = 0; f < d; ++f) {
          float av[TM], bv[TN];
          tile::load_vec(xa + f * XP, av);
          tile::load_vec(xa + f * XP + BM / 2, av + V);
          tile::load_vec(cb + f * CP, bv);
          tile::load_vec(cb + f * CP + BN / 2, bv + V);
#pragma unroll
          for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) acc[i][j] = num::fma(av[i], bv[j], acc[i][j]);
        }
        rank_tile(acc, [&](int i) { return xns[tile::row_of<float>(ty, i)]; }, cns + j0, c0 + j0, k, tx, best, bi);
      }
    }
    write_row_groups(best, bi, row0, ty, tx, rows, labels, mind, ch, list);
  }
  add_block_count(ch, changed);
}

// The certified assignment's decided rows (cand[r] >= 0, from
// assign_mma_kernel certifying): the canonical squared distance to that
// center (the chain of distance.hpp over the features in order from +0.0,
// then sq_from_dot: assign_canon_kernel's bits), the label and the changed
// count, written as assign_canon_kernel writes them. A block stages its
// kCertRows rows (pitch d + 1: a warp's lanes read distinct banks); each
// thread runs one row's chain.
inline constexpr int kCertRows = 64;
__global__ void __launch_bounds__(kCertRows)
    certified_rows_kernel(const float* __restrict__ X, const float* __restrict__ xn, std::int64_t rows,
                          const float* __restrict__ C, const float* __restrict__ cn, int d,
                          const std::int32_t* __restrict__ cand, std::int32_t* __restrict__ labels,
                          float* __restrict__ mind, unsigned long long* __restrict__ changed) {
  extern __shared__ float cert_rows[];  // [kCertRows][d + 1]
  const std::int64_t row0 = static_cast<std::int64_t>(blockIdx.x) * kCertRows;
  const int t = threadIdx.x, pitch = d + 1;
  const int live = rows - row0 < kCertRows ? static_cast<int>(rows - row0) : kCertRows;
  for (int e = t; e < live * d; e += kCertRows) cert_rows[(e / d) * pitch + e % d] = X[row0 * d + e];
  __syncthreads();
  unsigned long long ch = 0;
  const std::int64_t r = row0 + t;
  if (t < live) {
    const std::int32_t a = cand[r];
    if (a >= 0) {
      const float* c = C + static_cast<std::int64_t>(a) * d;
      const float acc = dist::accumulate<float, dist::Family::Dot>(cert_rows + t * pitch, c, d, 0.0f);
      ch = labels[r] != a;
      labels[r] = a;
      mind[r] = dist::sq_from_dot(xn[r], cn[a], acc);
    }
  }
  add_block_count(ch, changed);
}

}  // namespace
}  // namespace tl::detail
