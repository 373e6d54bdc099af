#include <algorithm>

#include "core/column_extrema/column_extrema_impl.hpp"
#include "core/cuda/chunk_rows.cuh"
#include "core/cuda/launch.cuh"
#include "core/cuda/memory.cuh"

namespace tl::detail {
namespace {

// One thread per (chunk, column): thread t handles column t % cols of chunk
// t / cols, so a warp reads consecutive columns of the same rows (coalesced
// for row-major X). Each thread walks its chunk's rows, U rows' loads in
// flight before they are pushed.
template <class T>
__global__ void extrema_partials_kernel(const T* __restrict__ X, std::int64_t rows, std::int64_t cols,
                                        std::int64_t nchunks, ColExtrema* __restrict__ partials) {
  const std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= nchunks * cols) return;
  const std::int64_t c = t / cols, j = t % cols;
  const std::int64_t r0 = c * kColStatsChunk;
  const std::int64_t r1 = min(rows, r0 + kColStatsChunk);
  ColExtrema acc;
  for_chunk_rows<8>(X, cols, j, r0, r1, [&](std::int64_t, T x) { extrema_detail::push(acc, static_cast<double>(x)); });
  partials[j * nchunks + c] = acc;
}

// One block per column: each thread merges a strided share of the column's
// chunk partials, then the block halves its results in shared memory. The
// extrema rule is order-free, so this order gives the bits of any other
// (the CPU backend merges in chunk order).
constexpr int kMergeThreads = 256;
__global__ void __launch_bounds__(kMergeThreads)
    extrema_merge_kernel(const ColExtrema* __restrict__ partials, std::int64_t nchunks, ColExtrema* __restrict__ out) {
  __shared__ ColExtrema s[kMergeThreads];
  const ColExtrema* p = partials + static_cast<std::int64_t>(blockIdx.x) * nchunks;
  ColExtrema acc;
  for (std::int64_t c = threadIdx.x; c < nchunks; c += kMergeThreads) acc = extrema_detail::merge(acc, p[c]);
  s[threadIdx.x] = acc;
  __syncthreads();
  for (int h = kMergeThreads / 2; h > 0; h /= 2) {
    if (threadIdx.x < h) s[threadIdx.x] = extrema_detail::merge(s[threadIdx.x], s[threadIdx.x + h]);
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = extrema_detail::finish(s[0]);
}

}  // namespace

template <class T>
void column_extrema_cuda(const Context& ctx, MatrixView<const T> X, ColExtrema* out) {
  const std::int64_t rows = X.rows, cols = X.cols;
  const std::int64_t nchunks = colstats_num_chunks(rows);
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  cudaStream_t stream = tl_stream(ctx);
  auto xs = stage_to_device(ctx, X);
  DeviceBuffer<ColExtrema> partials(static_cast<std::size_t>(nchunks * cols), dev);
  DeviceBuffer<ColExtrema> res(static_cast<std::size_t>(cols), dev);
  const int block = 256;
  const std::int64_t nthreads = nchunks * cols;
  extrema_partials_kernel<T><<<blocks_for(nthreads, block), block, 0, stream>>>(
      xs.view.data, rows, cols, nchunks, partials.data());
  TL_CUDA_CHECK_LAUNCH("extrema_partials_kernel");
  extrema_merge_kernel<<<static_cast<unsigned>(cols), kMergeThreads, 0, stream>>>(partials.data(), nchunks, res.data());
  TL_CUDA_CHECK_LAUNCH("extrema_merge_kernel");
  TL_CUDA_CHECK(cudaMemcpyAsync(out, res.data(), sizeof(ColExtrema) * cols, cudaMemcpyDeviceToHost, stream));
  TL_CUDA_CHECK(cudaStreamSynchronize(stream));
}

template void column_extrema_cuda<float>(const Context&, MatrixView<const float>, ColExtrema*);
template void column_extrema_cuda<double>(const Context&, MatrixView<const double>, ColExtrema*);

}  // namespace tl::detail
