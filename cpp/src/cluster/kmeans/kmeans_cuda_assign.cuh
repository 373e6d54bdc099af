// The CUDA KMeans engine's assignment (kmeans_cuda_engine.cuh): each row's
// nearest center, by the canonical kernels (kmeans_canon.cuh), the certified
// assignment, or fast mode's tensor-core paths (kmeans_mma.cuh,
// kmeans_wmma.cuh, and the GEMMs with argmin_rows_kernel below).
#pragma once
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <type_traits>

#include "cluster/kmeans/kmeans_canon.cuh"
#include "cluster/kmeans/kmeans_cuda_engine.cuh"
#include "cluster/kmeans/kmeans_mma.cuh"
#include "core/cuda/blas.cuh"
#include "core/cuda/tf32_split.cuh"

namespace tl::detail {
namespace {

using tile::Cfg;

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

template <class T>
void CudaEngine<T>::assign_batch(std::int64_t r0, std::int64_t len, const T* xb, std::int64_t k) {
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

template <class T>
typename CudaEngine<T>::FastKernel CudaEngine<T>::fast_kernel_choice(std::int64_t d) {
  const char* env = std::getenv("TWINLEARN_KMEANS_FAST_KERNEL");
  const std::string v = env != nullptr ? env : "";
  if (v == "wmma") return FastKernel::Wmma;
  if (v == "gemm" || d > kMmaMaxFeatures) return FastKernel::Gemm;
  return FastKernel::Mma;
}

template <class T>
bool CudaEngine<T>::fast_path(std::int64_t k) {
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
template <class T>
bool CudaEngine<T>::launch_canon(std::int64_t r0, std::int64_t len, const T* xb, std::int64_t k) {
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
template <class T>
const typename CudaEngine<T>::LaunchShape& CudaEngine<T>::canon_shape(std::int64_t k) {
  using S = CanonAssign;
  const std::int64_t d = this->d;
  LaunchShape& L = canon_launch_;
  if (L.k != k) {
    int per_sm_bytes = 0, reserved = 0, per_sm = 0;
    TL_CUDA_CHECK(cudaDeviceGetAttribute(&per_sm_bytes, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev_));
    TL_CUDA_CHECK(cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, dev_));
    const int sms = sm_count(dev_);
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
template <class T>
bool CudaEngine<T>::certified_assign(std::int64_t r0, std::int64_t len, const T* xb, std::int64_t k) {
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
template <class T>
template <int MT, int KS, int NB, int WARPS>
void CudaEngine<T>::launch_mma(std::int64_t r0, std::int64_t len, const float* X, std::int64_t k, const Certify* cert) {
  using S = MmaAssign<MT, KS, NB, WARPS>;
  auto kern = cert ? assign_mma_kernel<MT, KS, NB, WARPS, true> : assign_mma_kernel<MT, KS, NB, WARPS, false>;
  LaunchShape& L = cert ? cert_launch_ : mma_launch_;
  if (L.k != k) {
    int optin = 0, per_sm = 0;
    TL_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev_));
    const int sms = sm_count(dev_);
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

template <class T>
void CudaEngine<T>::mma_assign_batch(std::int64_t r0, std::int64_t len, const float* X, std::int64_t k,
                                      const Certify* cert) {
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
template <class T>
void CudaEngine<T>::fast_assign_batch(std::int64_t r0, std::int64_t len, std::int64_t k) {
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

}  // namespace
}  // namespace tl::detail
