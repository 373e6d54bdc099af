#include <algorithm>

#include "core/cuda/memory.cuh"
#include "preprocessing/standard_scaler/standard_scaler_common.hpp"

namespace tl::detail {
namespace {

// Block b handles rows [b*rows_per_block, ...) of a C-contiguous matrix; its
// threads walk the columns of each row (thread t: columns t, t+blockDim, ...),
// so a warp touches consecutive addresses. No integer division per element.
// Infinite inputs are counted with one atomicAdd per block that saw any.
// x and y may be the same array (in-place): each element is read before the
// same thread writes it, so they are not declared __restrict__.
template <class T>
__global__ void scaler_apply_kernel(const T* x, T* y, std::int64_t rows, std::int64_t cols,
                                    std::int64_t rows_per_block, const double* __restrict__ mean,
                                    const double* __restrict__ scale, bool inverse,
                                    unsigned long long* __restrict__ n_inf) {
  const std::int64_t r0 = static_cast<std::int64_t>(blockIdx.x) * rows_per_block;
  const std::int64_t r1 = min(rows, r0 + rows_per_block);
  unsigned long long local_inf = 0;
  constexpr int U = 4;  // rows in flight per thread: loads issued before the stores
  for (std::int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    std::int64_t i = r0;
    for (; i + U <= r1; i += U) {
      T v[U];
#pragma unroll
      for (int u = 0; u < U; ++u) v[u] = x[(i + u) * cols + j];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        local_inf += num::is_inf(v[u]);
        y[(i + u) * cols + j] = scaler_apply_one(v[u], mean, scale, j, inverse);
      }
    }
    for (; i < r1; ++i) {
      const T v = x[i * cols + j];
      local_inf += num::is_inf(v);
      y[i * cols + j] = scaler_apply_one(v, mean, scale, j, inverse);
    }
  }
  if (local_inf) atomicAdd(n_inf, local_inf);
}

}  // namespace

template <class T>
std::int64_t standard_scaler_apply_cuda(const Context& ctx, MatrixView<const T> X, const double* mean,
                                        const double* scale, MatrixView<T> out, bool inverse) {
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  cudaStream_t stream = tl_stream(ctx);
  TL_REQUIRE(out.is_c_contiguous(), ValueError, "StandardScaler: output must be C-contiguous");
  auto xs = stage_to_device(ctx, X);
  const std::int64_t rows = X.rows, cols = X.cols, n = X.size();
  DeviceBuffer<double> params(static_cast<std::size_t>(2 * cols), dev);
  DeviceBuffer<unsigned long long> n_inf(1, dev);
  TL_CUDA_CHECK(cudaMemsetAsync(n_inf.data(), 0, sizeof(unsigned long long), stream));
  if (mean) TL_CUDA_CHECK(cudaMemcpyAsync(params.data(), mean, sizeof(double) * cols, cudaMemcpyHostToDevice, stream));
  if (scale)
    TL_CUDA_CHECK(cudaMemcpyAsync(params.data() + cols, scale, sizeof(double) * cols, cudaMemcpyHostToDevice, stream));
  DeviceBuffer<T> staged_out;
  T* y = out.data;
  if (out.on_host()) {
    staged_out = DeviceBuffer<T>(static_cast<std::size_t>(n), dev);
    y = staged_out.data();
  }
  int sms = 0;
  TL_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const int block = static_cast<int>(std::min<std::int64_t>(256, (cols + 31) / 32 * 32));
  // Enough blocks to fill the GPU several times over; the split changes no result.
  const std::int64_t target_blocks = static_cast<std::int64_t>(sms) * 32;
  const std::int64_t rows_per_block = std::max<std::int64_t>(1, (rows + target_blocks - 1) / target_blocks);
  const unsigned grid = static_cast<unsigned>((rows + rows_per_block - 1) / rows_per_block);
  scaler_apply_kernel<T><<<grid, block, 0, stream>>>(xs.view.data, y, rows, cols, rows_per_block,
                                                     mean ? params.data() : nullptr,
                                                     scale ? params.data() + cols : nullptr, inverse, n_inf.data());
  TL_CUDA_CHECK_LAUNCH("scaler_apply_kernel");
  if (out.on_host()) TL_CUDA_CHECK(cudaMemcpyAsync(out.data, y, sizeof(T) * n, cudaMemcpyDeviceToHost, stream));
  unsigned long long h_inf = 0;
  TL_CUDA_CHECK(cudaMemcpyAsync(&h_inf, n_inf.data(), sizeof(h_inf), cudaMemcpyDeviceToHost, stream));
  TL_CUDA_CHECK(cudaStreamSynchronize(stream));
  return static_cast<std::int64_t>(h_inf);
}

template std::int64_t standard_scaler_apply_cuda<float>(const Context&, MatrixView<const float>, const double*,
                                                        const double*, MatrixView<float>, bool);
template std::int64_t standard_scaler_apply_cuda<double>(const Context&, MatrixView<const double>, const double*,
                                                         const double*, MatrixView<double>, bool);

}  // namespace tl::detail
