// Host helpers and types shared by the files of the CUDA backend of the
// gradient-boosted trees: launch geometry, host <-> device copies, the
// device borders, and the declarations of the borders stage
// (gbdt_cuda_borders.cu).
#pragma once
#include <algorithm>
#include <vector>

#include "core/cuda/memory.cuh"
#include "ensemble/gbdt/gbdt_driver.hpp"

namespace tl::gbdt_cuda {

using detail::DeviceBuffer;
using detail::stage_to_device;
using gbdt::kMaxBordersPadded;
using ull = unsigned long long;
constexpr int kBlock = 256;

__host__ __device__ inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

struct Launch {
  int dev = 0;
  int sms = 1;
  int smem_optin = 48 * 1024;
  cudaStream_t stream = nullptr;
  // Blocks for a grid-stride loop over n items: enough to fill the GPU.
  unsigned grid(std::int64_t n, int block = kBlock) const {
    const std::int64_t want = std::max<std::int64_t>(1, ceil_div(n, block));
    return static_cast<unsigned>(std::min<std::int64_t>(want, static_cast<std::int64_t>(sms) * 16));
  }
};

inline Launch make_launch(const Context& ctx) {
  Launch l;
  l.dev = ctx.device().id;
  TL_CUDA_CHECK(cudaDeviceGetAttribute(&l.sms, cudaDevAttrMultiProcessorCount, l.dev));
  TL_CUDA_CHECK(cudaDeviceGetAttribute(&l.smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, l.dev));
  l.stream = tl_stream(ctx);
  return l;
}

template <class T>
void upload(DeviceBuffer<T>& dst, const T* src, std::size_t n, cudaStream_t s) {
  if (n) TL_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src, n * sizeof(T), cudaMemcpyHostToDevice, s));
}
template <class T>
void download(T* dst, const DeviceBuffer<T>& src, std::size_t n, cudaStream_t s) {
  if (n) TL_CUDA_CHECK(cudaMemcpyAsync(dst, src.data(), n * sizeof(T), cudaMemcpyDeviceToHost, s));
}
template <class T>
DeviceBuffer<T> to_device(const std::vector<T>& v, int dev, cudaStream_t s) {
  DeviceBuffer<T> b(v.size(), dev);
  upload(b, v.data(), v.size(), s);
  return b;
}

struct DeviceBorders {
  int F = 0;
  std::vector<double> padded;  // host copy, F * kMaxBordersPadded
  std::vector<int> count;      // host copy
  DeviceBuffer<double> d_padded;
  DeviceBuffer<int> d_count;
  bool nan_max = false;
};

// The inverse quantization scale 2^-e of values whose largest |v| has the
// bits maxbits (gbdt::quant_exponent).
__host__ __device__ __forceinline__ double inv_scale_of(ull maxbits) {
  return gbdt::pow2(-gbdt::quant_exponent(num::double_from_bits(maxbits)));
}

// Per-feature NaN counts of the device matrix X; raises on infinities, and on
// NaN under nan_mode Forbidden.
template <class T>
std::vector<ull> count_nan_cuda(const Launch& L, MatrixView<const T> X, GbdtNanMode nan_mode);

// The borders of every feature of the contiguous device matrix X, as the CPU
// backend selects them (with host row weights w, non-null: the weighted
// borders, computed on the host by the CPU backend's code).
template <class T>
DeviceBorders compute_borders_cuda(const Launch& L, MatrixView<const T> X, int border_count, GbdtNanMode nan_mode,
                                   const double* w);

// Feature-major bins of the device matrix X under the borders B: bins[f * n + i].
template <class T>
DeviceBuffer<std::uint8_t> bin_matrix_cuda(const Launch& L, MatrixView<const T> X, const DeviceBorders& B);

}  // namespace tl::gbdt_cuda
