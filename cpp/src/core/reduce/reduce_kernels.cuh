// CUDA kernels of the canonical reductions (order: twinlearn/core/reduce.hpp).
// Usable by any CUDA code with its own operation (see reduce_common.hpp for
// the Op interface): reduce_columns_device() leaves one result per column in
// device memory.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

#include "core/cuda/launch.cuh"
#include "core/cuda/memory.cuh"
#include "core/cuda/stage.cuh"
#include "core/reduce/reduce_common.hpp"

namespace tl::detail::reduce_gpu {

constexpr int kThreads = 256;  // = kReduceLanes: one thread per lane
static_assert(kThreads == kReduceLanes, "a block computes one chunk, one thread per lane");
constexpr int kTileCols = 16;  // columns per block in the matrix kernel

// __shfl_down_sync of any trivially copyable value, 32 bits at a time.
template <class A>
__device__ __forceinline__ A shfl_down_any(const A& v, int delta) {
  static_assert(sizeof(A) % 4 == 0, "shuffled values must be a multiple of 4 bytes");
  constexpr int kWords = sizeof(A) / 4;
  int w[kWords];
  memcpy(w, &v, sizeof(A));
#pragma unroll
  for (int i = 0; i < kWords; ++i) w[i] = __shfl_down_sync(0xffffffffu, w[i], delta);
  A r;
  memcpy(&r, w, sizeof(A));
  return r;
}

// The canonical pairwise tree over 256 values, value t held by thread t of a
// 256-thread block; the result is left in thread 0. Level by level, element i
// of the next level is merge(e[2i], e[2i+1]): in a warp, lane i (a multiple of
// 2w) merges with lane i + w via shuffles (w = 1, 2, 4, 8, 16), then warp 0
// does the same over the 8 warp results. sh: 8 values of shared scratch.
// Every thread of the block must call it.
template <class Op>
__device__ __forceinline__ typename Op::acc_type block_tree_256(typename Op::acc_type v,
                                                                typename Op::acc_type* sh) {
  using Acc = typename Op::acc_type;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int w = 1; w < 32; w <<= 1) {
    const Acc o = shfl_down_any(v, w);
    if ((lane & (2 * w - 1)) == 0) v = Op::merge(v, o);
  }
  if (lane == 0) sh[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < kThreads / 32 ? sh[lane] : Op::identity();
#pragma unroll
    for (int w = 1; w < kThreads / 32; w <<= 1) {
      const Acc o = shfl_down_any(v, w);
      if ((lane & (2 * w - 1)) == 0) v = Op::merge(v, o);
    }
  }
  return v;
}

// Chunk partials of a vector x (and y for binary operations), n entries.
// Mapping: one block per chunk (grid-stride over chunks); thread l is lane l
// and reads x[2048c + l + 256s], s = 0..7, so each load instruction of a warp
// touches 32 consecutive elements. The loads of a block's next chunk are
// issued before the current chunk's tree, so that memory traffic continues
// through the tree's barriers. partials[c] = the chunk's partial.
template <class Op>
__global__ void __launch_bounds__(kThreads)
    vector_chunk_kernel(const typename Op::value_type* __restrict__ x, const typename Op::value_type* __restrict__ y,
                        std::int64_t n, std::int64_t nchunks, typename Op::acc_type* __restrict__ partials) {
  using T = typename Op::value_type;
  using Acc = typename Op::acc_type;
  __shared__ alignas(16) unsigned char raw[(kThreads / 32) * sizeof(Acc)];
  Acc* sh = reinterpret_cast<Acc*>(raw);
  T xv[kReduceLaneLen], yv[kReduceLaneLen];
  auto load = [&](std::int64_t c) {
    const std::int64_t base = c * kReduceChunk + threadIdx.x;
    if ((c + 1) * kReduceChunk <= n) {
#pragma unroll
      for (int s = 0; s < kReduceLaneLen; ++s) {
        xv[s] = x[base + s * kReduceLanes];
        yv[s] = Op::kBinary ? y[base + s * kReduceLanes] : T(0);
      }
    } else {
#pragma unroll
      for (int s = 0; s < kReduceLaneLen; ++s) {
        const std::int64_t i = base + s * kReduceLanes;
        xv[s] = i < n ? x[i] : T(0);
        yv[s] = (Op::kBinary && i < n) ? y[i] : T(0);
      }
    }
  };
  std::int64_t c = blockIdx.x;
  if (c < nchunks) load(c);
  while (c < nchunks) {
    const std::int64_t base = c * kReduceChunk + threadIdx.x;
    Acc a = Op::identity();
#pragma unroll
    for (int s = 0; s < kReduceLaneLen; ++s) {
      const std::int64_t i = base + s * kReduceLanes;
      if (i < n) Op::push(a, xv[s], yv[s], i);
    }
    const std::int64_t next = c + gridDim.x;
    if (next < nchunks) load(next);
    a = block_tree_256<Op>(a, sh);
    if (threadIdx.x == 0) partials[c] = a;
    __syncthreads();  // sh is reused by the next chunk
    c = next;
  }
}

// Chunk partials of the columns of a C-contiguous matrix X (rows x cols).
// Mapping: one block per (chunk, tile of 16 columns), grid-stride over both;
// thread t handles column tc = t % 16 of the tile and lane group g = t / 16,
// which owns lanes 16g .. 16g+15 (a warp reads two rows of 16 consecutive
// columns per load). The thread merges its 16 lanes with the in-register
// canonical tree, then the 16 lane groups of a column are merged in shared
// memory by the same tree: together the 256-lane tree of the chunk.
// partials[j * nchunks + c] = column j's partial of chunk c.
template <class Op>
__global__ void __launch_bounds__(kThreads)
    matrix_chunk_kernel(const typename Op::value_type* __restrict__ X, std::int64_t rows, std::int64_t cols,
                        std::int64_t nchunks, std::int64_t ntiles, typename Op::acc_type* __restrict__ partials) {
  using T = typename Op::value_type;
  using Acc = typename Op::acc_type;
  constexpr int TC = kTileCols, G = kThreads / kTileCols;
  __shared__ alignas(16) unsigned char raw[kThreads * sizeof(Acc)];
  Acc* sh = reinterpret_cast<Acc*>(raw);  // sh[g * TC + tc]
  const int tc = threadIdx.x % TC, g = threadIdx.x / TC;
  for (std::int64_t task = blockIdx.x; task < nchunks * ntiles; task += gridDim.x) {
    const std::int64_t chunk = task / ntiles;
    const std::int64_t col = (task % ntiles) * TC + tc;
    const bool col_ok = col < cols;
    const std::int64_t base = chunk * kReduceChunk + g * TC;
    Acc acc[TC];
#pragma unroll
    for (int q = 0; q < TC; ++q) {
      acc[q] = Op::identity();
#pragma unroll
      for (int s = 0; s < kReduceLaneLen; ++s) {
        const std::int64_t r = base + q + s * kReduceLanes;
        if (col_ok && r < rows) Op::push(acc[q], X[r * cols + col], T(0), r);
      }
    }
#pragma unroll
    for (int w = 1; w < TC; w <<= 1) {
#pragma unroll
      for (int q = 0; q < TC; q += 2 * w) acc[q] = Op::merge(acc[q], acc[q + w]);
    }
    sh[g * TC + tc] = acc[0];
    __syncthreads();
#pragma unroll
    for (int w = 1; w < G; w <<= 1) {
      if ((g & (2 * w - 1)) == 0) sh[g * TC + tc] = Op::merge(sh[g * TC + tc], sh[(g + w) * TC + tc]);
      __syncthreads();
    }
    if (g == 0 && col_ok) partials[col * nchunks + chunk] = sh[tc];
    __syncthreads();  // sh is reused by the next task
  }
}

// One level of 256-wide groups of the canonical chunk tree, per column.
// Mapping: one block per (column, group of 256 consecutive partials),
// grid-stride; thread t holds partial 256*grp + t (the identity past n).
// Because the pairwise tree of tree.hpp merges aligned power-of-two ranges,
// reducing aligned groups of 256 and then the group results is the same tree;
// the identity padding changes no bits (merge(a, identity) == a).
// out[j * ngroups + grp] = the group's partial.
template <class Op>
__global__ void __launch_bounds__(kThreads)
    tree_kernel(const typename Op::acc_type* __restrict__ in, std::int64_t n, std::int64_t cols,
                std::int64_t ngroups, typename Op::acc_type* __restrict__ out) {
  using Acc = typename Op::acc_type;
  __shared__ alignas(16) unsigned char raw[(kThreads / 32) * sizeof(Acc)];
  Acc* sh = reinterpret_cast<Acc*>(raw);
  for (std::int64_t task = blockIdx.x; task < cols * ngroups; task += gridDim.x) {
    const std::int64_t j = task / ngroups, grp = task % ngroups;
    const std::int64_t i = grp * kThreads + threadIdx.x;
    Acc v = i < n ? in[j * n + i] : Op::identity();
    v = block_tree_256<Op>(v, sh);
    if (threadIdx.x == 0) out[j * ngroups + grp] = v;
    __syncthreads();
  }
}

// The canonical reduction of each column of X (rows x cols, C-contiguous,
// device memory; rows >= 1), with Y (rows entries, device) as the second
// input of a binary operation. Leaves cols results in `result` (device memory,
// cols entries) and returns the buffer holding them; the work is queued on
// stream and not waited for.
template <class Op>
DeviceBuffer<typename Op::acc_type> reduce_columns_device(const typename Op::value_type* X,
                                                          const typename Op::value_type* Y, std::int64_t rows,
                                                          std::int64_t cols, int device, cudaStream_t stream) {
  using Acc = typename Op::acc_type;
  TL_REQUIRE(!Op::kBinary || cols == 1, ValueError, "binary reductions take vectors");
  const std::int64_t nchunks = reduce_num_chunks(rows);
  const std::int64_t max_blocks = static_cast<std::int64_t>(sm_count()) * 8;
  auto grid = [&](std::int64_t tasks) { return static_cast<unsigned>(std::max<std::int64_t>(1, std::min(tasks, max_blocks))); };
  DeviceBuffer<Acc> a(static_cast<std::size_t>(nchunks * cols), device);
  DeviceBuffer<Acc> b(static_cast<std::size_t>(((nchunks + kThreads - 1) / kThreads) * cols), device);
  if (cols == 1) {
    vector_chunk_kernel<Op><<<grid(nchunks), kThreads, 0, stream>>>(X, Y, rows, nchunks, a.data());
    TL_CUDA_CHECK_LAUNCH("vector_chunk_kernel");
  } else if constexpr (!Op::kBinary) {
    const std::int64_t ntiles = (cols + kTileCols - 1) / kTileCols;
    matrix_chunk_kernel<Op><<<grid(nchunks * ntiles), kThreads, 0, stream>>>(X, rows, cols, nchunks, ntiles,
                                                                              a.data());
    TL_CUDA_CHECK_LAUNCH("matrix_chunk_kernel");
  }
  std::int64_t n = nchunks;
  bool in_a = true;
  while (n > 1) {
    const std::int64_t ng = (n + kThreads - 1) / kThreads;
    const Acc* src = in_a ? a.data() : b.data();
    Acc* dst = in_a ? b.data() : a.data();
    tree_kernel<Op><<<grid(ng * cols), kThreads, 0, stream>>>(src, n, cols, ng, dst);
    TL_CUDA_CHECK_LAUNCH("tree_kernel");
    in_a = !in_a;
    n = ng;
  }
  return in_a ? std::move(a) : std::move(b);
}

}  // namespace tl::detail::reduce_gpu
