// The CUDA KMeans engine: the passes of kmeans_common.hpp on the device, in
// the canonical orders of kmeans.hpp (the CPU engine computes the same bits).
// This translation unit compiles the whole engine: its class
// (kmeans_cuda_engine.cuh) and stages (kmeans_cuda_assign.cuh,
// kmeans_cuda_sums.cuh, kmeans_cuda_seed.cuh); here its construction and the
// inertia.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "cluster/kmeans/kmeans_cuda_assign.cuh"
#include "cluster/kmeans/kmeans_cuda_engine.cuh"
#include "cluster/kmeans/kmeans_cuda_seed.cuh"
#include "cluster/kmeans/kmeans_cuda_sums.cuh"

namespace tl::detail {
namespace {

// Per-row inertia terms w_i * sum_f (x_if - c_f)^2. One thread per row.
template <class T>
__global__ void inertia_terms_kernel(const T* __restrict__ X, const T* __restrict__ w, std::int64_t n,
                                     std::int64_t d, const T* __restrict__ C, const std::int32_t* __restrict__ labels,
                                     double* __restrict__ out) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = weighted_term(w ? w[i] : T(1), sq_diff(X + i * d, C + labels[i] * d, d));
}

// One thread per row chunk: the sequential sum of its kRowChunk terms.
__global__ void chunk_total_kernel(const double* __restrict__ v, std::int64_t n, double* __restrict__ out) {
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c * kRowChunk >= n) return;
  const std::int64_t r1 = min(n, (c + 1) * kRowChunk);
  double acc = 0.0;
  std::int64_t i = c * kRowChunk;
  // Eight loads in flight, then their terms added in row order.
  for (; i + 8 <= r1; i += 8) {
    double t[8];
#pragma unroll
    for (int u = 0; u < 8; ++u) t[u] = v[i + u];
#pragma unroll
    for (int u = 0; u < 8; ++u) acc = num::add(acc, t[u]);
  }
  for (; i < r1; ++i) acc = num::add(acc, v[i]);
  out[c] = acc;
}

// Bytes of X the engine keeps on the device; larger host data is streamed
// batch by batch. TWINLEARN_KMEANS_DEVICE_BYTES overrides the default (45%
// of the free device memory), e.g. to test the streaming path.
std::size_t device_budget(int dev) {
  if (const char* env = std::getenv("TWINLEARN_KMEANS_DEVICE_BYTES")) return std::strtoull(env, nullptr, 10);
  std::size_t free_b = 0, total_b = 0;
  TL_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  (void)dev;
  return free_b / 100 * 45;
}

template <class T>
CudaEngine<T>::CudaEngine(const Context& ctx, MatrixView<const T> X, VectorView<const T> w, const double* x_mean)
    : ctx_(ctx), dev_(ctx.device().id), guard_(dev_), stream_(tl_stream(ctx)) {
  this->n = X.rows;
  this->d = X.cols;
  const std::int64_t n = X.rows, d = X.cols;
  mu_.assign(static_cast<std::size_t>(d), T(0));
  if (x_mean)
    for (std::int64_t f = 0; f < d; ++f) mu_[f] = static_cast<T>(x_mean[f]);
  centered_ = x_mean != nullptr;
  if (centered_) {
    dmu_ = DeviceBuffer<T>(static_cast<std::size_t>(d), dev_);
    TL_CUDA_CHECK(cudaMemcpyAsync(dmu_.data(), mu_.data(), sizeof(T) * d, cudaMemcpyHostToDevice, stream_));
  }
  const std::size_t bytes = static_cast<std::size_t>(n * d) * sizeof(T);
  resident_ = X.device.is_cuda() || bytes <= device_budget(dev_);
  if (resident_) {
    staged_ = stage_to_device(ctx, X);
    x_ = staged_.view.data;
    if (centered_) {
      centered_buf_ = DeviceBuffer<T>(static_cast<std::size_t>(n * d), dev_);
      center_kernel<T><<<blocks_for(n * d, 256), 256, 0, stream_>>>(x_, dmu_.data(), n, d, centered_buf_.data());
      TL_CUDA_CHECK_LAUNCH("center_kernel");
      x_ = centered_buf_.data();
    }
  } else {
    TL_REQUIRE(X.is_c_contiguous(), ValueError, "KMeans: streamed data must be C-contiguous");
    host_ = X;
    xb_ = DeviceBuffer<T>(static_cast<std::size_t>(std::min(n, kBatchRows) * d), dev_);
  }
  if (w.data) {
    this->weighted = true;
    TL_REQUIRE(w.is_contiguous(), ValueError, "sample_weight must be contiguous");
    wstage_ = stage_to_device(ctx, MatrixView<const T>(w.data, w.size, 1, w.device));
    w_ = wstage_.view.data;
  }
  norms_ = DeviceBuffer<T>(static_cast<std::size_t>(n), dev_);
  for_each_batch([&](std::int64_t r0, std::int64_t len, const T* xb) {
    tile::row_sqnorms(xb, len, d, norms_.data() + r0, stream_);
  });
  labels_ = DeviceBuffer<std::int32_t>(static_cast<std::size_t>(n), dev_);
  TL_CUDA_CHECK(cudaMemsetAsync(labels_.data(), 0xff, sizeof(std::int32_t) * n, stream_));  // -1
  mind_ = DeviceBuffer<T>(static_cast<std::size_t>(n), dev_);
  changed_ = DeviceBuffer<unsigned long long>(1, dev_);
}

template <class T>
double CudaEngine<T>::inertia(const T* centers, std::int64_t k) {
  const std::int64_t n = this->n, d = this->d, nch = row_chunks(n);
  upload_centers(centers, k);
  DeviceBuffer<double> terms(static_cast<std::size_t>(n), dev_), part(static_cast<std::size_t>(nch), dev_);
  for_each_batch([&](std::int64_t r0, std::int64_t len, const T* xb) {
    inertia_terms_kernel<T><<<blocks_for(len, 256), 256, 0, stream_>>>(xb, w_ ? w_ + r0 : nullptr, len, d,
                                                                        centers_.data(), labels_.data() + r0,
                                                                        terms.data() + r0);
    TL_CUDA_CHECK_LAUNCH("inertia_terms_kernel");
  });
  chunk_total_kernel<<<blocks_for(nch, 64), 64, 0, stream_>>>(terms.data(), n, part.data());
  TL_CUDA_CHECK_LAUNCH("chunk_total_kernel");
  std::vector<double> h(static_cast<std::size_t>(nch));
  to_host(h.data(), part.data(), nch);
  return tree_sum(h);
}

}  // namespace

template <class T>
std::unique_ptr<KMeansEngine<T>> make_kmeans_engine_cuda(const Context& ctx, MatrixView<const T> X,
                                                         VectorView<const T> w, const double* x_mean) {
  return std::make_unique<CudaEngine<T>>(ctx, X, w, x_mean);
}

template std::unique_ptr<KMeansEngine<float>> make_kmeans_engine_cuda<float>(const Context&, MatrixView<const float>,
                                                                            VectorView<const float>, const double*);
template std::unique_ptr<KMeansEngine<double>> make_kmeans_engine_cuda<double>(const Context&,
                                                                              MatrixView<const double>,
                                                                              VectorView<const double>,
                                                                              const double*);

}  // namespace tl::detail
