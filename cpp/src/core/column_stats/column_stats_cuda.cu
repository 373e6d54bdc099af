#include <algorithm>
#include <vector>

#include "core/column_stats/column_stats_impl.hpp"
#include "core/cuda/block_tree.cuh"
#include "core/cuda/chunk_rows.cuh"
#include "core/cuda/launch.cuh"
#include "core/cuda/memory.cuh"
#include "twinlearn/core/tree.hpp"

namespace tl::detail {
namespace {

using colstats_detail::ChunkAcc;

// One thread per (chunk, column): thread t handles column t % cols of chunk
// t / cols, so a warp reads consecutive columns of the same rows (coalesced
// for row-major X). Each thread walks its chunk's rows in order.
template <class T>
__global__ void chunk_partials_kernel(const T* __restrict__ X, const T* __restrict__ w, std::int64_t rows,
                                      std::int64_t cols, std::int64_t nchunks, ColStat* __restrict__ partials) {
  const std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= nchunks * cols) return;
  const std::int64_t c = t / cols, j = t % cols;
  const std::int64_t r0 = c * kColStatsChunk;
  const std::int64_t r1 = min(rows, r0 + kColStatsChunk);
  ChunkAcc acc;
  // 8 loads in flight per thread before they are accumulated (in row order).
  for_chunk_rows<8>(X, cols, j, r0, r1, [&](std::int64_t i, T x) {
    colstats_detail::push(acc, static_cast<double>(x), w ? static_cast<double>(w[i]) : 1.0);
  });
  partials[j * nchunks + c] = colstats_detail::finish(acc);
}

// One block per column: the canonical pairwise tree, level by level, with the
// block's threads computing one level's merges in parallel (block_tree).
__global__ void tree_merge_kernel(ColStat* __restrict__ a, ColStat* __restrict__ b, std::int64_t nchunks,
                                  ColStat* __restrict__ out) {
  const std::int64_t j = blockIdx.x;
  const ColStat* r = block_tree(a + j * nchunks, b + j * nchunks, nchunks,
                                [](const ColStat& x, const ColStat& y) { return colstats_detail::merge(x, y); });
  if (threadIdx.x == 0) out[j] = r[0];
}

}  // namespace

template <class T>
void column_stats_cuda(const Context& ctx, MatrixView<const T> X, VectorView<const T> w, ColStat* out) {
  const std::int64_t rows = X.rows, cols = X.cols;
  if (cols == 0) return;
  const std::int64_t nchunks = colstats_num_chunks(rows);
  if (nchunks == 0) {
    for (std::int64_t j = 0; j < cols; ++j) out[j] = ColStat{};
    return;
  }
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  cudaStream_t stream = tl_stream(ctx);
  auto xs = stage_to_device(ctx, X);
  auto ws = stage_to_device(ctx, MatrixView<const T>(w.data, w.data ? w.size : 0, 1, w.device));
  const T* wptr = w.data ? ws.view.data : nullptr;
  DeviceBuffer<ColStat> pa(static_cast<std::size_t>(nchunks * cols), dev);
  DeviceBuffer<ColStat> pb(static_cast<std::size_t>(nchunks * cols), dev);
  DeviceBuffer<ColStat> res(static_cast<std::size_t>(cols), dev);
  const std::int64_t nthreads = nchunks * cols;
  const int block = 256;
  chunk_partials_kernel<T><<<blocks_for(nthreads, block), block, 0, stream>>>(
      xs.view.data, wptr, rows, cols, nchunks, pa.data());
  TL_CUDA_CHECK_LAUNCH("chunk_partials_kernel");
  const int tblock = static_cast<int>(std::min<std::int64_t>(256, std::max<std::int64_t>(32, nchunks / 2)));
  tree_merge_kernel<<<static_cast<unsigned>(cols), tblock, 0, stream>>>(pa.data(), pb.data(), nchunks, res.data());
  TL_CUDA_CHECK_LAUNCH("tree_merge_kernel");
  TL_CUDA_CHECK(cudaMemcpyAsync(out, res.data(), sizeof(ColStat) * cols, cudaMemcpyDeviceToHost, stream));
  TL_CUDA_CHECK(cudaStreamSynchronize(stream));
}

template void column_stats_cuda<float>(const Context&, MatrixView<const float>, VectorView<const float>, ColStat*);
template void column_stats_cuda<double>(const Context&, MatrixView<const double>, VectorView<const double>, ColStat*);

}  // namespace tl::detail
