// CUDA backend of kernel density. A block of 256 threads takes kQB queries
// and one chunk of 2048 training rows: thread l is lane l of the canonical
// order (core/reduce.hpp) and folds, for s = 0..7, the terms of training row
// 2048 c + 256 s + l into its kQB lane partials; the lane tree runs in
// shared memory with the pairing of tl::tree_reduce_inplace. Features are
// staged through shared memory kFK at a time; each pair's accumulator is the
// chain of distance.hpp (from +0.0, features in increasing order), as on the
// CPU. The chunk tree and the final log run on the host (kde.cpp).
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "core/cuda/check.cuh"
#include "core/cuda/launch.cuh"
#include "core/cuda/memory.cuh"
#include "neighbors/kde/kde_impl.hpp"

namespace tl::detail {
namespace kde_cuda {

inline constexpr int kThreads = static_cast<int>(kde::kLanes);  // 256
inline constexpr int kQB = 16;                                  // queries per block
inline constexpr int kFK = 16;                                  // features per staging step
inline constexpr int kYPitch = kThreads + 1;                    // padded rows of the staged training tile

template <class T, dist::Family F>
__global__ void __launch_bounds__(kThreads)
    chunk_kernel(const T* __restrict__ X, std::int64_t m, const T* __restrict__ Y, std::int64_t n, std::int64_t d,
                 const T* __restrict__ w, kde::Params<T> c, int pass_i, const T* __restrict__ shift,
                 T* __restrict__ partials, std::int64_t nchunks) {
  static_assert(kFK * kYPitch >= kQB * kThreads, "the lane tree reuses the training tile's memory");
  __shared__ T xs[kQB][kFK];
  __shared__ T ys[kFK * kYPitch];
  const kde::Pass pass = static_cast<kde::Pass>(pass_i);
  const int l = threadIdx.x;
  const std::int64_t q0 = static_cast<std::int64_t>(blockIdx.x) * kQB;
  const std::int64_t ch = blockIdx.y;
  const bool has_w = w != nullptr;
  T sh[kQB], lp[kQB];
#pragma unroll
  for (int q = 0; q < kQB; ++q) {
    sh[q] = (shift != nullptr && q0 + q < m) ? shift[q0 + q] : T(0);
    lp[q] = kde::identity<T>(pass);
  }
  for (int s = 0; s < static_cast<int>(kde::kLaneLen); ++s) {
    const std::int64_t base = ch * kde::kChunk + static_cast<std::int64_t>(s) * kThreads;
    if (base >= n) break;  // the same for every thread of the block
    const std::int64_t j = base + l;
    T acc[kQB];
#pragma unroll
    for (int q = 0; q < kQB; ++q) acc[q] = T(0);
    for (std::int64_t f0 = 0; f0 < d; f0 += kFK) {
      const int nf = static_cast<int>(d - f0 < kFK ? d - f0 : kFK);
      __syncthreads();  // the previous step's reads are done
      for (int idx = l; idx < kQB * kFK; idx += kThreads) {
        const int q = idx / kFK, f = idx % kFK;
        xs[q][f] = (q0 + q < m && f < nf) ? X[(q0 + q) * d + f0 + f] : T(0);
      }
      for (int idx = l; idx < kThreads * kFK; idx += kThreads) {
        const int r = idx / kFK, f = idx % kFK;
        ys[f * kYPitch + r] = (base + r < n && f < nf) ? Y[(base + r) * d + f0 + f] : T(0);
      }
      __syncthreads();
      for (int f = 0; f < nf; ++f) {
        const T y = ys[f * kYPitch + l];
#pragma unroll
        for (int q = 0; q < kQB; ++q) acc[q] = dist::Step<T, F>::apply(xs[q][f], y, acc[q], c.p);
      }
    }
    if (j < n) {
      const T wj = has_w ? w[j] : T(1);
#pragma unroll
      for (int q = 0; q < kQB; ++q) lp[q] = kde::merge(pass, lp[q], kde::term(c, pass, acc[q], has_w, wj, sh[q]));
    }
  }
  // Lane tree: red[q * 256 + l] = lane l's partial of query q; level by level
  // p[i] = merge(p[2i], p[2i + 1]) (256 is a power of two: no odd carry).
  __syncthreads();
  T* red = ys;
#pragma unroll
  for (int q = 0; q < kQB; ++q) red[q * kThreads + l] = lp[q];
  __syncthreads();
  for (int half = kThreads / 2; half >= 1; half >>= 1) {
    T v[kQB];
    if (l < half) {
#pragma unroll
      for (int q = 0; q < kQB; ++q) v[q] = kde::merge(pass, red[q * kThreads + 2 * l], red[q * kThreads + 2 * l + 1]);
    }
    __syncthreads();
    if (l < half) {
#pragma unroll
      for (int q = 0; q < kQB; ++q) red[q * kThreads + l] = v[q];
    }
    __syncthreads();
  }
  if (l < kQB && q0 + l < m) partials[(q0 + l) * nchunks + ch] = red[l * kThreads];
}

template <class T>
void launch(dim3 grid, cudaStream_t stream, const T* X, std::int64_t m, const T* Y, std::int64_t n, std::int64_t d,
            const T* w, const kde::Params<T>& c, kde::Pass pass, const T* shift, T* partials, std::int64_t nchunks) {
  const int pi = static_cast<int>(pass);
  switch (kde::family_of(c.metric)) {
    case dist::Family::L1:
      chunk_kernel<T, dist::Family::L1><<<grid, kThreads, 0, stream>>>(X, m, Y, n, d, w, c, pi, shift, partials, nchunks);
      break;
    case dist::Family::Linf:
      chunk_kernel<T, dist::Family::Linf><<<grid, kThreads, 0, stream>>>(X, m, Y, n, d, w, c, pi, shift, partials, nchunks);
      break;
    case dist::Family::Lp:
      chunk_kernel<T, dist::Family::Lp><<<grid, kThreads, 0, stream>>>(X, m, Y, n, d, w, c, pi, shift, partials, nchunks);
      break;
    default:
      chunk_kernel<T, dist::Family::L2><<<grid, kThreads, 0, stream>>>(X, m, Y, n, d, w, c, pi, shift, partials, nchunks);
      break;
  }
  TL_CUDA_CHECK_LAUNCH("kde chunk_kernel");
}

}  // namespace kde_cuda

template <class T>
void kde_chunk_partials_cuda(const Context& ctx, MatrixView<const T> train, const T* weights,
                             MatrixView<const T> queries, const kde::Params<T>& c, kde::Pass pass, const T* shift,
                             T* partials) {
  DeviceGuard guard(ctx.device().id);
  const int dev = ctx.device().id;
  cudaStream_t stream = tl_stream(ctx);
  const std::int64_t n = train.rows, d = train.cols, m = queries.rows, nchunks = reduce_num_chunks(n);
  TL_REQUIRE(nchunks <= 65535, ValueError, "KernelDensity on the GPU: at most ", std::int64_t(65535) * kde::kChunk,
             " training rows; got ", n);
  StagedMatrix<T> Y = stage_to_device(ctx, train);
  StagedMatrix<T> X = stage_to_device(ctx, queries);
  DeviceBuffer<T> w;
  if (weights != nullptr) {
    w = DeviceBuffer<T>(static_cast<std::size_t>(n), dev);
    copy_h2d(ctx, w.data(), weights, sizeof(T) * n);
  }
  // Queries per launch: whole blocks, about 16M partials at a time.
  const std::int64_t per = std::max<std::int64_t>(kde_cuda::kQB, (std::int64_t(16) << 20) / nchunks / kde_cuda::kQB *
                                                                     kde_cuda::kQB);
  const std::int64_t batch = std::min(per, m);
  DeviceBuffer<T> part(static_cast<std::size_t>(batch * nchunks), dev);
  DeviceBuffer<T> sh;
  if (shift != nullptr) sh = DeviceBuffer<T>(static_cast<std::size_t>(batch), dev);
  for (std::int64_t r0 = 0; r0 < m; r0 += batch) {
    const std::int64_t rows = std::min(batch, m - r0);
    if (shift != nullptr) copy_h2d(ctx, sh.data(), shift + r0, sizeof(T) * rows);
    const dim3 grid(static_cast<unsigned>((rows + kde_cuda::kQB - 1) / kde_cuda::kQB), static_cast<unsigned>(nchunks));
    kde_cuda::launch<T>(grid, stream, X.view.data + r0 * d, rows, Y.view.data, n, d, weights ? w.data() : nullptr, c,
                        pass, shift ? sh.data() : nullptr, part.data(), nchunks);
    copy_d2h(ctx, partials + r0 * nchunks, part.data(), sizeof(T) * rows * nchunks);
  }
}

}  // namespace tl::detail
