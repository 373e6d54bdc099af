// The CUDA KMeans engine's cluster sums (kmeans_cuda_engine.cuh): the
// canonical sums of a batch (sort by label, chunks, per-cluster trees) and the
// Lloyd steps held on the device.
#pragma once
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

#include "cluster/kmeans/kmeans_cuda_engine.cuh"

namespace tl::detail {
namespace {

// Label histogram (integer atomics: exact). One thread per row.
__global__ void count_kernel(const std::int32_t* __restrict__ labels, std::int64_t n, int* __restrict__ counts) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&counts[labels[i]], 1);
}

// The same histogram for k <= kSharedCounts clusters: each block counts its
// grid-stride share of the rows in shared memory, then adds its nonzero
// counts to the global ones (a million rows on a few hundred clusters would
// otherwise queue on a few hundred global counters).
constexpr std::int64_t kSharedCounts = 8192;
__global__ void count_shared_kernel(const std::int32_t* __restrict__ labels, std::int64_t n, int k,
                                    int* __restrict__ counts) {
  extern __shared__ int local[];
  for (int c = threadIdx.x; c < k; c += blockDim.x) local[c] = 0;
  __syncthreads();
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    atomicAdd(&local[labels[i]], 1);
  __syncthreads();
  for (int c = threadIdx.x; c < k; c += blockDim.x)
    if (local[c]) atomicAdd(&counts[c], local[c]);
}

__global__ void iota_kernel(std::int64_t* __restrict__ out, std::int64_t n) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = i;
}

// Block q sums chunk q: rows perm[r0 .. r0 + len) of one cluster, in order
// (perm holds row indices within the batch X, w). Thread f (stepping by
// blockDim) owns feature f; f == d is the weight.
template <class T>
__global__ void chunk_sums_kernel(const T* __restrict__ X, const T* __restrict__ w, std::int64_t d,
                                  const std::int64_t* __restrict__ perm, const std::int64_t* __restrict__ chunks,
                                  double* __restrict__ part) {
  const std::int64_t q = blockIdx.x;
  const std::int64_t r0 = chunks[2 * q], len = chunks[2 * q + 1];
  for (std::int64_t f = threadIdx.x; f <= d; f += blockDim.x) {
    double acc = 0.0;
    // U rows' loads are issued before their terms are added, in row order.
    constexpr int U = 8;
    std::int64_t r = r0;
    for (; r + U <= r0 + len; r += U) {
      T xv[U], wv[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const std::int64_t i = perm[r + u];
        wv[u] = w ? w[i] : T(1);
        xv[u] = f < d ? X[i * d + f] : T(0);
      }
#pragma unroll
      for (int u = 0; u < U; ++u)
        acc = num::add(acc, f < d ? weighted_term(wv[u], xv[u]) : static_cast<double>(wv[u]));
    }
    for (; r < r0 + len; ++r) {
      const std::int64_t i = perm[r];
      const T wi = w ? w[i] : T(1);
      acc = num::add(acc, f < d ? weighted_term(wi, X[i * d + f]) : static_cast<double>(wi));
    }
    part[q * (d + 1) + f] = acc;
  }
}

// One thread per (cluster, feature column of d + 1): the pairwise tree over
// the cluster's chunk partials, in place, result to out (k x (d + 1)).
__global__ void cluster_tree_kernel(double* __restrict__ part, const std::int64_t* __restrict__ cfirst,
                                    std::int64_t k, std::int64_t w1, double* __restrict__ out) {
  const std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= k * w1) return;
  const std::int64_t c = t / w1, f = t % w1;
  const std::int64_t m = cfirst[c + 1] - cfirst[c];
  double v = 0.0;
  if (m > 0) {
    double* p = part + cfirst[c] * w1 + f;
    tree_reduce_inplace(p, m, w1, [](double a, double b) { return num::add(a, b); });
    v = p[0];
  }
  out[t] = v;
}

// ---------------------------------------------------------------------------
// Lloyd steps held on the device (kmeans_common.hpp, device_steps). Fast
// mode: cluster sums with atomics, in any order, then the next centers and
// their shift. Otherwise the canonical sums and host_update's arithmetic
// (canon_update_kernel). Either way one small copy of statistics to the host
// a step.
// ---------------------------------------------------------------------------

// Cluster sums: w * x and w (weight in column d) of every row into sums
// (k x (d + 1) doubles, zeroed before). A block takes spans of
// kFastSumSpan rows by grid stride and adds each span's rows into float
// sums in shared memory (atomics), then adds those into sums (float64
// atomics) and clears them: a float sum never holds more than one span's
// rows of a cluster. A warp takes kFastSumRows consecutive rows at a time,
// its lanes over features, the rows' loads issued before their atomics.
constexpr int kFastSumRows = 4;
constexpr std::int64_t kFastSumSpan = 4096;
template <class T>
__global__ void fast_sums_kernel(const T* __restrict__ X, const T* __restrict__ w, std::int64_t n, std::int64_t d,
                                 const std::int32_t* __restrict__ labels, std::int64_t k, double* __restrict__ sums) {
  extern __shared__ float acc[];
  const std::int64_t w1 = d + 1, kw = k * w1;
  for (std::int64_t e = threadIdx.x; e < kw; e += blockDim.x) acc[e] = 0.0f;
  const int lane = threadIdx.x % 32, wid = threadIdx.x / 32, nw = blockDim.x / 32;
  for (std::int64_t s0 = static_cast<std::int64_t>(blockIdx.x) * kFastSumSpan; s0 < n;
       s0 += static_cast<std::int64_t>(gridDim.x) * kFastSumSpan) {
    const std::int64_t s1 = min(n, s0 + kFastSumSpan);
    __syncthreads();
    for (std::int64_t r0 = s0 + static_cast<std::int64_t>(wid) * kFastSumRows; r0 < s1;
         r0 += static_cast<std::int64_t>(nw) * kFastSumRows) {
      int lab[kFastSumRows];
      float wr[kFastSumRows];
#pragma unroll
      for (int u = 0; u < kFastSumRows; ++u) {
        const bool live = r0 + u < s1;
        lab[u] = live ? labels[r0 + u] : -1;
        wr[u] = live ? static_cast<float>(w ? w[r0 + u] : T(1)) : 0.0f;
      }
      for (std::int64_t f = lane; f < d; f += 32) {
        float xv[kFastSumRows];
#pragma unroll
        for (int u = 0; u < kFastSumRows; ++u) xv[u] = lab[u] >= 0 ? static_cast<float>(X[(r0 + u) * d + f]) : 0.0f;
#pragma unroll
        for (int u = 0; u < kFastSumRows; ++u)
          if (lab[u] >= 0) atomicAdd(&acc[lab[u] * w1 + f], wr[u] * xv[u]);
      }
      if (lane == 0) {
#pragma unroll
        for (int u = 0; u < kFastSumRows; ++u)
          if (lab[u] >= 0) atomicAdd(&acc[lab[u] * w1 + d], wr[u]);
      }
    }
    __syncthreads();
    for (std::int64_t e = threadIdx.x; e < kw; e += blockDim.x) {
      const float v = acc[e];
      if (v != 0.0f) {
        atomicAdd(&sums[e], static_cast<double>(v));
        acc[e] = 0.0f;
      }
    }
  }
}

// The next centers from the sums, one warp per cluster (lanes over
// features): sum / weight rounded to T, written to next, and the cluster's
// squared shift (in T, lanes' terms added by shuffles) to shift; clusters
// without weight are counted in *empty and their next centers not written.
template <class T>
__global__ void fast_update_kernel(const double* __restrict__ sums, std::int64_t k, std::int64_t d,
                                   const T* __restrict__ C, T* __restrict__ next, double* __restrict__ shift,
                                   unsigned int* __restrict__ empty) {
  const std::int64_t c = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (c >= k) return;  // whole warps leave together
  const std::int64_t w1 = d + 1;
  const double ws = sums[c * w1 + d];
  T sh = T(0);
  if (ws > 0.0) {
    for (std::int64_t f = lane; f < d; f += 32) {
      const T v = static_cast<T>(num::div(sums[c * w1 + f], ws));
      next[c * d + f] = v;
      const T df = num::sub(v, C[c * d + f]);
      sh = num::fma(df, df, sh);
    }
  } else if (lane == 0) {
    atomicAdd(empty, 1u);
  }
#pragma unroll
  for (int o = 16; o >= 1; o >>= 1) sh += __shfl_xor_sync(0xffffffffu, sh, o);
  if (lane == 0) shift[c] = static_cast<double>(sh);
}

// host_update's arithmetic on the device (center_step), for the canonical
// held steps: one thread per cluster, so the bits are the host's. Clusters
// without weight are counted in *empty, their next centers not written and
// their shift 0.
template <class T>
__global__ void canon_update_kernel(const double* __restrict__ sums, std::int64_t k, std::int64_t d,
                                    const T* __restrict__ C, T* __restrict__ next, double* __restrict__ shift,
                                    unsigned int* __restrict__ empty) {
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= k) return;
  const double ws = sums[c * (d + 1) + d];
  T sh = T(0);
  if (ws > 0.0)
    sh = center_step(sums + c * (d + 1), ws, C + c * d, d, next + c * d);
  else
    atomicAdd(empty, 1u);
  shift[c] = static_cast<double>(sh);
}

// stats = {labels changed, empty clusters, total squared shift (clusters
// added in order)}; one thread.
__global__ void fast_stats_kernel(const double* __restrict__ shift, std::int64_t k,
                                  const unsigned long long* __restrict__ changed,
                                  const unsigned int* __restrict__ empty, double* __restrict__ stats) {
  double tot = 0.0;
  for (std::int64_t c = 0; c < k; ++c) tot = num::add(tot, shift[c]);
  stats[0] = static_cast<double>(*changed);
  stats[1] = static_cast<double>(*empty);
  stats[2] = tot;
}

// Steps held on the device (TWINLEARN_KMEANS_DEVICE_STEPS=0 turns them
// off: every step's update then runs on the host):
// - fast mode's tensor-core path (float data on the device, see
//   fast_path) with the cluster sums in shared memory (k x (d + 1) floats
//   within the block limit);
// - otherwise, for resident data of one sum batch, the canonical sums
//   (batch_sums's sort, chunks and trees) and host_update's arithmetic
//   (canon_update_kernel): the host's bits, without the sums' copy to the
//   host, the update there and the centers' copy back each step.
template <class T>
bool CudaEngine<T>::device_steps(std::int64_t k) {
  canon_steps_ = false;
  if (const char* env = std::getenv("TWINLEARN_KMEANS_DEVICE_STEPS"))
    if (std::string(env) == "0") return false;
  if constexpr (std::is_same_v<T, float>) {
    if (fast_path(k)) {
      int optin = 0;
      TL_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev_));
      if (static_cast<std::int64_t>(sizeof(float)) * k * (this->d + 1) <= optin) return true;
    }
  }
  canon_steps_ = resident_ && this->n <= kBatchRows;
  return canon_steps_;
}

template <class T>
typename KMeansEngine<T>::StepStats CudaEngine<T>::device_step(std::int64_t k, double* sums, double* wsum) {
  const std::int64_t n = this->n, d = this->d, w1 = d + 1, kw = k * w1;
  prepare_centers(k);
  for_each_batch([&](std::int64_t r0, std::int64_t len, const T* xb) { assign_batch(r0, len, xb, k); });
  step_shift_.reserve(static_cast<std::size_t>(k), dev_);
  step_stats_.reserve(3, dev_);
  step_empty_.reserve(1, dev_);
  next_centers_.reserve(centers_.size(), dev_);
  TL_CUDA_CHECK(cudaMemsetAsync(step_empty_.data(), 0, sizeof(unsigned int), stream_));
  const double* step_sums = canon_steps_ ? device_sums(0, n, x_, k) : fast_sums(k);
  if (canon_steps_) {
    canon_update_kernel<T><<<blocks_for(k, 128), 128, 0, stream_>>>(
        step_sums, k, d, centers_.data(), next_centers_.data(), step_shift_.data(), step_empty_.data());
    TL_CUDA_CHECK_LAUNCH("canon_update_kernel");
  } else {
    fast_update_kernel<T><<<blocks_for(k * 32, 256), 256, 0, stream_>>>(
        step_sums, k, d, centers_.data(), next_centers_.data(), step_shift_.data(), step_empty_.data());
    TL_CUDA_CHECK_LAUNCH("fast_update_kernel");
  }
  fast_stats_kernel<<<1, 1, 0, stream_>>>(step_shift_.data(), k, changed_.data(), step_empty_.data(),
                                           step_stats_.data());
  TL_CUDA_CHECK_LAUNCH("fast_stats_kernel");
  double st[3];
  to_host(st, step_stats_.data(), 3);
  typename KMeansEngine<T>::StepStats out;
  out.changed = static_cast<std::int64_t>(st[0]);
  out.empty = static_cast<std::int64_t>(st[1]);
  out.shift = st[2];
  if (out.empty == 0) {
    std::swap(centers_, next_centers_);
  } else {
    std::vector<double> h(static_cast<std::size_t>(kw));
    to_host(h.data(), step_sums, kw);
    for (std::int64_t c = 0; c < k; ++c) {
      for (std::int64_t f = 0; f < d; ++f) sums[c * d + f] = h[c * w1 + f];
      wsum[c] = h[c * w1 + d];
    }
  }
  return out;
}

// Fast mode's cluster sums into step_sums_ (device, k x (d + 1)): spans of
// rows over as many blocks of fast_sums_kernel as fit the device at once.
template <class T>
const double* CudaEngine<T>::fast_sums(std::int64_t k) {
  const std::int64_t n = this->n, d = this->d, kw = k * (d + 1);
  const int threads = 512;
  const std::size_t smem = sizeof(float) * static_cast<std::size_t>(kw);
  if (sum_blocks_ == 0) {
    if (smem > 48 * 1024)
      TL_CUDA_CHECK(cudaFuncSetAttribute(fast_sums_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(smem)));
    int per_sm = 0;
    TL_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fast_sums_kernel<T>, threads, smem));
    sum_blocks_ = std::max(per_sm, 1) * sm_count(dev_);
  }
  const std::int64_t spans = (n + kFastSumSpan - 1) / kFastSumSpan;
  const unsigned nb = static_cast<unsigned>(std::min<std::int64_t>(spans, sum_blocks_));
  step_sums_.reserve(static_cast<std::size_t>(kw), dev_);
  TL_CUDA_CHECK(cudaMemsetAsync(step_sums_.data(), 0, sizeof(double) * kw, stream_));
  fast_sums_kernel<T><<<nb, threads, smem, stream_>>>(x_, w_, n, d, labels_.data(), k, step_sums_.data());
  TL_CUDA_CHECK_LAUNCH("fast_sums_kernel");
  return step_sums_.data();
}

// Sums of one batch (rows r0 .. r0 + len, data xb) per cluster into out_kw
// (host, k x (d + 1)).
template <class T>
void CudaEngine<T>::batch_sums(std::int64_t r0, std::int64_t len, const T* xb, std::int64_t k, double* out_kw) {
  to_host(out_kw, device_sums(r0, len, xb, k), k * (this->d + 1));
}

// The canonical sums of one batch per cluster (device, k x (d + 1), weight
// in column d; valid until the next call): stable radix sort of the
// batch's labels (CUB's LSD sort keeps equal keys in input order), the
// chunk table on the host, chunk_sums_kernel, then the per-cluster tree.
template <class T>
const double* CudaEngine<T>::device_sums(std::int64_t r0, std::int64_t len, const T* xb, std::int64_t k) {
  const std::int64_t d = this->d, w1 = d + 1;
  if (iota_.size() < static_cast<std::size_t>(len)) {
    iota_ = DeviceBuffer<std::int64_t>(static_cast<std::size_t>(len), dev_);
    iota_kernel<<<blocks_for(len, 256), 256, 0, stream_>>>(iota_.data(), len);
    TL_CUDA_CHECK_LAUNCH("iota_kernel");
    perm_ = DeviceBuffer<std::int64_t>(static_cast<std::size_t>(len), dev_);
    keys_out_ = DeviceBuffer<unsigned>(static_cast<std::size_t>(len), dev_);
  }
  int end_bit = 1;
  while ((std::int64_t(1) << end_bit) < k) ++end_bit;
  const unsigned* keys_in = reinterpret_cast<const unsigned*>(labels_.data() + r0);
  std::size_t temp_bytes = 0;
  TL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys_in, keys_out_.data(), iota_.data(),
                                                perm_.data(), len, 0, end_bit, stream_));
  temp_.reserve(temp_bytes, dev_);
  TL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp_.data(), temp_bytes, keys_in, keys_out_.data(), iota_.data(),
                                                perm_.data(), len, 0, end_bit, stream_));
  DeviceBuffer<int>& counts = counts_;
  counts.reserve(static_cast<std::size_t>(k), dev_);
  TL_CUDA_CHECK(cudaMemsetAsync(counts.data(), 0, sizeof(int) * k, stream_));
  if (k <= kSharedCounts) {
    const unsigned grid = static_cast<unsigned>(std::min<std::int64_t>(blocks_for(len, 1024), 512));
    count_shared_kernel<<<grid, 1024, sizeof(int) * k, stream_>>>(labels_.data() + r0, len, static_cast<int>(k),
                                                                   counts.data());
    TL_CUDA_CHECK_LAUNCH("count_shared_kernel");
  } else {
    count_kernel<<<blocks_for(len, 256), 256, 0, stream_>>>(labels_.data() + r0, len, counts.data());
    TL_CUDA_CHECK_LAUNCH("count_kernel");
  }
  std::vector<int> hc(static_cast<std::size_t>(k));
  to_host(hc.data(), counts.data(), k);
  std::vector<std::int64_t> cfirst(static_cast<std::size_t>(k + 1), 0), table;
  std::int64_t start = 0;
  for (std::int64_t c = 0; c < k; ++c) {
    const std::int64_t cnt = hc[c];
    for (std::int64_t o = 0; o < cnt; o += kClusterChunk) {
      table.push_back(start + o);
      table.push_back(std::min(kClusterChunk, cnt - o));
    }
    cfirst[c + 1] = cfirst[c] + (cnt + kClusterChunk - 1) / kClusterChunk;
    start += cnt;
  }
  const std::int64_t nch = cfirst[k];
  // The chunk table and the cluster starts go up in one copy: table, then cfirst.
  table.insert(table.end(), cfirst.begin(), cfirst.end());
  DeviceBuffer<std::int64_t>& dtable = table_;
  dtable.reserve(table.size(), dev_);
  TL_CUDA_CHECK(cudaMemcpyAsync(dtable.data(), table.data(), sizeof(std::int64_t) * table.size(),
                                cudaMemcpyHostToDevice, stream_));
  const std::int64_t* dcfirst = dtable.data() + 2 * nch;
  DeviceBuffer<double>& part = part_;
  part.reserve(static_cast<std::size_t>(std::max<std::int64_t>(nch, 1) * w1), dev_);
  DeviceBuffer<double>& out = out_;
  out.reserve(static_cast<std::size_t>(k * w1), dev_);
  if (nch > 0) {
    const int block = static_cast<int>(std::min<std::int64_t>(256, (w1 + 31) / 32 * 32));
    chunk_sums_kernel<T><<<static_cast<unsigned>(nch), block, 0, stream_>>>(xb, w_ ? w_ + r0 : nullptr, d,
                                                                            perm_.data(), dtable.data(),
                                                                            part.data());
    TL_CUDA_CHECK_LAUNCH("chunk_sums_kernel");
  }
  cluster_tree_kernel<<<blocks_for(k * w1, 128), 128, 0, stream_>>>(part.data(), dcfirst, k, w1, out.data());
  TL_CUDA_CHECK_LAUNCH("cluster_tree_kernel");
  return out.data();
}

}  // namespace
}  // namespace tl::detail
