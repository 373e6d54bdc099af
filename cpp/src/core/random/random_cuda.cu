#include <cub/device/device_radix_sort.cuh>

#include <vector>

#include "core/cuda/device_io.cuh"
#include "core/cuda/launch.cuh"
#include "core/random/random_impl.hpp"

namespace tl::detail {
namespace {

constexpr int kBlock = 256;

#define TL_GRID_STRIDE(i, n)                                                                    \
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)

// Fill kernels: one thread per output element (grid-stride); element i is the
// draw at position offset + i, whatever thread computes it.
template <class T>
__global__ void uniform_kernel(std::uint64_t seed, std::uint64_t stream, std::uint64_t offset, T* out,
                               std::int64_t n) {
  TL_GRID_STRIDE(i, n) out[i] = rng::uniform<T>(seed, stream, offset + i);
}
template <class T>
__global__ void normal_kernel(std::uint64_t seed, std::uint64_t stream, std::uint64_t offset, T* out,
                              std::int64_t n) {
  TL_GRID_STRIDE(i, n) out[i] = rng::normal<T>(seed, stream, offset + i);
}
__global__ void integers_kernel(std::uint64_t seed, std::uint64_t stream, std::uint64_t offset, std::uint64_t high,
                                std::int64_t* out, std::int64_t n) {
  TL_GRID_STRIDE(i, n) out[i] = static_cast<std::int64_t>(rng::integer(seed, stream, offset + i, high));
}

// Sort keys: one thread per population element i.
__global__ void permutation_keys_kernel(std::uint64_t seed, std::uint64_t stream, std::uint64_t* keys,
                                        std::int64_t* idx, std::int64_t n) {
  TL_GRID_STRIDE(i, n) {
    keys[i] = rng::permutation_key(seed, stream, i);
    idx[i] = i;
  }
}
template <class T>
__global__ void weighted_keys_kernel(std::uint64_t seed, std::uint64_t stream, const T* w, std::uint64_t* keys,
                                     std::int64_t* idx, std::int64_t n) {
  TL_GRID_STRIDE(i, n) {
    const double wi = static_cast<double>(w[i]);
    const double key = wi > 0.0 ? rng::weighted_key(seed, stream, i, wi) : tl::num::math_detail::inf<double>();
    keys[i] = tl::num::to_bits(key);
    idx[i] = i;
  }
}

// Canonical CDF: one thread per chunk for the in-chunk prefixes, one thread
// for the sequential chunk offsets, one thread per element for the sum.
template <class T>
__global__ void cdf_chunks_kernel(const T* w, std::int64_t n, std::int64_t nc, double* cdf, double* totals) {
  TL_GRID_STRIDE(c, nc) totals[c] = cdf_chunk_prefix(w, n, c, cdf);
}
__global__ void cdf_offsets_kernel(const double* totals, std::int64_t nc, double* offsets) {
  if (blockIdx.x == 0 && threadIdx.x == 0) cdf_offsets(totals, nc, offsets);
}
__global__ void cdf_add_kernel(const double* offsets, double* cdf, std::int64_t n) {
  TL_GRID_STRIDE(i, n) cdf[i] = tl::num::add(offsets[i / kCdfChunk], cdf[i]);
}
// One thread per draw.
__global__ void weighted_draw_kernel(const double* cdf, std::int64_t n, std::uint64_t seed, std::uint64_t stream,
                                     std::int64_t* out, std::int64_t k) {
  TL_GRID_STRIDE(j, k) out[j] = weighted_draw(cdf, n, seed, stream, j);
}

// Stable radix sort of (key, index) pairs; the first out.size indices go to out.
void sort_pairs_take(const Context& ctx, DeviceBuffer<std::uint64_t>& keys, DeviceBuffer<std::int64_t>& idx,
                     std::int64_t n, VectorView<std::int64_t> out) {
  TL_REQUIRE(n <= 0x7fffffff, ValueError, "the CUDA backend sorts at most 2^31 - 1 keys, got ", n);
  const int dev = ctx.device().id;
  cudaStream_t stream = tl_stream(ctx);
  DeviceBuffer<std::uint64_t> keys2(static_cast<std::size_t>(n), dev);
  DeviceBuffer<std::int64_t> idx2(static_cast<std::size_t>(n), dev);
  std::size_t temp_bytes = 0;
  TL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys.data(), keys2.data(), idx.data(),
                                                idx2.data(), static_cast<int>(n), 0, 64, stream));
  DeviceBuffer<unsigned char> temp(temp_bytes, dev);
  TL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.data(), temp_bytes, keys.data(), keys2.data(), idx.data(),
                                                idx2.data(), static_cast<int>(n), 0, 64, stream));
  DeviceOut<std::int64_t> o(ctx, out, "out");
  TL_CUDA_CHECK(cudaMemcpyAsync(o.ptr(), idx2.data(), sizeof(std::int64_t) * out.size, cudaMemcpyDeviceToDevice,
                                stream));
  o.finish();
}

}  // namespace

template <class T>
void random_uniform_cuda(const Context& ctx, std::uint64_t seed, std::uint64_t stream, std::uint64_t offset,
                         VectorView<T> out) {
  DeviceGuard guard(ctx.device().id);
  DeviceOut<T> o(ctx, out, "out");
  uniform_kernel<T><<<grid_for(out.size, kBlock), kBlock, 0, tl_stream(ctx)>>>(seed, stream, offset, o.ptr(),
                                                                                 out.size);
  TL_CUDA_CHECK_LAUNCH("uniform_kernel");
  o.finish();
}

template <class T>
void random_normal_cuda(const Context& ctx, std::uint64_t seed, std::uint64_t stream, std::uint64_t offset,
                        VectorView<T> out) {
  DeviceGuard guard(ctx.device().id);
  DeviceOut<T> o(ctx, out, "out");
  normal_kernel<T><<<grid_for(out.size, kBlock), kBlock, 0, tl_stream(ctx)>>>(seed, stream, offset, o.ptr(),
                                                                                out.size);
  TL_CUDA_CHECK_LAUNCH("normal_kernel");
  o.finish();
}

void random_integers_cuda(const Context& ctx, std::uint64_t seed, std::uint64_t stream, std::uint64_t offset,
                          std::int64_t high, VectorView<std::int64_t> out) {
  DeviceGuard guard(ctx.device().id);
  DeviceOut<std::int64_t> o(ctx, out, "out");
  integers_kernel<<<grid_for(out.size, kBlock), kBlock, 0, tl_stream(ctx)>>>(
      seed, stream, offset, static_cast<std::uint64_t>(high), o.ptr(), out.size);
  TL_CUDA_CHECK_LAUNCH("integers_kernel");
  o.finish();
}

void random_smallest_keys_cuda(const Context& ctx, std::uint64_t seed, std::uint64_t stream, std::int64_t n,
                               VectorView<std::int64_t> out) {
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  DeviceBuffer<std::uint64_t> keys(static_cast<std::size_t>(n), dev);
  DeviceBuffer<std::int64_t> idx(static_cast<std::size_t>(n), dev);
  permutation_keys_kernel<<<grid_for(n, kBlock), kBlock, 0, tl_stream(ctx)>>>(seed, stream, keys.data(), idx.data(),
                                                                               n);
  TL_CUDA_CHECK_LAUNCH("permutation_keys_kernel");
  sort_pairs_take(ctx, keys, idx, n, out);
}

template <class T>
void random_weighted_choice_cuda(const Context& ctx, std::uint64_t seed, std::uint64_t stream,
                                 VectorView<const T> weights, bool replace, VectorView<std::int64_t> out) {
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  const std::int64_t n = weights.size;
  cudaStream_t cs = tl_stream(ctx);
  // Validation reads the weights on the host.
  std::vector<T> hw(static_cast<std::size_t>(n));
  if (weights.device.is_cuda()) {
    TL_REQUIRE(weights.is_contiguous(), ValueError, "weights: the CUDA backend needs a contiguous array");
    TL_CUDA_CHECK(cudaMemcpyAsync(hw.data(), weights.data, sizeof(T) * n, cudaMemcpyDeviceToHost, cs));
    TL_CUDA_CHECK(cudaStreamSynchronize(cs));
  } else {
    for (std::int64_t i = 0; i < n; ++i) hw[i] = weights[i];
  }
  const std::int64_t positive = validate_weights(hw.data(), n);
  DeviceBuffer<T> wd(static_cast<std::size_t>(n), dev);
  TL_CUDA_CHECK(cudaMemcpyAsync(wd.data(), hw.data(), sizeof(T) * n, cudaMemcpyHostToDevice, cs));
  if (replace) {
    const std::int64_t nc = cdf_num_chunks(n);
    DeviceBuffer<double> cdf(static_cast<std::size_t>(n), dev), totals(static_cast<std::size_t>(nc), dev),
        offsets(static_cast<std::size_t>(nc), dev);
    cdf_chunks_kernel<T><<<grid_for(nc, kBlock), kBlock, 0, cs>>>(wd.data(), n, nc, cdf.data(), totals.data());
    TL_CUDA_CHECK_LAUNCH("cdf_chunks_kernel");
    cdf_offsets_kernel<<<1, 1, 0, cs>>>(totals.data(), nc, offsets.data());
    TL_CUDA_CHECK_LAUNCH("cdf_offsets_kernel");
    cdf_add_kernel<<<grid_for(n, kBlock), kBlock, 0, cs>>>(offsets.data(), cdf.data(), n);
    TL_CUDA_CHECK_LAUNCH("cdf_add_kernel");
    DeviceOut<std::int64_t> o(ctx, out, "out");
    weighted_draw_kernel<<<grid_for(out.size, kBlock), kBlock, 0, cs>>>(cdf.data(), n, seed, stream, o.ptr(),
                                                                        out.size);
    TL_CUDA_CHECK_LAUNCH("weighted_draw_kernel");
    o.finish();
    return;
  }
  TL_REQUIRE(out.size <= positive, ValueError, "cannot draw ", out.size, " samples without replacement: only ",
             positive, " weights are positive");
  DeviceBuffer<std::uint64_t> keys(static_cast<std::size_t>(n), dev);
  DeviceBuffer<std::int64_t> idx(static_cast<std::size_t>(n), dev);
  weighted_keys_kernel<T><<<grid_for(n, kBlock), kBlock, 0, cs>>>(seed, stream, wd.data(), keys.data(), idx.data(),
                                                                  n);
  TL_CUDA_CHECK_LAUNCH("weighted_keys_kernel");
  sort_pairs_take(ctx, keys, idx, n, out);
}

template void random_uniform_cuda<float>(const Context&, std::uint64_t, std::uint64_t, std::uint64_t,
                                         VectorView<float>);
template void random_uniform_cuda<double>(const Context&, std::uint64_t, std::uint64_t, std::uint64_t,
                                          VectorView<double>);
template void random_normal_cuda<float>(const Context&, std::uint64_t, std::uint64_t, std::uint64_t,
                                        VectorView<float>);
template void random_normal_cuda<double>(const Context&, std::uint64_t, std::uint64_t, std::uint64_t,
                                         VectorView<double>);
template void random_weighted_choice_cuda<float>(const Context&, std::uint64_t, std::uint64_t,
                                                 VectorView<const float>, bool, VectorView<std::int64_t>);
template void random_weighted_choice_cuda<double>(const Context&, std::uint64_t, std::uint64_t,
                                                  VectorView<const double>, bool, VectorView<std::int64_t>);

}  // namespace tl::detail
