// CUDA backend of tl::fixed_histogram: per-block histograms of unsigned
// 64-bit integers in shared memory, added into the global histogram with
// atomics. Integer atomics are exact, so the order in which blocks and
// threads land changes no bit.
#include <algorithm>

#include "core/cuda/launch.cuh"
#include "core/cuda/memory.cuh"
#include "core/cuda/stage.cuh"
#include "core/fixed_point/fixed_point_common.hpp"

namespace tl::detail {
namespace {

constexpr int kHistThreads = 256;
constexpr std::int64_t kSharedHistBytes = 48 * 1024;

// Mapping: a grid-stride loop over rows, one thread per row at a time; the
// thread quantizes the row's n_values values and adds them to its block's
// histogram (shared memory when kShared, else straight into `out`). With
// kShared the block then adds its histogram into `out`, one thread per bin.
// Errors (bin out of range, value outside the bound) are ORed into *err.
template <class T, bool kShared>
__global__ void __launch_bounds__(kHistThreads)
    fixed_hist_kernel(const T* __restrict__ values, const std::int32_t* __restrict__ bins, std::int64_t rows,
                      std::int64_t nv, std::int64_t n_bins, int exponent, int value_bits,
                      unsigned long long* __restrict__ out, int* __restrict__ err) {
  extern __shared__ unsigned long long sh_hist[];
  const std::int64_t width = n_bins * nv;
  unsigned long long* h = kShared ? sh_hist : out;
  if (kShared) {
    for (std::int64_t k = threadIdx.x; k < width; k += blockDim.x) sh_hist[k] = 0ull;
    __syncthreads();
  }
  int code = 0;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < rows; i += stride) {
    const std::int64_t b = bins[i];
    if (b < 0 || b >= n_bins) {
      code |= kFixedBinOutOfRange;
      continue;
    }
    for (std::int64_t v = 0; v < nv; ++v) {
      const double s = fixed_detail::scaled(static_cast<double>(values[i * nv + v]), exponent);
      if (!fixed_in_range(s, value_bits)) {
        code |= kFixedValueOutOfRange;
        continue;
      }
      atomicAdd(h + b * nv + v, static_cast<unsigned long long>(fixed_round(s)));
    }
  }
  if (code) atomicOr(err, code);
  if (kShared) {
    __syncthreads();
    for (std::int64_t k = threadIdx.x; k < width; k += blockDim.x)
      if (sh_hist[k]) atomicAdd(out + k, sh_hist[k]);
  }
}

}  // namespace

template <class T>
void fixed_histogram_cuda(const Context& ctx, MatrixView<const T> values, VectorView<const std::int32_t> bins,
                          std::int64_t n_bins, FixedScale scale, std::int64_t* out) {
  static_assert(sizeof(unsigned long long) == sizeof(std::int64_t), "64-bit atomics");
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  cudaStream_t stream = tl_stream(ctx);
  const std::int64_t rows = values.rows, nv = values.cols, width = n_bins * nv;
  auto vs = stage_input(ctx, values, "values");
  auto bs = stage_input(ctx, MatrixView<const std::int32_t>(bins.data, bins.size, 1, bins.stride, 1, bins.device),
                        "bins");
  DeviceBuffer<unsigned long long> hist(static_cast<std::size_t>(width), dev);
  DeviceBuffer<int> err(1, dev);
  TL_CUDA_CHECK(cudaMemsetAsync(hist.data(), 0, sizeof(unsigned long long) * width, stream));
  TL_CUDA_CHECK(cudaMemsetAsync(err.data(), 0, sizeof(int), stream));
  const std::int64_t bytes = width * static_cast<std::int64_t>(sizeof(unsigned long long));
  const bool shared = bytes <= kSharedHistBytes;
  // Enough blocks to fill the GPU, but not so many that flushing the
  // per-block histograms costs more than filling them.
  std::int64_t blocks = (rows + kHistThreads - 1) / kHistThreads;
  blocks = std::min<std::int64_t>(blocks, static_cast<std::int64_t>(sm_count()) * (shared ? 4 : 8));
  if (shared) blocks = std::min<std::int64_t>(blocks, std::max<std::int64_t>(1, 4 * rows / std::max<std::int64_t>(1, width)));
  blocks = std::max<std::int64_t>(1, blocks);
  const int value_bits = fixed_value_bits(rows);
  if (shared) {
    fixed_hist_kernel<T, true><<<static_cast<unsigned>(blocks), kHistThreads, static_cast<std::size_t>(bytes), stream>>>(
        vs.data, bs.data, rows, nv, n_bins, scale.exponent, value_bits, hist.data(), err.data());
  } else {
    fixed_hist_kernel<T, false><<<static_cast<unsigned>(blocks), kHistThreads, 0, stream>>>(
        vs.data, bs.data, rows, nv, n_bins, scale.exponent, value_bits, hist.data(), err.data());
  }
  TL_CUDA_CHECK_LAUNCH("fixed_hist_kernel");
  int code = 0;
  TL_CUDA_CHECK(cudaMemcpyAsync(&code, err.data(), sizeof(int), cudaMemcpyDeviceToHost, stream));
  TL_CUDA_CHECK(cudaMemcpyAsync(out, hist.data(), sizeof(std::int64_t) * width, cudaMemcpyDeviceToHost, stream));
  TL_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (code) throw_fixed_histogram_error(code, rows, scale);
}

template void fixed_histogram_cuda<float>(const Context&, MatrixView<const float>, VectorView<const std::int32_t>,
                                          std::int64_t, FixedScale, std::int64_t*);
template void fixed_histogram_cuda<double>(const Context&, MatrixView<const double>, VectorView<const std::int32_t>,
                                           std::int64_t, FixedScale, std::int64_t*);

}  // namespace tl::detail
