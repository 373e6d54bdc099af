// Isolation-forest scoring on the GPU: one thread per (row, tree) walks the
// flattened tree and writes the leaf's path length; then one thread per row
// sums its trees' path lengths in tree order and forms the score, with the
// same shared arithmetic as the CPU backend (iforest_common.hpp), so the
// scores are the CPU's bits. The trees themselves are built on the host.
#include <algorithm>
#include <vector>

#include "core/cuda/kit.cuh"
#include "ensemble/iforest/iforest_common.hpp"

namespace tl::iforest_detail {
using namespace tl::cuda_kit;

namespace {

template <class T>
__global__ void path_kernel(const T* __restrict__ X, std::int64_t i0, std::int64_t nb, std::int64_t cols,
                            std::int64_t n_trees, const std::int64_t* __restrict__ offsets,
                            const std::int64_t* __restrict__ left, const std::int64_t* __restrict__ right,
                            const std::int64_t* __restrict__ feature, const double* __restrict__ threshold,
                            const double* __restrict__ path, double* __restrict__ out) {
  const std::int64_t q = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (q >= nb * n_trees) return;
  const std::int64_t i = i0 + q / n_trees, t = q % n_trees, o = offsets[t];
  out[q] = path[o + forest_detail::tree_leaf(X + i * cols, 1, left + o, right + o, feature + o, threshold + o)];
}

__global__ void sum_kernel(const double* __restrict__ paths, std::int64_t nb, std::int64_t n_trees, double den,
                           double* __restrict__ out) {
  const std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= nb) return;
  const double* p = paths + r * n_trees;
  double total = 0.0;  // in tree order, as the CPU backend
  for (std::int64_t t = 0; t < n_trees; ++t) total = tl::num::add(total, p[t]);
  out[r] = score_from_total(total, den);
}

}  // namespace

template <class T>
void score_cuda(const Context& ctx, MatrixView<const T> X, std::int64_t n_trees, const std::int64_t* offsets,
                const std::int64_t* left, const std::int64_t* right, const std::int64_t* feature,
                const double* threshold, const double* path, double den, double* out) {
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  cudaStream_t stream = tl_stream(ctx);
  auto xs = stage_to_device(ctx, X);
  const std::size_t nodes = static_cast<std::size_t>(offsets[n_trees]);
  auto d_off = upload_async(offsets, static_cast<std::size_t>(n_trees + 1), dev, stream);
  auto d_l = upload_async(left, nodes, dev, stream);
  auto d_r = upload_async(right, nodes, dev, stream);
  auto d_f = upload_async(feature, nodes, dev, stream);
  auto d_t = upload_async(threshold, nodes, dev, stream);
  auto d_p = upload_async(path, nodes, dev, stream);
  // Rows in batches whose (row, tree) path lengths fit 256 MiB.
  const std::int64_t per_row = std::max<std::int64_t>(n_trees, 1);
  const std::int64_t batch = std::max<std::int64_t>(1, std::min<std::int64_t>(X.rows, (std::int64_t(32) << 20) / per_row));
  DeviceBuffer<double> d_paths(static_cast<std::size_t>(batch * per_row), dev);
  DeviceBuffer<double> d_out(static_cast<std::size_t>(X.rows), dev);
  const int block = 256;
  for (std::int64_t i0 = 0; i0 < X.rows; i0 += batch) {
    const std::int64_t nb = std::min(batch, X.rows - i0);
    if (n_trees > 0) {
      path_kernel<T><<<blocks_for(nb * n_trees, block), block, 0, stream>>>(
          xs.view.data, i0, nb, X.cols, n_trees, d_off.data(), d_l.data(), d_r.data(), d_f.data(), d_t.data(),
          d_p.data(), d_paths.data());
      TL_CUDA_CHECK_LAUNCH("iforest path_kernel");
    }
    sum_kernel<<<blocks_for(nb, block), block, 0, stream>>>(d_paths.data(), nb, n_trees, den, d_out.data() + i0);
    TL_CUDA_CHECK_LAUNCH("iforest sum_kernel");
  }
  download_async(out, d_out.data(), static_cast<std::size_t>(X.rows), stream);
  TL_CUDA_CHECK(cudaStreamSynchronize(stream));
}

#define TL_IFOREST_CUDA_INST(T)                                                                                \
  template void score_cuda<T>(const Context&, MatrixView<const T>, std::int64_t, const std::int64_t*,          \
                              const std::int64_t*, const std::int64_t*, const std::int64_t*, const double*,    \
                              const double*, double, double*);
TL_IFOREST_CUDA_INST(float)
TL_IFOREST_CUDA_INST(double)
#undef TL_IFOREST_CUDA_INST

}  // namespace tl::iforest_detail
