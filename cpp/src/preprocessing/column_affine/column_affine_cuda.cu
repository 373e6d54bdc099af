#include <algorithm>

#include "core/cuda/memory.cuh"
#include "preprocessing/column_affine/column_affine_common.hpp"

namespace tl::detail {
namespace {

// x and y may alias (in-place transform): each element is read, then
// written, by the same thread.
// Grid-stride loop over the rows*cols elements of a C-contiguous matrix; one
// element per thread per step, consecutive threads on consecutive elements.
template <class T>
__global__ void column_affine_kernel(const T* x, T* y, std::int64_t n, std::int64_t cols, AffineParams p) {
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < n;
       e += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    y[e] = affine_one(x[e], p, e % cols);
  }
}

}  // namespace

template <class T>
void column_affine_apply_cuda(const Context& ctx, MatrixView<const T> X, const ColumnAffine& steps, MatrixView<T> out) {
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  cudaStream_t stream = tl_stream(ctx);
  TL_REQUIRE(out.is_c_contiguous(), ValueError, "column_affine_apply: output must be C-contiguous");
  auto xs = stage_to_device(ctx, X);
  const std::int64_t cols = X.cols, n = X.size();
  // The four parameter vectors side by side in one device buffer.
  DeviceBuffer<double> params(static_cast<std::size_t>(4 * cols), dev);
  const double* host[4] = {steps.sub, steps.div, steps.mul, steps.add};
  const double* devp[4] = {nullptr, nullptr, nullptr, nullptr};
  for (int s = 0; s < 4; ++s) {
    if (!host[s]) continue;
    TL_CUDA_CHECK(
        cudaMemcpyAsync(params.data() + s * cols, host[s], sizeof(double) * cols, cudaMemcpyHostToDevice, stream));
    devp[s] = params.data() + s * cols;
  }
  const AffineParams p{devp[0], devp[1], devp[2], devp[3], steps.clip, steps.clip_lo, steps.clip_hi};
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
  column_affine_kernel<T><<<grid, block, 0, stream>>>(xs.view.data, y, n, cols, p);
  TL_CUDA_CHECK_LAUNCH("column_affine_kernel");
  if (out.on_host()) TL_CUDA_CHECK(cudaMemcpyAsync(out.data, y, sizeof(T) * n, cudaMemcpyDeviceToHost, stream));
  TL_CUDA_CHECK(cudaStreamSynchronize(stream));
}

template void column_affine_apply_cuda<float>(const Context&, MatrixView<const float>, const ColumnAffine&,
                                              MatrixView<float>);
template void column_affine_apply_cuda<double>(const Context&, MatrixView<const double>, const ColumnAffine&,
                                               MatrixView<double>);

}  // namespace tl::detail
