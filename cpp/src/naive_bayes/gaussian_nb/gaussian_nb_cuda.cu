#include <algorithm>

#include "core/cuda/block_tree.cuh"
#include "core/cuda/lane_reduce.cuh"
#include "core/cuda/launch.cuh"
#include "core/cuda/memory.cuh"
#include "naive_bayes/gaussian_nb/gaussian_nb_common.hpp"

namespace tl::detail {
namespace {

using colstats_detail::ChunkAcc;

// One thread per (chunk, column): thread t handles column t % cols of chunk
// t / cols. A chunk is up to kColStatsChunk consecutive entries of perm
// within one class; the thread walks them in order, so a warp reads
// consecutive columns of the same rows (coalesced for row-major X).
template <class T>
__global__ void class_partials_kernel(const T* __restrict__ X, const T* __restrict__ w,
                                      const std::int64_t* __restrict__ perm,
                                      const std::int64_t* __restrict__ class_start,
                                      const std::int64_t* __restrict__ chunk_base,
                                      const std::int32_t* __restrict__ chunk_class, std::int64_t cols,
                                      std::int64_t nchunks, ColStat* __restrict__ partials) {
  const std::int64_t tid = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (tid >= nchunks * cols) return;
  const std::int64_t t = tid / cols, j = tid % cols;
  const std::int64_t c = chunk_class[t];
  const std::int64_t p0 = class_start[c] + (t - chunk_base[c]) * kColStatsChunk;
  const std::int64_t p1 = min(class_start[c + 1], p0 + kColStatsChunk);
  ChunkAcc acc;
  for (std::int64_t p = p0; p < p1; ++p) {
    const std::int64_t i = perm[p];
    const double wi = w ? static_cast<double>(w[i]) : 1.0;
    colstats_detail::push(acc, static_cast<double>(X[i * cols + j]), wi);
  }
  partials[j * nchunks + t] = colstats_detail::finish(acc);
}

// One block per (class, column) = blockIdx.x = c * cols + j: the canonical
// pairwise tree over that class's chunk partials, level by level, the
// block's threads computing one level's merges in parallel (block_tree).
__global__ void class_tree_kernel(ColStat* __restrict__ a, ColStat* __restrict__ b,
                                  const std::int64_t* __restrict__ chunk_base, std::int64_t cols, std::int64_t nchunks,
                                  ColStat* __restrict__ out) {
  const std::int64_t e = blockIdx.x;
  const std::int64_t c = e / cols, j = e % cols;
  const std::int64_t n = chunk_base[c + 1] - chunk_base[c];
  if (n == 0) {
    if (threadIdx.x == 0) out[e] = ColStat{};
    return;
  }
  const ColStat* r = block_tree(a + j * nchunks + chunk_base[c], b + j * nchunks + chunk_base[c], n,
                                [](const ColStat& x, const ColStat& y) { return colstats_detail::merge(x, y); });
  if (threadIdx.x == 0) out[e] = r[0];
}

// One warp per (sample, class) pair, grid-stride over the pairs (pair
// q = i * C + c): lane l reads features l, l + 32, ... of row i (coalesced)
// and the warp sums the terms in the canonical lane order.
template <class T>
__global__ void jll_kernel(const T* __restrict__ X, std::int64_t rows, std::int64_t cols, std::int64_t n_classes,
                           const double* __restrict__ theta, const double* __restrict__ var,
                           const double* __restrict__ joint, const double* __restrict__ nconst,
                           double* __restrict__ out) {
  const std::int64_t warps_per_block = blockDim.x / kLanes;
  const std::int64_t warp = static_cast<std::int64_t>(blockIdx.x) * warps_per_block + threadIdx.x / kLanes;
  const std::int64_t nwarps = static_cast<std::int64_t>(gridDim.x) * warps_per_block;
  const int lane = static_cast<int>(threadIdx.x) & (kLanes - 1);
  for (std::int64_t q = warp; q < rows * n_classes; q += nwarps) {
    const std::int64_t i = q / n_classes, c = q % n_classes;
    const T* xi = X + i * cols;
    const double* th = theta + c * cols;
    const double* va = var + c * cols;
    const double s = warp_lane_reduce(
        cols, 0.0, [&](std::int64_t j) { return jll_term(static_cast<double>(xi[j]), th[j], va[j]); }, lane_ops::Add{});
    if (lane == 0) out[q] = jll_finish(s, joint[c], nconst[c]);
  }
}

template <class V>
DeviceBuffer<V> to_device(const std::vector<V>& v, int dev, cudaStream_t stream) {
  DeviceBuffer<V> d(v.size(), dev);
  if (!v.empty())
    TL_CUDA_CHECK(cudaMemcpyAsync(d.data(), v.data(), sizeof(V) * v.size(), cudaMemcpyHostToDevice, stream));
  return d;
}

}  // namespace

template <class T>
void class_column_stats_cuda(const Context& ctx, MatrixView<const T> X, VectorView<const T> w,
                             const ClassLayout& layout, std::int64_t n_classes, ColStat* out) {
  const std::int64_t cols = X.cols, nchunks = layout.n_chunks;
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  cudaStream_t stream = tl_stream(ctx);
  auto xs = stage_to_device(ctx, X);
  auto ws = stage_to_device(ctx, MatrixView<const T>(w.data, w.data ? w.size : 0, 1, w.device));
  const T* wptr = w.data ? ws.view.data : nullptr;
  auto perm = to_device(layout.perm, dev, stream);
  auto class_start = to_device(layout.class_start, dev, stream);
  auto chunk_base = to_device(layout.chunk_base, dev, stream);
  auto chunk_class = to_device(layout.chunk_class, dev, stream);
  DeviceBuffer<ColStat> pa(static_cast<std::size_t>(nchunks * cols), dev);
  DeviceBuffer<ColStat> pb(static_cast<std::size_t>(nchunks * cols), dev);
  DeviceBuffer<ColStat> res(static_cast<std::size_t>(n_classes * cols), dev);
  const int block = 256;
  const std::int64_t nthreads = nchunks * cols;
  class_partials_kernel<T><<<blocks_for(nthreads, block), block, 0, stream>>>(
      xs.view.data, wptr, perm.data(), class_start.data(), chunk_base.data(), chunk_class.data(), cols, nchunks,
      pa.data());
  TL_CUDA_CHECK_LAUNCH("class_partials_kernel");
  std::int64_t max_chunks = 0;
  for (std::int64_t c = 0; c < n_classes; ++c)
    max_chunks = std::max(max_chunks, layout.chunk_base[c + 1] - layout.chunk_base[c]);
  const int tblock = static_cast<int>(std::min<std::int64_t>(256, std::max<std::int64_t>(32, max_chunks / 2)));
  class_tree_kernel<<<static_cast<unsigned>(n_classes * cols), tblock, 0, stream>>>(
      pa.data(), pb.data(), chunk_base.data(), cols, nchunks, res.data());
  TL_CUDA_CHECK_LAUNCH("class_tree_kernel");
  TL_CUDA_CHECK(cudaMemcpyAsync(out, res.data(), sizeof(ColStat) * n_classes * cols, cudaMemcpyDeviceToHost, stream));
  TL_CUDA_CHECK(cudaStreamSynchronize(stream));
}

template <class T>
void gaussian_nb_jll_cuda(const Context& ctx, MatrixView<const T> X, const double* theta, const double* var,
                          const double* joint, const double* nconst, std::int64_t n_classes, double* out) {
  const std::int64_t rows = X.rows, cols = X.cols;
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  cudaStream_t stream = tl_stream(ctx);
  auto xs = stage_to_device(ctx, X);
  // theta, var, joint, nconst side by side in one device buffer.
  const std::int64_t pc = n_classes * cols;
  DeviceBuffer<double> params(static_cast<std::size_t>(2 * pc + 2 * n_classes), dev);
  double* d_theta = params.data();
  double* d_var = d_theta + pc;
  double* d_joint = d_var + pc;
  double* d_nconst = d_joint + n_classes;
  if (pc) {
    TL_CUDA_CHECK(cudaMemcpyAsync(d_theta, theta, sizeof(double) * pc, cudaMemcpyHostToDevice, stream));
    TL_CUDA_CHECK(cudaMemcpyAsync(d_var, var, sizeof(double) * pc, cudaMemcpyHostToDevice, stream));
  }
  TL_CUDA_CHECK(cudaMemcpyAsync(d_joint, joint, sizeof(double) * n_classes, cudaMemcpyHostToDevice, stream));
  TL_CUDA_CHECK(cudaMemcpyAsync(d_nconst, nconst, sizeof(double) * n_classes, cudaMemcpyHostToDevice, stream));
  DeviceBuffer<double> d_out(static_cast<std::size_t>(rows * n_classes), dev);
  const int sms = sm_count(dev);
  const int block = 256;  // 8 warps
  const std::int64_t want = (rows * n_classes + block / kLanes - 1) / (block / kLanes);
  const unsigned grid = static_cast<unsigned>(std::min<std::int64_t>(want, static_cast<std::int64_t>(sms) * 32));
  jll_kernel<T><<<grid, block, 0, stream>>>(xs.view.data, rows, cols, n_classes, d_theta, d_var, d_joint, d_nconst,
                                            d_out.data());
  TL_CUDA_CHECK_LAUNCH("jll_kernel");
  TL_CUDA_CHECK(cudaMemcpyAsync(out, d_out.data(), sizeof(double) * rows * n_classes, cudaMemcpyDeviceToHost, stream));
  TL_CUDA_CHECK(cudaStreamSynchronize(stream));
}

template void class_column_stats_cuda<float>(const Context&, MatrixView<const float>, VectorView<const float>,
                                             const ClassLayout&, std::int64_t, ColStat*);
template void class_column_stats_cuda<double>(const Context&, MatrixView<const double>, VectorView<const double>,
                                              const ClassLayout&, std::int64_t, ColStat*);
template void gaussian_nb_jll_cuda<float>(const Context&, MatrixView<const float>, const double*, const double*,
                                          const double*, const double*, std::int64_t, double*);
template void gaussian_nb_jll_cuda<double>(const Context&, MatrixView<const double>, const double*, const double*,
                                           const double*, const double*, std::int64_t, double*);

}  // namespace tl::detail
