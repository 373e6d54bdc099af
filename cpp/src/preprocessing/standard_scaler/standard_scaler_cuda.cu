#include "core/cuda/memory.cuh"
#include "preprocessing/standard_scaler/standard_scaler_common.hpp"

namespace tl::detail {
namespace {

// Grid-stride loop over the rows*cols elements of a C-contiguous matrix; one
// element per thread per step, consecutive threads on consecutive elements.
template <class T>
__global__ void scaler_apply_kernel(const T* __restrict__ x, T* __restrict__ y, std::int64_t n, std::int64_t cols,
                                    const double* __restrict__ mean, const double* __restrict__ scale, bool inverse) {
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < n;
       e += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    y[e] = scaler_apply_one(x[e], mean, scale, e % cols, inverse);
  }
}

}  // namespace

template <class T>
void standard_scaler_apply_cuda(const Context& ctx, MatrixView<const T> X, const double* mean, const double* scale,
                                MatrixView<T> out, bool inverse) {
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  cudaStream_t stream = tl_stream(ctx);
  TL_REQUIRE(out.is_c_contiguous(), ValueError, "StandardScaler: output must be C-contiguous");
  auto xs = stage_to_device(ctx, X);
  const std::int64_t cols = X.cols, n = X.size();
  DeviceBuffer<double> params(static_cast<std::size_t>(2 * cols), dev);
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
  const int block = 256;
  const std::int64_t want = (n + block - 1) / block;
  const unsigned grid = static_cast<unsigned>(std::min<std::int64_t>(want, static_cast<std::int64_t>(sms) * 16));
  scaler_apply_kernel<T><<<grid, block, 0, stream>>>(xs.view.data, y, n, cols, mean ? params.data() : nullptr,
                                                     scale ? params.data() + cols : nullptr, inverse);
  TL_CUDA_CHECK_LAUNCH("scaler_apply_kernel");
  if (out.on_host()) TL_CUDA_CHECK(cudaMemcpyAsync(out.data, y, sizeof(T) * n, cudaMemcpyDeviceToHost, stream));
  TL_CUDA_CHECK(cudaStreamSynchronize(stream));
}

template void standard_scaler_apply_cuda<float>(const Context&, MatrixView<const float>, const double*,
                                                const double*, MatrixView<float>, bool);
template void standard_scaler_apply_cuda<double>(const Context&, MatrixView<const double>, const double*,
                                                 const double*, MatrixView<double>, bool);

}  // namespace tl::detail
