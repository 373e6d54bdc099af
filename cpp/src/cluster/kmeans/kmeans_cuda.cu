// The CUDA KMeans engine: the passes of kmeans_common.hpp on the device, in
// the canonical orders of kmeans.hpp (the CPU engine computes the same bits).
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "cluster/kmeans/kmeans_canon.cuh"
#include "cluster/kmeans/kmeans_common.hpp"
#include "cluster/kmeans/kmeans_mma.cuh"
#include "core/cuda/blas.cuh"
#include "core/cuda/tf32_split.cuh"
#include "neighbors/distance/distance_tile.cuh"

namespace tl::detail {
namespace {

using tile::Cfg;

unsigned blocks_for(std::int64_t n, int block) { return static_cast<unsigned>((n + block - 1) / block); }

// X - mean (in T), one thread per element; out may be X (in place).
template <class T>
__global__ void center_kernel(const T* X, const T* __restrict__ mu, std::int64_t n, std::int64_t d, T* out) {
  const std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e < n * d) out[e] = num::sub(X[e], mu[e % d]);
}

// ---------------------------------------------------------------------------
// Fast mode's assignment on the tensor cores: the dot products of rows and
// centers from one cuBLAS TF32 GEMM over split operands (3xTF32,
// core/cuda/tf32_split.cuh), summed in float in cuBLAS's order: about
// float's accuracy, no bit promise; argmin_rows_kernel then ranks each row's
// centers (its own ranking value, one FMA, and the same tie rule as
// assign_kernel: lowest center).
// ---------------------------------------------------------------------------
constexpr std::int64_t kFastMinRows = 65536, kFastMinClusters = 16;
constexpr std::int64_t kMmaMaxFeatures = 128;  // assign_mma_kernel: d <= 8 KS, KS <= 16
// The certified assignment's smallest fit: below it one canonical launch an
// assignment costs less than the filter's three launches and a memset.
constexpr std::int64_t kCertMinRows = 16384;
constexpr int kArgminBatch = 4;  // argmin_rows_kernel: column groups loaded at once

// Nearest center of each row from its dot products (D: rows x k, leading
// dimension ldd, a multiple of 4). Fast mode's arithmetic: a row's centers are
// ranked by cn - 2 dot (one FMA; the row's own norm is the same for all of
// them), ties by lowest center; the row's squared distance is xn + that,
// clamped at 0. The data are finite (checked before the fit). Eight lanes per
// row, four columns per lane and step (128-bit loads of D and of cn), so a
// warp ranks four rows at a time and reduces each in three shuffles; a warp's
// lanes loop together (the shuffles take the whole warp).
// Ranks four consecutive columns c0..c0+3 (dot products dv, center norms cv)
// into a lane's (best, bi). A lane's columns rise: the first of equal values
// is kept.
__device__ __forceinline__ void rank_columns(const float (&dv)[4], const float (&cv)[4], int c0, float& best,
                                             int& bi) {
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const float v = fmaf(-2.0f, dv[j], cv[j]);
    if (v < best) {
      best = v;
      bi = c0 + j;
    }
  }
}

__global__ void argmin_rows_kernel(const float* __restrict__ D, std::int64_t rows, int k, std::int64_t ldd,
                                   const float* __restrict__ xn, const float* __restrict__ cn,
                                   std::int32_t* __restrict__ labels, float* __restrict__ mind,
                                   unsigned long long* __restrict__ changed) {
  const int lane = threadIdx.x % 32, sub = lane % 8;
  const std::int64_t warp = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / 32);
  const bool vec = (reinterpret_cast<std::uintptr_t>(cn) % 16) == 0;
  const int kfull = k / 32 * 32;
  unsigned long long ch = 0;
  for (std::int64_t base = warp * 4; base < rows; base += warps * 4) {
    const std::int64_t r = base + lane / 8;
    const bool live = r < rows;
    const float* drow = D + (live ? r : 0) * ldd;
    float best = INFINITY;
    int bi = INT_MAX;
    // Whole groups of 32 columns, kArgminBatch groups at a time: the lane's
    // loads of the batch are issued before any of them is ranked (the
    // reads of a row are then in flight together, not one after another).
    int c = 4 * sub;
    for (; c + 32 * (kArgminBatch - 1) + 4 <= kfull; c += 32 * kArgminBatch) {
      float4 d4[kArgminBatch], c4[kArgminBatch];
#pragma unroll
      for (int b = 0; b < kArgminBatch; ++b) d4[b] = *reinterpret_cast<const float4*>(drow + c + 32 * b);
#pragma unroll
      for (int b = 0; b < kArgminBatch; ++b)
        c4[b] = vec ? *reinterpret_cast<const float4*>(cn + c + 32 * b)
                    : make_float4(cn[c + 32 * b], cn[c + 32 * b + 1], cn[c + 32 * b + 2], cn[c + 32 * b + 3]);
#pragma unroll
      for (int b = 0; b < kArgminBatch; ++b) {
        const float dv[4] = {d4[b].x, d4[b].y, d4[b].z, d4[b].w}, cv[4] = {c4[b].x, c4[b].y, c4[b].z, c4[b].w};
        rank_columns(dv, cv, c + 32 * b, best, bi);
      }
    }
    for (; c < k; c += 32) {
      float dv[4], cv[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        dv[j] = 0.0f;
        cv[j] = c + j < k ? cn[c + j] : INFINITY;
        if (c + j < k) dv[j] = drow[c + j];
      }
      rank_columns(dv, cv, c, best, bi);
    }
#pragma unroll
    for (int o = 4; o >= 1; o >>= 1) {
      const float ov = __shfl_xor_sync(0xffffffffu, best, o);
      const int oi = __shfl_xor_sync(0xffffffffu, bi, o);
      if (ov < best || (ov == best && oi < bi)) {
        best = ov;
        bi = oi;
      }
    }
    if (live && sub == 0) {
      ch += labels[r] != bi;
      labels[r] = bi;
      mind[r] = fmaxf(xn[r] + best, 0.0f);
    }
  }
  add_block_count(ch, changed);
}

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
class CudaEngine final : public KMeansEngine<T> {
 public:
  CudaEngine(const Context& ctx, MatrixView<const T> X, VectorView<const T> w, const double* x_mean)
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

  double inertia(const T* centers, std::int64_t k) override {
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

  NumericMode delivered() const override { return used_fast_ ? NumericMode::Fast : NumericMode::Identical; }

  // Steps held on the device (TWINLEARN_KMEANS_DEVICE_STEPS=0 turns them
  // off: every step's update then runs on the host):
  // - fast mode's tensor-core path (float data on the device, see
  //   fast_path) with the cluster sums in shared memory (k x (d + 1) floats
  //   within the block limit);
  // - otherwise, for resident data of one sum batch, the canonical sums
  //   (batch_sums's sort, chunks and trees) and host_update's arithmetic
  //   (canon_update_kernel): the host's bits, without the sums' copy to the
  //   host, the update there and the centers' copy back each step.
  bool device_steps(std::int64_t k) override {
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
  void set_centers(const T* centers, std::int64_t k) override {
    const std::int64_t d = this->d;
    if (centers_.size() < static_cast<std::size_t>(k * d)) {
      centers_ = DeviceBuffer<T>(static_cast<std::size_t>(k * d), dev_);
      cnorms_ = DeviceBuffer<T>(static_cast<std::size_t>(k), dev_);
    }
    TL_CUDA_CHECK(cudaMemcpyAsync(centers_.data(), centers, sizeof(T) * k * d, cudaMemcpyHostToDevice, stream_));
  }
  void get_centers(T* centers, std::int64_t k) override { to_host(centers, centers_.data(), k * this->d); }

  typename KMeansEngine<T>::StepStats device_step(std::int64_t k, double* sums, double* wsum) override {
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
  const double* fast_sums(std::int64_t k) {
    const std::int64_t n = this->n, d = this->d, kw = k * (d + 1);
    const int threads = 512;
    const std::size_t smem = sizeof(float) * static_cast<std::size_t>(kw);
    if (sum_blocks_ == 0) {
      if (smem > 48 * 1024)
        TL_CUDA_CHECK(cudaFuncSetAttribute(fast_sums_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(smem)));
      int per_sm = 0, sms = 0;
      TL_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fast_sums_kernel<T>, threads, smem));
      TL_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev_));
      sum_blocks_ = std::max(per_sm, 1) * sms;
    }
    const std::int64_t spans = (n + kFastSumSpan - 1) / kFastSumSpan;
    const unsigned nb = static_cast<unsigned>(std::min<std::int64_t>(spans, sum_blocks_));
    step_sums_.reserve(static_cast<std::size_t>(kw), dev_);
    TL_CUDA_CHECK(cudaMemsetAsync(step_sums_.data(), 0, sizeof(double) * kw, stream_));
    fast_sums_kernel<T><<<nb, threads, smem, stream_>>>(x_, w_, n, d, labels_.data(), k, step_sums_.data());
    TL_CUDA_CHECK_LAUNCH("fast_sums_kernel");
    return step_sums_.data();
  }

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
  // A stable radix sort of (~sort_key(distance), row) pairs puts the
  // farthest rows first, ties in row order; the first `take` rows' fields
  // are gathered on the device.
  void farthest(std::int64_t take, std::int64_t* idx, T* dist, std::int32_t* label, T* weight, T* rows) override {
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

  void pp_closest_ones() override {
    ensure_closest();
    fill_kernel<T><<<blocks_for(this->n, 256), 256, 0, stream_>>>(closest_.data(), this->n, T(1));
    TL_CUDA_CHECK_LAUNCH("fill_kernel");
  }
  void pp_closest_to(std::int64_t row) override {
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
  void pp_candidates(const std::int64_t* cand, int nc, double* partials) override {
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
  void pp_commit(int t) override {
    TL_CUDA_CHECK(cudaMemcpyAsync(closest_.data(), cand_min_.data() + t * this->n, sizeof(T) * this->n,
                                  cudaMemcpyDeviceToDevice, stream_));
  }
  void pp_partials(double* out) override {
    const std::int64_t nch = row_chunks(this->n);
    DeviceBuffer<double>& part = pp_part_;
    part.reserve(static_cast<std::size_t>(nch), dev_);
    chunk_wsum_kernel<T><<<blocks_for(nch, 64), 64, 0, stream_>>>(closest_.data(), w_, this->n, part.data());
    TL_CUDA_CHECK_LAUNCH("chunk_wsum_kernel");
    to_host(out, part.data(), nch);
  }
  void pp_chunk_values(std::int64_t c, double* out) override {
    const std::int64_t r0 = c * kRowChunk, len = std::min(kRowChunk, this->n - r0);
    std::vector<T> v(static_cast<std::size_t>(len)), wv(static_cast<std::size_t>(len), T(1));
    to_host(v.data(), closest_.data() + r0, len);
    if (w_) to_host(wv.data(), w_ + r0, len);
    for (std::int64_t i = 0; i < len; ++i) out[i] = weighted_term(wv[i], v[i]);
  }

 private:
  // A persistent assignment kernel's launch for k centers (k = -1: not worked
  // out yet): centers staged at once, shared memory, resident blocks; d, and
  // so the kernel's instantiation, is fixed for the engine.
  // The engine's buffers as float, for the float-only kernels (T is float
  // wherever they run; the code is compiled for double too).
  static const float* f32(const T* p) { return reinterpret_cast<const float*>(p); }
  static float* f32(T* p) { return reinterpret_cast<float*>(p); }

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

  void assign_batch(std::int64_t r0, std::int64_t len, const T* xb, std::int64_t k) {
    if constexpr (std::is_same_v<T, float>) {
      if (fast_path(k)) {
        fast_assign_batch(r0, len, k);
        return;
      }
      if (certified_assign(r0, len, xb, k)) return;
      if (launch_canon(r0, len, xb, k)) return;
    }
    assign_kernel<T><<<blocks_for(len, Cfg<T>::BM), tile::kThreads, 0, stream_>>>(
        xb, norms_.data() + r0, len, centers_.data(), cnorms_.data(), k, this->d, labels_.data() + r0,
        mind_.data() + r0, changed_.data());
    TL_CUDA_CHECK_LAUNCH("assign_kernel");
  }

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
  static FastKernel fast_kernel_choice(std::int64_t d) {
    const char* env = std::getenv("TWINLEARN_KMEANS_FAST_KERNEL");
    const std::string v = env != nullptr ? env : "";
    if (v == "wmma") return FastKernel::Wmma;
    if (v == "gemm" || d > kMmaMaxFeatures) return FastKernel::Gemm;
    return FastKernel::Mma;
  }

  bool fast_path(std::int64_t k) {
    if (fast_state_ == 0) {
      fast_state_ = -1;
      const std::int64_t n = this->n, d = this->d;
      kernel_ = fast_kernel_choice(d);
      if (ctx_.mode() != NumericMode::Fast || !resident_ || n < kFastMinRows) return false;
      if (kernel_ != FastKernel::Gemm) {
        fast_state_ = 1;
      } else {
        std::size_t free_b = 0, total_b = 0;
        TL_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
        const std::size_t need = sizeof(float) * static_cast<std::size_t>(3 * n * d);
        if (need <= free_b / 4) {
          split_x_ = DeviceBuffer<float>(static_cast<std::size_t>(3 * n * d), dev_);
          split_tf32(f32(x_), n, d, false, split_x_.data(), stream_);
          fast_state_ = 1;
        }
      }
    }
    return fast_state_ == 1 && k >= kFastMinClusters;
  }

  // assign_canon_kernel over rows r0 .. r0 + len of the batch xb where
  // CanonAssign::staged_for stages the centers (false otherwise: assign_kernel
  // serves); TWINLEARN_KMEANS_CANON_KERNEL=tile always leaves it to
  // assign_kernel and TWINLEARN_KMEANS_CANON_CHUNK stages fewer centers at a
  // time (tests: the same bits every way). A persistent grid; worked out once
  // per number of centers.
  bool launch_canon(std::int64_t r0, std::int64_t len, const T* xb, std::int64_t k) {
    using S = CanonAssign;
    const LaunchShape& L = canon_shape(k);
    if (L.chunk == 0) return false;
    const std::int64_t tiles = (len + S::kRows - 1) / S::kRows;
    const unsigned grid = static_cast<unsigned>(std::max<std::int64_t>(1, std::min(tiles, L.resident)));
    assign_canon_kernel<<<grid, S::kThreads, L.smem, stream_>>>(
        f32(xb), f32(norms_.data()) + r0, len, f32(centers_.data()), f32(cnorms_.data()), static_cast<int>(k),
        static_cast<int>(this->d), L.chunk, labels_.data() + r0, f32(mind_.data()) + r0, changed_.data());
    TL_CUDA_CHECK_LAUNCH("assign_canon_kernel");
    return true;
  }
  // assign_canon_kernel's launch for k centers (chunk 0: assign_kernel
  // serves) and whether the certified assignment serves, worked out once per
  // k.
  const LaunchShape& canon_shape(std::int64_t k) {
    using S = CanonAssign;
    const std::int64_t d = this->d;
    LaunchShape& L = canon_launch_;
    if (L.k != k) {
      int per_sm_bytes = 0, reserved = 0, sms = 0, per_sm = 0;
      TL_CUDA_CHECK(cudaDeviceGetAttribute(&per_sm_bytes, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev_));
      TL_CUDA_CHECK(cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, dev_));
      TL_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev_));
      const char* kernel = std::getenv("TWINLEARN_KMEANS_CANON_KERNEL");
      const char* cap = std::getenv("TWINLEARN_KMEANS_CANON_CHUNK");
      const std::string choice = kernel != nullptr ? kernel : "";
      L.k = k;
      L.chunk = choice == "tile" ? 0
                                 : S::staged_for(k, d, S::two_block_budget(per_sm_bytes, reserved),
                                                 cap != nullptr ? std::strtoll(cap, nullptr, 10) : 0);
      L.certify = L.chunk > 0 && choice != "canon" && d <= dist::kFilterMaxFeatures && this->n >= kCertMinRows;
      if (L.chunk > 0) {
        L.smem = S::smem_bytes(d, L.chunk);
        TL_CUDA_CHECK(cudaFuncSetAttribute(assign_canon_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(L.smem)));
        TL_CUDA_CHECK(
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, assign_canon_kernel, S::kThreads, L.smem));
        L.resident = std::int64_t(std::max(per_sm, 1)) * sms;
      }
    }
    return L;
  }

  // The certified canonical assignment (identical and deterministic modes,
  // float data up to dist::kFilterMaxFeatures (128) features where
  // assign_canon_kernel stages all the centers, fits of kCertMinRows rows or
  // more): fast mode's tensor-core kernel as a filter certifies each row's
  // nearest center where no other center can be the canonical one
  // (kmeans_mma.cuh: Certify; kmeans_common.hpp: certify_threshold);
  // certified_rows_kernel computes those rows' canonical distances and
  // assign_canon_kernel the other rows, gathered. The canonical kernels' bits
  // at a fraction of their arithmetic. TWINLEARN_KMEANS_CANON_KERNEL=canon
  // (or tile) turns it off (tests: the same bits every way).
  bool certified_assign(std::int64_t r0, std::int64_t len, const T* xb, std::int64_t k) {
    const std::int64_t d = this->d;
    const LaunchShape& C = canon_shape(k);
    if (!C.certify) return false;
    const std::size_t cap = static_cast<std::size_t>(std::min(this->n, kBatchRows));
    cert_cand_.reserve(cap, dev_);
    cert_list_.reserve(cap, dev_);
    cert_count_.reserve(1, dev_);
    TL_CUDA_CHECK(cudaMemsetAsync(cert_count_.data(), 0, sizeof(unsigned int), stream_));
    Certify cert;
    cert.cand = cert_cand_.data();
    cert.list = cert_list_.data();
    cert.count = cert_count_.data();
    const float *xf = f32(xb), *xnf = f32(norms_.data()) + r0, *cf = f32(centers_.data());
    const float* cnf = f32(cnorms_.data());
    float* mindf = f32(mind_.data()) + r0;
    mma_assign_batch(r0, len, xf, k, &cert);
    certified_rows_kernel<<<blocks_for(len, kCertRows), kCertRows, sizeof(float) * kCertRows * (d + 1), stream_>>>(
        xf, xnf, len, cf, cnf, static_cast<int>(d), cert_cand_.data(), labels_.data() + r0, mindf, changed_.data());
    TL_CUDA_CHECK_LAUNCH("certified_rows_kernel");
    // Every resident block; those past the undecided rows' tiles return at once.
    assign_canon_kernel<<<static_cast<unsigned>(C.resident), CanonAssign::kThreads, C.smem, stream_>>>(
        xf, xnf, len, cf, cnf, static_cast<int>(k), static_cast<int>(d), C.chunk, labels_.data() + r0, mindf,
        changed_.data(), cert_list_.data(), cert_count_.data());
    TL_CUDA_CHECK_LAUNCH("assign_canon_kernel");
    return true;
  }

  // assign_mma_kernel over rows r0 .. r0 + len: the shape for d, as many
  // centers staged at once as the block's shared memory holds (or
  // TWINLEARN_KMEANS_MMA_CHUNK, rounded to the kernel's step), a persistent
  // grid of as many blocks as the device keeps resident. The launch shape is
  // worked out once per number of centers (mma_launch_), not per assignment.
  // With cert, the kernel certifies instead (certified_assign); X is the
  // batch's rows.
  template <int MT, int KS, int NB, int WARPS>
  void launch_mma(std::int64_t r0, std::int64_t len, const float* X, std::int64_t k, const Certify* cert) {
    using S = MmaAssign<MT, KS, NB, WARPS>;
    auto kern = cert ? assign_mma_kernel<MT, KS, NB, WARPS, true> : assign_mma_kernel<MT, KS, NB, WARPS, false>;
    LaunchShape& L = cert ? cert_launch_ : mma_launch_;
    if (L.k != k) {
      int optin = 0, sms = 0, per_sm = 0;
      TL_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev_));
      TL_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev_));
      std::int64_t cap = std::numeric_limits<int>::max();  // TWINLEARN_KMEANS_MMA_CHUNK: fewer centers at a time (tests)
      if (const char* env = std::getenv("TWINLEARN_KMEANS_MMA_CHUNK")) cap = std::strtoll(env, nullptr, 10);
      L.chunk = S::chunk_for(k, optin, cap);
      L.smem = S::smem_bytes(L.chunk);
      TL_CUDA_CHECK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(L.smem)));
      TL_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, S::kThreads, L.smem));
      L.resident = std::int64_t(std::max(per_sm, 1)) * sms;
      L.k = k;
    }
    const std::int64_t tiles = (len + S::kRows - 1) / S::kRows;
    const unsigned grid = static_cast<unsigned>(std::max<std::int64_t>(1, std::min(tiles, L.resident)));
    const std::int64_t d = this->d;
    kern<<<grid, S::kThreads, L.smem, stream_>>>(X, f32(norms_.data()) + r0, len, f32(centers_.data()),
                                                 f32(cnorms_.data()), static_cast<int>(k), static_cast<int>(d),
                                                 L.chunk, labels_.data() + r0, f32(mind_.data()) + r0,
                                                 changed_.data(), cert ? *cert : Certify{});
    TL_CUDA_CHECK_LAUNCH("assign_mma_kernel");
  }
  void mma_assign_batch(std::int64_t r0, std::int64_t len, const float* X, std::int64_t k,
                        const Certify* cert = nullptr) {
    const std::int64_t d = this->d;
    // Up to 64 features: 16 warps of one 16-row block each, 4 products of 8
    // centers side by side (1M x 64, k = 256 on the H100: 0.47 ms an
    // assignment against 0.55 ms for 8 warps of 32 rows, 2 products); past
    // that the fragments of 16 depth steps need 8 warps' registers.
    if (d <= 16) {
      launch_mma<1, 2, 4, 16>(r0, len, X, k, cert);
    } else if (d <= 32) {
      launch_mma<1, 4, 4, 16>(r0, len, X, k, cert);
    } else if (d <= 64) {
      launch_mma<1, 8, 4, 16>(r0, len, X, k, cert);
    } else {
      launch_mma<1, 16, 2, 8>(r0, len, X, k, cert);
    }
  }

  // Rows r0 .. r0 + len: chunks of rows whose dot products (chunk x k floats,
  // fast_chunk_bytes(32 MiB)) come from one cuBLAS TF32 GEMM each.
  void fast_assign_batch(std::int64_t r0, std::int64_t len, std::int64_t k) {
    const std::int64_t d = this->d, d3 = 3 * d;
    if (kernel_ == FastKernel::Mma) {
      mma_assign_batch(r0, len, f32(x_) + r0 * d, k);
      used_fast_ = true;
      return;
    }
    if (kernel_ == FastKernel::Wmma) {
      assign_wmma_kernel<<<blocks_for(len, kWmRows), kWmThreads, 0, stream_>>>(
          f32(x_) + r0 * d, f32(norms_.data()) + r0, len, f32(centers_.data()), f32(cnorms_.data()),
          static_cast<int>(k), static_cast<int>(d), labels_.data() + r0, f32(mind_.data()) + r0, changed_.data());
      TL_CUDA_CHECK_LAUNCH("assign_wmma_kernel");
      used_fast_ = true;
      return;
    }
    split_c_.reserve(static_cast<std::size_t>(k * d3), dev_);
    split_tf32(f32(centers_.data()), k, d, true, split_c_.data(), stream_);
    // Rows of dots padded to a multiple of 4 floats (the argmin's 128-bit loads).
    const std::int64_t ldk = (k + 3) / 4 * 4;
    const std::int64_t chunk =
        std::min(len, std::max<std::int64_t>(1024, fast_chunk_bytes(std::int64_t(32) << 20) / (4 * ldk)));
    // One block, GEMM and argmin one after the other (overlapped on two
    // streams, both ran slower on the H200: 55.4 against 50.1 ms).
    dots_.reserve(static_cast<std::size_t>(chunk * ldk), dev_);
    CublasLease blas(dev_, stream_);
    const float* xn = f32(norms_.data());
    const float* cn = f32(cnorms_.data());
    for (std::int64_t c0 = 0; c0 < len; c0 += chunk) {
      const std::int64_t rows = std::min(chunk, len - c0);
      // dots: rows x k, leading dimension ldk.
      split_dots(blas.get(), split_x_.data() + (r0 + c0) * d3, rows, split_c_.data(), k, d3, dots_.data(), ldk);
      const unsigned grid = static_cast<unsigned>(std::min<std::int64_t>(blocks_for((rows + 3) / 4 * 32, 256), 4096));
      argmin_rows_kernel<<<grid, 256, 0, stream_>>>(dots_.data(), rows, static_cast<int>(k), ldk, xn + r0 + c0, cn,
                                                     labels_.data() + r0 + c0, f32(mind_.data()) + r0 + c0,
                                                     changed_.data());
      TL_CUDA_CHECK_LAUNCH("argmin_rows_kernel");
    }
    used_fast_ = true;
  }

  std::int64_t read_changed() {
    unsigned long long h = 0;
    to_host(&h, changed_.data(), 1);
    return static_cast<std::int64_t>(h);
  }

  // Sums of one batch (rows r0 .. r0 + len, data xb) per cluster into out_kw
  // (host, k x (d + 1)).
  void batch_sums(std::int64_t r0, std::int64_t len, const T* xb, std::int64_t k, double* out_kw) {
    to_host(out_kw, device_sums(r0, len, xb, k), k * (this->d + 1));
  }

  // The canonical sums of one batch per cluster (device, k x (d + 1), weight
  // in column d; valid until the next call): stable radix sort of the
  // batch's labels (CUB's LSD sort keeps equal keys in input order), the
  // chunk table on the host, chunk_sums_kernel, then the per-cluster tree.
  const double* device_sums(std::int64_t r0, std::int64_t len, const T* xb, std::int64_t k) {
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

  template <class U>
  void to_host(U* dst, const U* src, std::int64_t count) {
    if (count <= 0) return;
    TL_CUDA_CHECK(cudaMemcpyAsync(dst, src, sizeof(U) * count, cudaMemcpyDeviceToHost, stream_));
    TL_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  void ensure_closest() { closest_.reserve(static_cast<std::size_t>(this->n), dev_); }
  // The candidate rows (centered) and their norms on the device.
  void upload_candidates(const std::int64_t* rows, int nc) {
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
