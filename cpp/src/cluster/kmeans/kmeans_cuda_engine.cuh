// The CUDA KMeans engine (the passes of kmeans_common.hpp on the device, in
// the canonical orders of kmeans.hpp): its class, the state every stage
// shares and the small members. The stages' kernels and members are defined
// in kmeans_cuda_assign.cuh (assignment), kmeans_cuda_sums.cuh (cluster sums
// and the steps held on the device), kmeans_cuda_seed.cuh (k-means++ and the
// farthest rows) and kmeans_cuda.cu (construction, inertia), which is the one
// translation unit that includes them.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "cluster/kmeans/kmeans_common.hpp"
#include "cluster/kmeans/kmeans_mma.cuh"
#include "core/cuda/launch.cuh"
#include "core/cuda/memory.cuh"
#include "core/distance/distance_tile.cuh"

namespace tl::detail {
namespace {

// X - mean (in T), one thread per element; out may be X (in place).
template <class T>
__global__ void center_kernel(const T* X, const T* __restrict__ mu, std::int64_t n, std::int64_t d, T* out) {
  const std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e < n * d) out[e] = num::sub(X[e], mu[e % d]);
}

template <class T>
class CudaEngine final : public KMeansEngine<T> {
 public:
  CudaEngine(const Context& ctx, MatrixView<const T> X, VectorView<const T> w, const double* x_mean);

  std::int64_t assign(const T* centers, std::int64_t k) override {
    upload_centers(centers, k);
    for_each_batch([&](std::int64_t r0, std::int64_t len, const T* xb) { assign_batch(r0, len, xb, k); });
    return read_changed();
  }

  void cluster_sums(std::int64_t k, double* sums, double* wsum) override {
    const std::int64_t nb = sum_batches(this->n), w1 = this->d + 1;
    std::vector<double> parts(static_cast<std::size_t>(nb * k * w1));
    for_each_batch([&](std::int64_t r0, std::int64_t len, const T* xb) {
      batch_sums(r0, len, xb, k, parts.data() + (r0 / kBatchRows) * k * w1);
    });
    combine_batches(parts, nb, k, this->d, sums, wsum);
  }

  std::int64_t assign_sums(const T* centers, std::int64_t k, double* sums, double* wsum) override {
    upload_centers(centers, k);
    const std::int64_t nb = sum_batches(this->n), w1 = this->d + 1;
    std::vector<double> parts(static_cast<std::size_t>(nb * k * w1));
    for_each_batch([&](std::int64_t r0, std::int64_t len, const T* xb) {
      assign_batch(r0, len, xb, k);
      batch_sums(r0, len, xb, k, parts.data() + (r0 / kBatchRows) * k * w1);
    });
    combine_batches(parts, nb, k, this->d, sums, wsum);
    return read_changed();
  }

  double inertia(const T* centers, std::int64_t k) override;

  NumericMode delivered() const override { return used_fast_ ? NumericMode::Fast : NumericMode::Identical; }

  // Steps held on the device (kmeans_cuda_sums.cuh).
  bool device_steps(std::int64_t k) override;
  void set_centers(const T* centers, std::int64_t k) override {
    const std::int64_t d = this->d;
    if (centers_.size() < static_cast<std::size_t>(k * d)) {
      centers_ = DeviceBuffer<T>(static_cast<std::size_t>(k * d), dev_);
      cnorms_ = DeviceBuffer<T>(static_cast<std::size_t>(k), dev_);
    }
    TL_CUDA_CHECK(cudaMemcpyAsync(centers_.data(), centers, sizeof(T) * k * d, cudaMemcpyHostToDevice, stream_));
  }
  void get_centers(T* centers, std::int64_t k) override { to_host(centers, centers_.data(), k * this->d); }

  typename KMeansEngine<T>::StepStats device_step(std::int64_t k, double* sums, double* wsum) override;
  const double* fast_sums(std::int64_t k);

  void copy_labels(std::int32_t* out) override { to_host(out, labels_.data(), this->n); }
  void copy_weights(T* out) override { to_host(out, w_, this->n); }
  void copy_row(std::int64_t i, T* out) override {
    if (resident_) {
      to_host(out, x_ + i * this->d, this->d);
      return;
    }
    const T* row = host_.data + i * this->d;
    for (std::int64_t f = 0; f < this->d; ++f) out[f] = centered_ ? num::sub(row[f], mu_[f]) : row[f];
  }

  // k-means++ and the farthest rows (kmeans_cuda_seed.cuh).
  void farthest(std::int64_t take, std::int64_t* idx, T* dist, std::int32_t* label, T* weight, T* rows) override;
  void pp_closest_ones() override;
  void pp_closest_to(std::int64_t row) override;
  void pp_candidates(const std::int64_t* cand, int nc, double* partials) override;
  void pp_commit(int t) override;
  void pp_partials(double* out) override;
  void pp_chunk_values(std::int64_t c, double* out) override;

 private:
  // The engine's buffers as float, for the float-only kernels (T is float
  // wherever they run; the code is compiled for double too).
  static const float* f32(const T* p) { return reinterpret_cast<const float*>(p); }
  static float* f32(T* p) { return reinterpret_cast<float*>(p); }

  // A persistent assignment kernel's launch for k centers (k = -1: not worked
  // out yet): centers staged at once, shared memory, resident blocks; d, and
  // so the kernel's instantiation, is fixed for the engine.
  struct LaunchShape {
    std::int64_t k = -1, resident = 1;
    int chunk = 0;
    std::size_t smem = 0;
    bool certify = false;  // canon_shape only: the certified assignment serves
  };

  // fn(r0, len, xb) for the batches of kBatchRows rows in order; xb holds the
  // batch's (centered) rows on the device: a pointer into the resident data,
  // or the streaming buffer after copying and centering the batch.
  template <class Fn>
  void for_each_batch(Fn&& fn) {
    const std::int64_t n = this->n, d = this->d;
    for (std::int64_t r0 = 0; r0 < n; r0 += kBatchRows) {
      const std::int64_t len = std::min(kBatchRows, n - r0);
      if (resident_) {
        fn(r0, len, x_ + r0 * d);
        continue;
      }
      copy_h2d(ctx_, xb_.data(), host_.data + r0 * d, sizeof(T) * len * d);
      if (centered_) {
        center_kernel<T><<<blocks_for(len * d, 256), 256, 0, stream_>>>(xb_.data(), dmu_.data(), len, d, xb_.data());
        TL_CUDA_CHECK_LAUNCH("center_kernel");
      }
      fn(r0, len, static_cast<const T*>(xb_.data()));
    }
  }

  void upload_centers(const T* centers, std::int64_t k) {
    set_centers(centers, k);
    prepare_centers(k);
  }
  // The norms of the centers in centers_ and a zero count of changed labels.
  void prepare_centers(std::int64_t k) {
    tile::row_sqnorms(centers_.data(), k, this->d, cnorms_.data(), stream_);
    TL_CUDA_CHECK(cudaMemsetAsync(changed_.data(), 0, sizeof(unsigned long long), stream_));
  }

  // The assignment (kmeans_cuda_assign.cuh).
  void assign_batch(std::int64_t r0, std::int64_t len, const T* xb, std::int64_t k);
  // Fast mode's tensor-core assignment: float data resident on the device,
  // at least kFastMinRows rows and kFastMinClusters centers. Three kernels,
  // TWINLEARN_KMEANS_FAST_KERNEL picks one:
  // - "mma" (the default for d <= 128): assign_mma_kernel (kmeans_mma.cuh),
  //   3xTF32 mma.sync products ranked in registers, one launch per batch;
  // - "gemm" (the default past 128 features): cuBLAS GEMMs over split rows
  //   (3 n d floats, made once per fit, when they fit a quarter of the free
  //   device memory) and argmin_rows_kernel beside them;
  // - "wmma": the fused WMMA kernel (kmeans_wmma.cuh; on the H200 its
  //   assignment took 34.7 ms for 1M x 64, k = 256, 20 iterations against
  //   27.3 ms for the GEMMs and argmin one after the other).
  enum class FastKernel { Gemm, Wmma, Mma };
  static FastKernel fast_kernel_choice(std::int64_t d);
  bool fast_path(std::int64_t k);
  bool launch_canon(std::int64_t r0, std::int64_t len, const T* xb, std::int64_t k);
  const LaunchShape& canon_shape(std::int64_t k);
  bool certified_assign(std::int64_t r0, std::int64_t len, const T* xb, std::int64_t k);
  template <int MT, int KS, int NB, int WARPS>
  void launch_mma(std::int64_t r0, std::int64_t len, const float* X, std::int64_t k, const Certify* cert);
  void mma_assign_batch(std::int64_t r0, std::int64_t len, const float* X, std::int64_t k,
                        const Certify* cert = nullptr);
  void fast_assign_batch(std::int64_t r0, std::int64_t len, std::int64_t k);

  std::int64_t read_changed() {
    unsigned long long h = 0;
    to_host(&h, changed_.data(), 1);
    return static_cast<std::int64_t>(h);
  }

  // The canonical sums (kmeans_cuda_sums.cuh).
  void batch_sums(std::int64_t r0, std::int64_t len, const T* xb, std::int64_t k, double* out_kw);
  const double* device_sums(std::int64_t r0, std::int64_t len, const T* xb, std::int64_t k);

  template <class U>
  void to_host(U* dst, const U* src, std::int64_t count) {
    if (count <= 0) return;
    TL_CUDA_CHECK(cudaMemcpyAsync(dst, src, sizeof(U) * count, cudaMemcpyDeviceToHost, stream_));
    TL_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  void ensure_closest() { closest_.reserve(static_cast<std::size_t>(this->n), dev_); }
  void upload_candidates(const std::int64_t* rows, int nc);

  Context ctx_;
  int dev_;
  DeviceGuard guard_;
  cudaStream_t stream_;
  bool resident_ = true, centered_ = false;
  MatrixView<const T> host_;
  std::vector<T> mu_;
  StagedMatrix<T> staged_, wstage_;
  DeviceBuffer<T> dmu_, centered_buf_, xb_, norms_, mind_, centers_, cnorms_, closest_, cand_, cand_norm_, cand_min_;
  DeviceBuffer<std::int32_t> labels_;
  DeviceBuffer<unsigned long long> changed_;
  DeviceBuffer<std::int64_t> iota_, perm_;
  DeviceBuffer<unsigned> keys_out_;
  DeviceBuffer<unsigned char> temp_;
  // batch_sums's per-iteration buffers, kept across iterations.
  DeviceBuffer<int> counts_;
  DeviceBuffer<std::int64_t> table_;
  DeviceBuffer<double> part_, out_;
  DeviceBuffer<double> pp_part_;  // k-means++'s chunk partials
  // Fast mode's tensor-core assignment: 0 undecided, 1 on, -1 off.
  int fast_state_ = 0;
  bool used_fast_ = false;
  DeviceBuffer<float> split_x_, split_c_, dots_;
  // device_step's buffers: the sums (k x (d + 1)), shifts, statistics, the
  // empty-cluster count, and the next centers (swapped with centers_).
  DeviceBuffer<double> step_sums_, step_shift_, step_stats_;
  DeviceBuffer<unsigned int> step_empty_;
  DeviceBuffer<T> next_centers_;
  int sum_blocks_ = 0;  // fast_sums_kernel's grid (0: not sized yet)
  bool canon_steps_ = false;  // device_steps chose the canonical held steps
  FastKernel kernel_ = FastKernel::Gemm;  // fast_path's choice of kernel
  LaunchShape mma_launch_, canon_launch_, cert_launch_;
  // certified_assign's buffers: per row of a batch its certified center or
  // -1, the undecided rows and their number.
  DeviceBuffer<std::int32_t> cert_cand_, cert_list_;
  DeviceBuffer<unsigned int> cert_count_;
  const T* x_ = nullptr;
  const T* w_ = nullptr;
};

}  // namespace
}  // namespace tl::detail
