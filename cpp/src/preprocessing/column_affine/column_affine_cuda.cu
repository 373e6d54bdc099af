#include <algorithm>
#include <cstdint>

#include "core/cuda/launch.cuh"
#include "core/cuda/memory.cuh"
#include "preprocessing/column_affine/column_affine_common.hpp"

namespace tl::detail {
namespace {

// Block b handles rows [b*rows_per_block, ...) of a C-contiguous matrix in
// packs of V consecutive columns (one 16-byte access when V > 1: cols % V == 0
// and both arrays 16-byte aligned); its threads walk the packs of each row
// (thread t: packs t, t+blockDim, ...), so a warp touches consecutive
// addresses. A thread reads its columns' parameters once, then issues U
// rows' loads before their stores. Infinite inputs are counted with one
// atomicAdd per block that saw any.
// x and y may be the same array (in-place): each element is read before the
// same thread writes it, so they are not declared __restrict__.
template <class T, int V>
struct alignas(sizeof(T) * V) Pack {
  T v[V];
};

template <class T, int V>
__global__ void column_affine_kernel(const T* x, T* y, std::int64_t rows, std::int64_t cols,
                                     std::int64_t rows_per_block, AffineParams p,
                                     unsigned long long* __restrict__ n_inf) {
  using P = Pack<T, V>;
  const std::int64_t r0 = static_cast<std::int64_t>(blockIdx.x) * rows_per_block;
  const std::int64_t r1 = min(rows, r0 + rows_per_block);
  const std::int64_t packs = cols / V;
  const P* xp = reinterpret_cast<const P*>(x);
  P* yp = reinterpret_cast<P*>(y);
  unsigned long long local_inf = 0;
  constexpr int U = 4;
  for (std::int64_t jp = threadIdx.x; jp < packs; jp += blockDim.x) {
    AffineColumn c[V];
#pragma unroll
    for (int q = 0; q < V; ++q) c[q] = affine_column(p, jp * V + q);
    auto apply = [&](const P& in) {
      P out;
#pragma unroll
      for (int q = 0; q < V; ++q) {
        local_inf += num::is_inf(in.v[q]);
        out.v[q] = affine_apply(in.v[q], p, c[q]);
      }
      return out;
    };
    std::int64_t i = r0;
    for (; i + U <= r1; i += U) {
      P v[U];
#pragma unroll
      for (int u = 0; u < U; ++u) v[u] = xp[(i + u) * packs + jp];
#pragma unroll
      for (int u = 0; u < U; ++u) yp[(i + u) * packs + jp] = apply(v[u]);
    }
    for (; i < r1; ++i) yp[i * packs + jp] = apply(xp[i * packs + jp]);
  }
  if (local_inf) atomicAdd(n_inf, local_inf);
}

}  // namespace

template <class T>
std::int64_t column_affine_apply_cuda(const Context& ctx, MatrixView<const T> X, const ColumnAffine& steps,
                                      MatrixView<T> out) {
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  cudaStream_t stream = tl_stream(ctx);
  auto xs = stage_to_device(ctx, X);
  StagedOutput<T> ys(ctx, out);
  const std::int64_t rows = X.rows, cols = X.cols;
  // The four parameter vectors side by side in one device buffer, then the
  // infinity counter.
  DeviceBuffer<double> params(static_cast<std::size_t>(4 * cols), dev);
  DeviceBuffer<unsigned long long> n_inf(1, dev);
  TL_CUDA_CHECK(cudaMemsetAsync(n_inf.data(), 0, sizeof(unsigned long long), stream));
  const double* host[4] = {steps.sub, steps.div, steps.mul, steps.add};
  const double* devp[4] = {nullptr, nullptr, nullptr, nullptr};
  for (int s = 0; s < 4; ++s) {
    if (!host[s]) continue;
    TL_CUDA_CHECK(
        cudaMemcpyAsync(params.data() + s * cols, host[s], sizeof(double) * cols, cudaMemcpyHostToDevice, stream));
    devp[s] = params.data() + s * cols;
  }
  const AffineParams p{devp[0], devp[1], devp[2], devp[3], steps.clip, steps.clip_lo, steps.clip_hi};
  const int sms = sm_count(dev);
  constexpr int V = 16 / static_cast<int>(sizeof(T));
  const bool vec = cols % V == 0 && reinterpret_cast<std::uintptr_t>(xs.view.data) % 16 == 0 &&
                   reinterpret_cast<std::uintptr_t>(ys.data) % 16 == 0;
  const std::int64_t packs = vec ? cols / V : cols;
  const int block = static_cast<int>(std::min<std::int64_t>(256, (packs + 31) / 32 * 32));
  // Enough blocks to fill the GPU several times over; the split changes no
  // result.
  const std::int64_t target_blocks = static_cast<std::int64_t>(sms) * 32;
  const std::int64_t rows_per_block = std::max<std::int64_t>(1, (rows + target_blocks - 1) / target_blocks);
  const unsigned grid = static_cast<unsigned>((rows + rows_per_block - 1) / rows_per_block);
  if (vec)
    column_affine_kernel<T, V>
        <<<grid, block, 0, stream>>>(xs.view.data, ys.data, rows, cols, rows_per_block, p, n_inf.data());
  else
    column_affine_kernel<T, 1>
        <<<grid, block, 0, stream>>>(xs.view.data, ys.data, rows, cols, rows_per_block, p, n_inf.data());
  TL_CUDA_CHECK_LAUNCH("column_affine_kernel");
  ys.finish(ctx);
  unsigned long long h_inf = 0;
  TL_CUDA_CHECK(cudaMemcpyAsync(&h_inf, n_inf.data(), sizeof(h_inf), cudaMemcpyDeviceToHost, stream));
  TL_CUDA_CHECK(cudaStreamSynchronize(stream));
  return static_cast<std::int64_t>(h_inf);
}

template std::int64_t column_affine_apply_cuda<float>(const Context&, MatrixView<const float>, const ColumnAffine&,
                                                      MatrixView<float>);
template std::int64_t column_affine_apply_cuda<double>(const Context&, MatrixView<const double>, const ColumnAffine&,
                                                       MatrixView<double>);

}  // namespace tl::detail
