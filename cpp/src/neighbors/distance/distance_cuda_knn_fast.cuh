// CUDA nearest neighbours on the tensor cores (the templates of
// distance_cuda_impl.cuh): fast mode's search (cuBLAS GEMMs with
// knn_chunk_select_kernel, or the fused knn_wmma_kernel) and the certified
// search of the identical and deterministic modes, which uses it as a filter.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

#include "core/cuda/blas.cuh"
#include "core/cuda/tf32_split.cuh"
#include "core/cuda/wmma_tile.cuh"
#include "neighbors/distance/distance_cuda_knn.cuh"

namespace tl::detail {
namespace {

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
      const unsigned grid = static_cast<unsigned>(std::min<std::int64_t>(blocks_for(rows * 32, 256), 4096));
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
      merge_lists_kernel<float><<<blocks_for(rows, 128), 128, 0, stream>>>(
          lv.data(), li.data(), rows, 1, kl, filter.kind, 0.0f, fv.data(), fi.data());
      TL_CUDA_CHECK_LAUNCH("merge_lists_kernel");
      knn_certify_kernel<T><<<blocks_for(rows * 32, 256), 256, 0, stream>>>(
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

// Blocks of knn_wmma_kernel<sq> in flight per multiprocessor.
inline int knn_wmma_blocks_per_sm(bool sq) {
  int blocks = 0;
  TL_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &blocks, sq ? knn_wmma_kernel<true> : knn_wmma_kernel<false>, kWmThreads, 0));
  return std::max(blocks, 1);
}

}  // namespace
}  // namespace tl::detail
