#include <algorithm>

#include "core/cuda/lane_reduce.cuh"
#include "core/cuda/launch.cuh"
#include "core/cuda/memory.cuh"
#include "preprocessing/normalizer/normalizer_common.hpp"

namespace tl::detail {
namespace {

// One warp per row (grid-stride over rows): lane l reads columns l, l + 32,
// ... (consecutive lanes on consecutive elements, coalesced), the warp
// reduces the norm in the canonical lane order, then every lane divides its
// own columns. x and y may alias: each element is read, then written, by one
// lane, and all reads for the norm happen before the shuffle.
template <class T>
__global__ void normalizer_kernel(const T* x, T* y, std::int64_t rows, std::int64_t cols, RowNorm norm) {
  const std::int64_t warps_per_block = blockDim.x / kLanes;
  const std::int64_t warp = static_cast<std::int64_t>(blockIdx.x) * warps_per_block + threadIdx.x / kLanes;
  const std::int64_t nwarps = static_cast<std::int64_t>(gridDim.x) * warps_per_block;
  const int lane = static_cast<int>(threadIdx.x) & (kLanes - 1);
  for (std::int64_t i = warp; i < rows; i += nwarps) {
    const T* xi = x + i * cols;
    auto term = [&](std::int64_t j) { return norm_term(static_cast<double>(xi[j]), norm); };
    const double r = norm == RowNorm::Max ? warp_lane_reduce(cols, 0.0, term, lane_ops::Max{})
                                          : warp_lane_reduce(cols, 0.0, term, lane_ops::Add{});
    const T nt = finish_norm<T>(r, norm);
    for (std::int64_t j = lane; j < cols; j += kLanes) y[i * cols + j] = normalize_one(xi[j], nt);
  }
}

}  // namespace

template <class T>
void normalizer_apply_cuda(const Context& ctx, MatrixView<const T> X, RowNorm norm, MatrixView<T> out) {
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  cudaStream_t stream = tl_stream(ctx);
  TL_REQUIRE(out.is_c_contiguous(), ValueError, "Normalizer: output must be C-contiguous");
  auto xs = stage_to_device(ctx, X);
  const std::int64_t rows = X.rows, cols = X.cols, n = X.size();
  DeviceBuffer<T> staged_out;
  T* y = out.data;
  if (out.on_host()) {
    staged_out = DeviceBuffer<T>(static_cast<std::size_t>(n), dev);
    y = staged_out.data();
  }
  const int sms = sm_count(dev);
  const int block = 256;  // 8 warps
  const std::int64_t want = (rows + block / kLanes - 1) / (block / kLanes);
  const unsigned grid = static_cast<unsigned>(std::min<std::int64_t>(want, static_cast<std::int64_t>(sms) * 32));
  normalizer_kernel<T><<<grid, block, 0, stream>>>(xs.view.data, y, rows, cols, norm);
  TL_CUDA_CHECK_LAUNCH("normalizer_kernel");
  if (out.on_host()) TL_CUDA_CHECK(cudaMemcpyAsync(out.data, y, sizeof(T) * n, cudaMemcpyDeviceToHost, stream));
  TL_CUDA_CHECK(cudaStreamSynchronize(stream));
}

template void normalizer_apply_cuda<float>(const Context&, MatrixView<const float>, RowNorm, MatrixView<float>);
template void normalizer_apply_cuda<double>(const Context&, MatrixView<const double>, RowNorm, MatrixView<double>);

}  // namespace tl::detail
