// The CUDA KMeans engine's seeding (kmeans_cuda_engine.cuh): the steps of
// k-means++ (candidate distances, their weighted chunk sums) and the farthest
// rows that relocate empty clusters.
#pragma once
#include <cub/device/device_radix_sort.cuh>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cluster/kmeans/kmeans_cuda_engine.cuh"

namespace tl::detail {
namespace {

// One thread per row chunk: the sequential sum of w_i * v_i.
template <class T>
__global__ void chunk_wsum_kernel(const T* __restrict__ v, const T* __restrict__ w, std::int64_t n,
                                  double* __restrict__ out) {
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c * kRowChunk >= n) return;
  const std::int64_t r1 = min(n, (c + 1) * kRowChunk);
  double acc = 0.0;
  for (std::int64_t i = c * kRowChunk; i < r1; ++i) acc = num::add(acc, weighted_term(w ? w[i] : T(1), v[i]));
  out[c] = acc;
}

// Keys of the farthest-first order: ~sort_key(distance) (ascending keys =
// descending value order, NaN first), and the row indices.
template <class T>
__global__ void far_keys_kernel(const T* __restrict__ md, std::int64_t n, decltype(ties::sort_key(T(0)))* keys,
                                std::int64_t* __restrict__ ids) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    keys[i] = ~ties::sort_key(md[i]);
    ids[i] = i;
  }
}

// Fields of the rows order[0..take): out holds take distances, take weights,
// then (X given) the take rows; lab the labels. One thread per taken row.
template <class T>
__global__ void gather_far_kernel(const std::int64_t* __restrict__ order, std::int64_t take, const T* __restrict__ md,
                                  const std::int32_t* __restrict__ labels, const T* __restrict__ w,
                                  const T* __restrict__ X, std::int64_t d, T* __restrict__ out,
                                  std::int32_t* __restrict__ lab) {
  const std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= take) return;
  const std::int64_t i = order[t];
  out[t] = md[i];
  out[take + t] = w ? w[i] : T(1);
  lab[t] = labels[i];
  if (X)
    for (std::int64_t f = 0; f < d; ++f) out[2 * take + t * d + f] = X[i * d + f];
}

template <class T>
__global__ void fill_kernel(T* __restrict__ out, std::int64_t n, T v) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = v;
}

// Squared distances of every row to `nc` candidate rows (cand: nc x d,
// cnorm: nc), minimum with closest, to out (nc rows of stride ld). One
// thread per row.
template <class T>
__global__ void candidates_kernel(const T* __restrict__ X, const T* __restrict__ xn, std::int64_t n, std::int64_t d,
                                  const T* __restrict__ cand, const T* __restrict__ cnorm, int nc,
                                  const T* __restrict__ closest, T* __restrict__ out, std::int64_t ld) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  for (int t = 0; t < nc; ++t) {
    const T dv = dist::sq_from_dot(xn[i], cnorm[t], dist::accumulate<T, dist::Family::Dot>(X + i * d, cand + t * d, d, T(0)));
    if (closest) {
      const T c = closest[i];
      out[t * ld + i] = dist::value_less(dv, c) ? dv : c;
    } else {
      out[t * ld + i] = dv;
    }
  }
}

// A stable radix sort of (~sort_key(distance), row) pairs puts the
// farthest rows first, ties in row order; the first `take` rows' fields
// are gathered on the device.
template <class T>
void CudaEngine<T>::farthest(std::int64_t take, std::int64_t* idx, T* dist, std::int32_t* label, T* weight,
                             T* rows) {
  using K = decltype(ties::sort_key(T(0)));
  const std::int64_t n = this->n, d = this->d;
  DeviceBuffer<K> keys(static_cast<std::size_t>(2 * n), dev_);
  DeviceBuffer<std::int64_t> ids(static_cast<std::size_t>(2 * n), dev_);
  far_keys_kernel<T><<<blocks_for(n, 256), 256, 0, stream_>>>(mind_.data(), n, keys.data(), ids.data());
  TL_CUDA_CHECK_LAUNCH("far_keys_kernel");
  std::size_t temp_bytes = 0;
  TL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys.data(), keys.data() + n, ids.data(),
                                                ids.data() + n, n, 0, static_cast<int>(8 * sizeof(K)), stream_));
  temp_.reserve(temp_bytes, dev_);
  TL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp_.data(), temp_bytes, keys.data(), keys.data() + n, ids.data(),
                                                ids.data() + n, n, 0, static_cast<int>(8 * sizeof(K)), stream_));
  const std::int64_t* order = ids.data() + n;
  // Fields of the taken rows, gathered into one staging buffer per type.
  DeviceBuffer<T> tv(static_cast<std::size_t>(take * (2 + (resident_ ? d : 0))), dev_);
  DeviceBuffer<std::int32_t> tl(static_cast<std::size_t>(take), dev_);
  gather_far_kernel<T><<<blocks_for(take, 128), 128, 0, stream_>>>(order, take, mind_.data(), labels_.data(), w_,
                                                                   resident_ ? x_ : nullptr, d, tv.data(),
                                                                   tl.data());
  TL_CUDA_CHECK_LAUNCH("gather_far_kernel");
  TL_CUDA_CHECK(cudaMemcpyAsync(idx, order, sizeof(std::int64_t) * take, cudaMemcpyDeviceToHost, stream_));
  TL_CUDA_CHECK(cudaMemcpyAsync(label, tl.data(), sizeof(std::int32_t) * take, cudaMemcpyDeviceToHost, stream_));
  to_host(dist, tv.data(), take);
  to_host(weight, tv.data() + take, take);
  if (resident_) {
    to_host(rows, tv.data() + 2 * take, take * d);
  } else {
    for (std::int64_t t = 0; t < take; ++t) copy_row(idx[t], rows + t * d);
  }
}

template <class T>
void CudaEngine<T>::pp_closest_ones() {
  ensure_closest();
  fill_kernel<T><<<blocks_for(this->n, 256), 256, 0, stream_>>>(closest_.data(), this->n, T(1));
  TL_CUDA_CHECK_LAUNCH("fill_kernel");
}

template <class T>
void CudaEngine<T>::pp_closest_to(std::int64_t row) {
  ensure_closest();
  const std::int64_t rows[1] = {row};
  upload_candidates(rows, 1);
  for_each_batch([&](std::int64_t r0, std::int64_t len, const T* xb) {
    candidates_kernel<T><<<blocks_for(len, 128), 128, 0, stream_>>>(xb, norms_.data() + r0, len, this->d,
                                                                     cand_.data(), cand_norm_.data(), 1, nullptr,
                                                                     closest_.data() + r0, this->n);
    TL_CUDA_CHECK_LAUNCH("candidates_kernel");
  });
}

template <class T>
void CudaEngine<T>::pp_candidates(const std::int64_t* cand, int nc, double* partials) {
  const std::int64_t n = this->n, nch = row_chunks(n);
  upload_candidates(cand, nc);
  cand_min_.reserve(static_cast<std::size_t>(nc * n), dev_);
  for_each_batch([&](std::int64_t r0, std::int64_t len, const T* xb) {
    candidates_kernel<T><<<blocks_for(len, 128), 128, 0, stream_>>>(xb, norms_.data() + r0, len, this->d,
                                                                     cand_.data(), cand_norm_.data(), nc,
                                                                     closest_.data() + r0, cand_min_.data() + r0, n);
    TL_CUDA_CHECK_LAUNCH("candidates_kernel");
  });
  DeviceBuffer<double>& part = pp_part_;
  part.reserve(static_cast<std::size_t>(nc * nch), dev_);
  for (int t = 0; t < nc; ++t) {
    chunk_wsum_kernel<T><<<blocks_for(nch, 64), 64, 0, stream_>>>(cand_min_.data() + t * n, w_, n,
                                                                   part.data() + t * nch);
    TL_CUDA_CHECK_LAUNCH("chunk_wsum_kernel");
  }
  to_host(partials, part.data(), nc * nch);
}

template <class T>
void CudaEngine<T>::pp_commit(int t) {
  TL_CUDA_CHECK(cudaMemcpyAsync(closest_.data(), cand_min_.data() + t * this->n, sizeof(T) * this->n,
                                cudaMemcpyDeviceToDevice, stream_));
}

template <class T>
void CudaEngine<T>::pp_partials(double* out) {
  const std::int64_t nch = row_chunks(this->n);
  DeviceBuffer<double>& part = pp_part_;
  part.reserve(static_cast<std::size_t>(nch), dev_);
  chunk_wsum_kernel<T><<<blocks_for(nch, 64), 64, 0, stream_>>>(closest_.data(), w_, this->n, part.data());
  TL_CUDA_CHECK_LAUNCH("chunk_wsum_kernel");
  to_host(out, part.data(), nch);
}

template <class T>
void CudaEngine<T>::pp_chunk_values(std::int64_t c, double* out) {
  const std::int64_t r0 = c * kRowChunk, len = std::min(kRowChunk, this->n - r0);
  std::vector<T> v(static_cast<std::size_t>(len)), wv(static_cast<std::size_t>(len), T(1));
  to_host(v.data(), closest_.data() + r0, len);
  if (w_) to_host(wv.data(), w_ + r0, len);
  for (std::int64_t i = 0; i < len; ++i) out[i] = weighted_term(wv[i], v[i]);
}
// The candidate rows (centered) and their norms on the device.
template <class T>
void CudaEngine<T>::upload_candidates(const std::int64_t* rows, int nc) {
  const std::int64_t d = this->d;
  if (cand_.size() < static_cast<std::size_t>(nc * d)) {
    cand_ = DeviceBuffer<T>(static_cast<std::size_t>(nc * d), dev_);
    cand_norm_ = DeviceBuffer<T>(static_cast<std::size_t>(nc), dev_);
  }
  for (int t = 0; t < nc; ++t) {
    if (resident_) {
      TL_CUDA_CHECK(cudaMemcpyAsync(cand_.data() + t * d, x_ + rows[t] * d, sizeof(T) * d,
                                    cudaMemcpyDeviceToDevice, stream_));
    } else {
      std::vector<T> row(static_cast<std::size_t>(d));
      copy_row(rows[t], row.data());
      TL_CUDA_CHECK(cudaMemcpyAsync(cand_.data() + t * d, row.data(), sizeof(T) * d, cudaMemcpyHostToDevice,
                                    stream_));
      TL_CUDA_CHECK(cudaStreamSynchronize(stream_));
    }
    TL_CUDA_CHECK(cudaMemcpyAsync(cand_norm_.data() + t, norms_.data() + rows[t], sizeof(T),
                                  cudaMemcpyDeviceToDevice, stream_));
  }
}

}  // namespace
}  // namespace tl::detail
