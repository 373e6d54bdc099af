// Fast mode's CUDA Gram (gram_cuda.cu): Zc widened to double and multiplied
// by cuBLAS DGEMM, and the widening pass that also sums the moments
// (gram_moments, fast mode).
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "core/cuda/blas.cuh"
#include "core/cuda/launch.cuh"
#include "core/cuda/memory.cuh"
#include "core/gram/gram_common.hpp"
#include "core/gram/gram_load.cuh"

namespace tl::detail {
namespace {

using gram_detail::kMomentsMaxCols;
using gram_detail::kMomentsMaxTargets;
using gram_detail::moments_size;

// Fast path: Zc rows widened to double into a dense buffer (rows x ldz,
// row-major = column-major ldz x rows for cuBLAS). Columns D..ldz-1 are
// written as zeros, so the products may run over them (whole multiples of 8
// columns: aligned operands and cuBLAS's better kernels). 64 threads per row,
// four rows per block of 256, rows by grid stride; each thread takes four
// consecutive columns at a time: one 128-bit load of X when all four are X's
// (vec: d % 4 == 0 and X 16-byte aligned), two 128-bit stores of doubles.
template <class T>
__global__ void centre_rows_kernel(const T* __restrict__ X, std::int64_t d, const T* __restrict__ Y, std::int64_t t,
                                   const T* __restrict__ w, const T* __restrict__ off, std::int64_t r0,
                                   std::int64_t rows, std::int64_t ldz, bool vec, double* __restrict__ Z) {
  const std::int64_t D = d + t, groups = ldz / 4;
  const bool weighted = w != nullptr;
  const int lane = threadIdx.x % 64;
  for (std::int64_t b = static_cast<std::int64_t>(blockIdx.x) * 4 + threadIdx.x / 64; b < rows;
       b += static_cast<std::int64_t>(gridDim.x) * 4) {
    const std::int64_t i = r0 + b;
    const T s = weighted ? num::sqrt(w[i]) : T(1);
    double* zrow = Z + b * ldz;
    for (std::int64_t g = lane; g < groups; g += 64) {
      const std::int64_t c0 = 4 * g;
      double v[4];
      T xs[4];
      if (load_x4(X, d, vec, i, c0, xs)) {
#pragma unroll
        for (int q = 0; q < 4; ++q) v[q] = static_cast<double>(gram_detail::centred(xs[q], off, c0 + q, s, weighted));
        reinterpret_cast<double2*>(zrow + c0)[0] = make_double2(v[0], v[1]);
        reinterpret_cast<double2*>(zrow + c0)[1] = make_double2(v[2], v[3]);
        continue;
      }
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const std::int64_t col = c0 + q;
        v[q] = col < D ? static_cast<double>(load_zc(X, d, Y, t, off, i, col, s, weighted)) : 0.0;
      }
      reinterpret_cast<double2*>(zrow + c0)[0] = make_double2(v[0], v[1]);
      reinterpret_cast<double2*>(zrow + c0)[1] = make_double2(v[2], v[3]);
    }
  }
}

// The column split of the fast product: the upper triangle of the ldz x ldz
// product (D x D and zero padding) is the blocks (0,0), (0,1) and (1,1) of a
// split at h, three DGEMMs that do about 3/4 of the full product's work
// (cuBLAS's DSYRK ran at about a tenth of DGEMM's rate on the H200). h is a
// multiple of 64 (blocks of whole kernel tiles: at h = 136 for 2M x 257 the
// three products took 6.6 ms on the H200 against 3.5 ms at h = 128 for
// 2M x 256); narrow products take one full DGEMM.
// TWINLEARN_GRAM_FAST_SPLIT overrides h (a multiple of 8; >= ldz: no split).
std::int64_t fast_split(std::int64_t ldz) {
  if (const char* env = std::getenv("TWINLEARN_GRAM_FAST_SPLIT")) {
    const std::int64_t h = std::strtoll(env, nullptr, 10) / 8 * 8;
    return h > 0 ? std::min(h, ldz) : ldz;
  }
  if (ldz < 128) return ldz;
  return ldz / 2 / 64 * 64;
}

// Columns of the widened copy for D columns: rows of 64 bytes or a multiple
// (aligned operands for cuBLAS's kernels).
inline std::int64_t widened_cols(std::int64_t D) { return (D + 7) / 8 * 8; }

// The targets on the device (a view of no rows when there are none, whose
// data may be null).
template <class T>
StagedMatrix<T> stage_targets(const Context& ctx, MatrixView<const T> Y) {
  return stage_to_device(ctx, MatrixView<const T>(Y.data, Y.cols > 0 ? Y.rows : 0, Y.cols, Y.row_stride,
                                                  Y.col_stride, Y.device));
}

// The upper triangle of C += Zᵀ Z (C: ldz x ldz, column-major; Z: rows x
// ldz row-major, i.e. column-major ldz x rows) as the DGEMM blocks of the
// column split; beta 0 on the first batch.
struct FastProduct {
  struct Block {
    std::int64_t a0, na, b0, nb;
  };
  std::int64_t ldz;
  std::vector<Block> blocks;

  explicit FastProduct(std::int64_t ldz_) : ldz(ldz_) {
    const std::int64_t h = fast_split(ldz);
    if (h >= ldz) {
      blocks.push_back({0, ldz, 0, ldz});
    } else {
      blocks.push_back({0, h, 0, h});
      blocks.push_back({0, h, h, ldz - h});
      blocks.push_back({h, ldz - h, h, ldz - h});
    }
  }
  // The ldz x ldz output, zeroed: the blocks leave its lower-left part
  // unwritten, and it is downloaded whole.
  DeviceBuffer<double> output(int dev, cudaStream_t stream) const {
    DeviceBuffer<double> C(static_cast<std::size_t>(ldz * ldz), dev);
    TL_CUDA_CHECK(cudaMemsetAsync(C.data(), 0, sizeof(double) * ldz * ldz, stream));
    return C;
  }
  void add(cublasHandle_t blas, const double* Z, std::int64_t rows, bool first, double* C) const {
    const double one = 1.0, beta = first ? 0.0 : 1.0;
    for (const Block& bl : blocks)
      TL_CUBLAS_CHECK(cublasDgemm(blas, CUBLAS_OP_N, CUBLAS_OP_T, static_cast<int>(bl.na), static_cast<int>(bl.nb),
                                  static_cast<int>(rows), &one, Z + bl.a0, static_cast<int>(ldz), Z + bl.b0,
                                  static_cast<int>(ldz), &beta, C + bl.a0 + bl.b0 * ldz, static_cast<int>(ldz)));
  }
};

// Rows per batch of the fast product: a widened copy of at most 1 GiB.
// (Widening the next batch on a side stream while cuBLAS multiplied this one
// was no faster on the H200: LinearRegression 2M x 256 took 13.5 ms against
// 12.7 ms, both kernels slower side by side.)
// TWINLEARN_GRAM_FAST_BATCH_ROWS overrides it (to test many batches).
std::int64_t fast_batch_rows(std::int64_t n, std::int64_t ldz) {
  std::int64_t cap = (std::int64_t(1) << 27) / ldz;
  if (const char* env = std::getenv("TWINLEARN_GRAM_FAST_BATCH_ROWS")) cap = std::strtoll(env, nullptr, 10);
  return std::min<std::int64_t>(n, std::max<std::int64_t>(1, cap));
}

template <class T>
void gram_fast(const Context& ctx, const T* X, std::int64_t d, const T* Y, std::int64_t t, const T* w, const T* off,
               std::int64_t n, std::vector<double>& batches) {
  const int dev = ctx.device().id;
  cudaStream_t stream = tl_stream(ctx);
  const std::int64_t D = d + t;
  const std::int64_t ldz = widened_cols(D);
  const std::int64_t batch_rows = fast_batch_rows(n, ldz);
  DeviceBuffer<double> Z(static_cast<std::size_t>(batch_rows * ldz), dev);
  const bool vec = d % 4 == 0 && reinterpret_cast<std::uintptr_t>(X) % 16 == 0;
  CublasLease blas(dev, stream);
  const FastProduct product(ldz);
  DeviceBuffer<double> C = product.output(dev, stream);
  for (std::int64_t r0 = 0; r0 < n; r0 += batch_rows) {
    const std::int64_t rows = std::min(batch_rows, n - r0);
    const unsigned grid = static_cast<unsigned>(std::min<std::int64_t>(blocks_for(rows, 4), 65536));
    centre_rows_kernel<T><<<grid, 256, 0, stream>>>(X, d, Y, t, w, off, r0, rows, ldz, vec, Z.data());
    TL_CUDA_CHECK_LAUNCH("centre_rows_kernel");
    product.add(blas.get(), Z.data(), rows, r0 == 0, C.data());
  }
  std::vector<double> host(static_cast<std::size_t>(ldz * ldz));
  TL_CUDA_CHECK(cudaMemcpyAsync(host.data(), C.data(), sizeof(double) * ldz * ldz, cudaMemcpyDeviceToHost, stream));
  TL_CUDA_CHECK(cudaStreamSynchronize(stream));
  // Column-major upper triangle: G[j, k] (j <= k < D) is C[j + k*ldz].
  batches.assign(static_cast<std::size_t>(D * D), 0.0);
  for (std::int64_t j = 0; j < D; ++j)
    for (std::int64_t k = j; k < D; ++k) batches[j * D + k] = host[j + k * ldz];
}

// -- gram_moments, fast mode ----------------------------------------------------

constexpr int kMomentsSlots = 4;   // rows side by side in a block (64 threads each)
constexpr int kMomentsLanes = 64;

// One pass over a batch of rows: Z = X - x0 widened to double (rows x ldz,
// the padding columns zero; x0 the first row), as centre_rows_kernel, and
// the block's moment sums of its rows (moments_size doubles, added to
// P[block] when `add`). The 64 threads of a slot take one row, thread
// `lane` the column groups lane + 64 g (g < G: X of at most 256 G columns),
// its sums in registers; TT >= t targets (unused ones read as zero). The
// slots' sums are added in shared memory at the end. With rows by grid stride and a fixed grid, the order
// of the sums is fixed by the shape (the same bits run to run).
template <class T, int G, int TT>
__global__ void __launch_bounds__(256)
    widen_moments_kernel(const T* __restrict__ X, std::int64_t d, const T* __restrict__ Y, std::int64_t t,
                         std::int64_t r0, std::int64_t rows, std::int64_t ldz, bool vec, double* __restrict__ Z,
                         double* __restrict__ P, bool add) {
  extern __shared__ double red[];
  const int slot = threadIdx.x / kMomentsLanes, lane = threadIdx.x % kMomentsLanes;
  const std::int64_t groups = ldz / 4;
  double x0[G][4], y0[TT], sx[G][4], cx[G][4][TT], sy[TT], syy[TT][TT];
#pragma unroll
  for (int c = 0; c < TT; ++c) {
    y0[c] = c < t ? static_cast<double>(Y[c]) : 0.0;
    sy[c] = 0.0;
#pragma unroll
    for (int e = 0; e < TT; ++e) syy[c][e] = 0.0;
  }
#pragma unroll
  for (int g = 0; g < G; ++g)
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const std::int64_t col = 4 * (lane + kMomentsLanes * g) + q;
      x0[g][q] = col < d ? static_cast<double>(X[col]) : 0.0;
      sx[g][q] = 0.0;
#pragma unroll
      for (int c = 0; c < TT; ++c) cx[g][q][c] = 0.0;
    }
  for (std::int64_t b = static_cast<std::int64_t>(blockIdx.x) * kMomentsSlots + slot; b < rows;
       b += static_cast<std::int64_t>(gridDim.x) * kMomentsSlots) {
    const std::int64_t i = r0 + b;
    double u[TT];
#pragma unroll
    for (int c = 0; c < TT; ++c) u[c] = c < t ? static_cast<double>(Y[i * t + c]) - y0[c] : 0.0;
    double* zrow = Z + b * ldz;
#pragma unroll
    for (int g = 0; g < G; ++g) {
      const std::int64_t grp = lane + kMomentsLanes * g;
      if (grp >= groups) break;
      const std::int64_t c0 = 4 * grp;
      T xs[4];
      if (!load_x4(X, d, vec, i, c0, xs)) {
#pragma unroll
        for (int q = 0; q < 4; ++q) xs[q] = c0 + q < d ? X[i * d + c0 + q] : T(0);
      }
      double z[4];
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        z[q] = c0 + q < d ? static_cast<double>(xs[q]) - x0[g][q] : 0.0;
        sx[g][q] += z[q];
#pragma unroll
        for (int c = 0; c < TT; ++c) cx[g][q][c] = fma(z[q], u[c], cx[g][q][c]);
      }
      reinterpret_cast<double2*>(zrow + c0)[0] = make_double2(z[0], z[1]);
      reinterpret_cast<double2*>(zrow + c0)[1] = make_double2(z[2], z[3]);
    }
    if (lane == 0) {
#pragma unroll
      for (int c = 0; c < TT; ++c) {
        sy[c] += u[c];
#pragma unroll
        for (int e = 0; e < TT; ++e) syy[c][e] = fma(u[c], u[e], syy[c][e]);
      }
    }
  }
  // Slots 3, 2, 1, 0 in turn add their sums into shared memory, which then
  // holds the block's sums.
  const std::int64_t na = moments_size(ldz, t);
  for (int e = threadIdx.x; e < na; e += blockDim.x) red[e] = 0.0;
  __syncthreads();
  for (int s = kMomentsSlots - 1; s >= 0; --s) {
    if (slot == s) {
#pragma unroll
      for (int g = 0; g < G; ++g) {
        const std::int64_t grp = lane + kMomentsLanes * g;
        if (grp >= groups) break;
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          double* r = red + (4 * grp + q) * (1 + t);
          r[0] += sx[g][q];
          for (int c = 0; c < t && c < TT; ++c) r[1 + c] += cx[g][q][c];
        }
      }
      if (lane == 0) {
        double* r = red + ldz * (1 + t);
        for (int c = 0; c < t && c < TT; ++c) {
          r[c] += sy[c];
          for (int e = 0; e < t && e < TT; ++e) r[t + c * t + e] += syy[c][e];
        }
      }
    }
    __syncthreads();
  }
  double* out = P + static_cast<std::int64_t>(blockIdx.x) * na;
  for (int e = threadIdx.x; e < na; e += blockDim.x) out[e] = add ? out[e] + red[e] : red[e];
}

// R[e] = sum over the blocks' partials P[b * na + e], b in order.
__global__ void moments_total_kernel(const double* __restrict__ P, std::int64_t na, int nblocks,
                                     double* __restrict__ R) {
  const std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= na) return;
  double s = 0.0;
  for (int b = 0; b < nblocks; ++b) s += P[static_cast<std::int64_t>(b) * na + e];
  R[e] = s;
}

template <class T, int G, int TT>
void launch_widen_moments(unsigned grid, cudaStream_t stream, std::size_t smem, const T* X, std::int64_t d,
                          const T* Y, std::int64_t t, std::int64_t r0, std::int64_t rows,
                          std::int64_t ldz, bool vec, double* Z, double* P, bool add) {
  auto* kernel = widen_moments_kernel<T, G, TT>;
  TL_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  kernel<<<grid, 256, smem, stream>>>(X, d, Y, t, r0, rows, ldz, vec, Z, P, add);
  TL_CUDA_CHECK_LAUNCH("widen_moments_kernel");
}

}  // namespace
}  // namespace tl::detail
