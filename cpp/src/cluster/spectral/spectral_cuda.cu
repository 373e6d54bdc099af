#include <algorithm>

#include "cluster/spectral/spectral_common.hpp"
#include "core/cuda/lane_reduce.cuh"
#include "core/cuda/launch.cuh"
#include "core/cuda/memory.cuh"

namespace tl::detail {
namespace {

// One warp per row (grid-stride over rows): lane l reads columns l, l + 32,
// ... and the warp sums them in the canonical lane order.
template <class T>
__global__ void spectral_degree_kernel(const T* a, std::int64_t n, double* dd) {
  const std::int64_t warps_per_block = blockDim.x / kLanes;
  const std::int64_t warp = static_cast<std::int64_t>(blockIdx.x) * warps_per_block + threadIdx.x / kLanes;
  const std::int64_t nwarps = static_cast<std::int64_t>(gridDim.x) * warps_per_block;
  const int lane = static_cast<int>(threadIdx.x) & (kLanes - 1);
  for (std::int64_t i = warp; i < n; i += nwarps) {
    const T* ai = a + i * n;
    auto term = [&](std::int64_t j) { return j == i ? 0.0 : static_cast<double>(ai[j]); };
    const double deg = warp_lane_reduce(n, 0.0, term, lane_ops::Add{});
    if (lane == 0) dd[i] = spectral_sqrt_degree(deg);
  }
}

// One thread per entry (grid-stride over the n * n entries, consecutive
// threads on consecutive columns of a row).
template <class T>
__global__ void spectral_scale_kernel(const T* a, std::int64_t n, const double* dd, T* s) {
  const std::int64_t total = n * n;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += stride) {
    const std::int64_t i = e / n, j = e - i * n;
    s[e] = spectral_entry(a[e], dd[i], dd[j], i == j);
  }
}

}  // namespace

template <class T>
void spectral_normalize_cuda(const Context& ctx, MatrixView<const T> A, MatrixView<T> S, double* dd) {
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  cudaStream_t stream = tl_stream(ctx);
  auto as = stage_to_device(ctx, A);
  StagedOutput<T> out(ctx, S);
  const std::int64_t n = A.rows;
  DeviceBuffer<double> ddev(static_cast<std::size_t>(n), dev);
  const int sms = sm_count(dev);
  const int block = 256;
  const std::int64_t want_rows = (n + block / kLanes - 1) / (block / kLanes);
  const unsigned grid_rows =
      static_cast<unsigned>(std::min<std::int64_t>(want_rows, static_cast<std::int64_t>(sms) * 32));
  spectral_degree_kernel<T><<<grid_rows, block, 0, stream>>>(as.view.data, n, ddev.data());
  TL_CUDA_CHECK_LAUNCH("spectral_degree_kernel");
  const std::int64_t want = (n * n + block - 1) / block;
  const unsigned grid = static_cast<unsigned>(std::min<std::int64_t>(want, static_cast<std::int64_t>(sms) * 64));
  spectral_scale_kernel<T><<<grid, block, 0, stream>>>(as.view.data, n, ddev.data(), out.data);
  TL_CUDA_CHECK_LAUNCH("spectral_scale_kernel");
  download_async(dd, ddev.data(), static_cast<std::size_t>(n), stream);
  TL_CUDA_CHECK(cudaStreamSynchronize(stream));
  out.finish(ctx);
}

template void spectral_normalize_cuda<float>(const Context&, MatrixView<const float>, MatrixView<float>, double*);
template void spectral_normalize_cuda<double>(const Context&, MatrixView<const double>, MatrixView<double>, double*);

}  // namespace tl::detail
