// CUDA backend of the GEMM: the canonical tiled kernel, and cuBLAS for fast mode.
#include <algorithm>
#include <vector>

#include "core/cuda/blas.cuh"
#include "core/cuda/memory.cuh"
#include "core/cuda/stage.cuh"
#include "core/gemm/gemm_common.hpp"

namespace tl::detail {
namespace {

constexpr int kBM = 128, kBN = 128, kBK = 8;  // block tile and k step
constexpr int kThreads = 256;                 // 16 x 16 threads, 8 x 8 elements each

// Four consecutive shared-memory elements (16-byte aligned) into registers.
__device__ __forceinline__ void load4(const float* p, float* r) {
  const float4 v = *reinterpret_cast<const float4*>(p);
  r[0] = v.x;
  r[1] = v.y;
  r[2] = v.z;
  r[3] = v.w;
}
__device__ __forceinline__ void load4(const double* p, double* r) {
  const double2 v0 = reinterpret_cast<const double2*>(p)[0];
  const double2 v1 = reinterpret_cast<const double2*>(p)[1];
  r[0] = v0.x;
  r[1] = v0.y;
  r[2] = v1.x;
  r[3] = v1.y;
}

// The canonical product C = A·B or A·Bᵀ (row-major, C-contiguous, device).
//
// Mapping: block (bx, by) computes the 128 x 128 tile of C at rows 128*bx,
// columns 128*by. Thread t = 16*ty + tx owns the 8 x 8 elements at tile rows
// {4ty..4ty+3, 64+4ty..64+4ty+3} and columns {4tx..4tx+3, 64+4tx..64+4tx+3},
// and keeps their accumulators in registers for the whole k loop. k is
// walked in steps of 8: the block stages A[rows, p..p+8) (transposed, As[p][row])
// and op(B)[p..p+8, cols) (Bs[p][col]) in shared memory, double-buffered:
// the next step's global loads are issued before this step's arithmetic,
// and one barrier per step separates the buffers. Each accumulator receives
// fma(A[i,p], B[p,j], acc) for p = 0, 1, ..., k-1 in order, exactly the
// canonical chain; the last step stops at k, so no padded term ever enters a
// chain. Out-of-range rows and columns load zeros and are not stored.
template <class T, bool kTransB>
__global__ void __launch_bounds__(kThreads, sizeof(T) == 4 ? 2 : 1)
    canonical_gemm_kernel(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C, std::int64_t m,
                          std::int64_t n, std::int64_t k) {
  __shared__ alignas(16) T As[2][kBK][kBM];
  __shared__ alignas(16) T Bs[2][kBK][kBN];
  const int t = threadIdx.x;
  const int tx = t % 16, ty = t / 16;
  const std::int64_t row0 = static_cast<std::int64_t>(blockIdx.x) * kBM;
  const std::int64_t col0 = static_cast<std::int64_t>(blockIdx.y) * kBN;

  // Global -> register staging: 4 elements of A and 4 of B per thread per step.
  // A (and Bᵀ): thread t reads row t/2 of the tile, k offsets 4*(t%2)..+3.
  // B (not transposed): thread t reads k row t/32, columns 4*(t%32)..+3.
  const int lr = t >> 1, lk = (t & 1) * 4;
  const int br = t >> 5, bc = (t & 31) * 4;
  T ra[4], rb[4];

  auto load_tile = [&](std::int64_t p0) {
    const std::int64_t ar = row0 + lr;
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const std::int64_t p = p0 + lk + q;
      ra[q] = (ar < m && p < k) ? A[ar * k + p] : T(0);
    }
    if (kTransB) {
      const std::int64_t bn = col0 + lr;
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const std::int64_t p = p0 + lk + q;
        rb[q] = (bn < n && p < k) ? B[bn * k + p] : T(0);
      }
    } else {
      const std::int64_t p = p0 + br;
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const std::int64_t c = col0 + bc + q;
        rb[q] = (p < k && c < n) ? B[p * n + c] : T(0);
      }
    }
  };
  auto store_tile = [&](int buf) {
#pragma unroll
    for (int q = 0; q < 4; ++q) As[buf][lk + q][lr] = ra[q];
    if (kTransB) {
#pragma unroll
      for (int q = 0; q < 4; ++q) Bs[buf][lk + q][lr] = rb[q];
    } else {
#pragma unroll
      for (int q = 0; q < 4; ++q) Bs[buf][br][bc + q] = rb[q];
    }
  };

  T acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = T(0);

  auto step = [&](int buf, int kk) {
    T a[8], b[8];
    load4(&As[buf][kk][4 * ty], a);
    load4(&As[buf][kk][64 + 4 * ty], a + 4);
    load4(&Bs[buf][kk][4 * tx], b);
    load4(&Bs[buf][kk][64 + 4 * tx], b + 4);
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
      for (int j = 0; j < 8; ++j) acc[i][j] = num::fma(a[i], b[j], acc[i][j]);
  };

  const std::int64_t nsteps = (k + kBK - 1) / kBK;
  if (nsteps > 0) {
    load_tile(0);
    store_tile(0);
    __syncthreads();
  }
  for (std::int64_t s = 0; s < nsteps; ++s) {
    const int buf = static_cast<int>(s & 1);
    const bool more = s + 1 < nsteps;
    if (more) load_tile((s + 1) * kBK);
    const std::int64_t left = k - s * kBK;
    if (left >= kBK) {
#pragma unroll
      for (int kk = 0; kk < kBK; ++kk) step(buf, kk);
    } else {
      for (int kk = 0; kk < static_cast<int>(left); ++kk) step(buf, kk);
    }
    if (more) store_tile(buf ^ 1);
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const std::int64_t r = row0 + (i < 4 ? 4 * ty + i : 64 + 4 * ty + (i - 4));
    if (r >= m) continue;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const std::int64_t c = col0 + (j < 4 ? 4 * tx + j : 64 + 4 * tx + (j - 4));
      if (c < n) C[r * n + c] = gemm_detail::canonical(acc[i][j]);
    }
  }
}

}  // namespace

template <class T>
void gemm_cuda(const Context& ctx, MatrixView<const T> A, MatrixView<const T> B, bool transpose_b, MatrixView<T> C) {
  const std::int64_t m = A.rows, k = A.cols, n = C.cols;
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  cudaStream_t stream = tl_stream(ctx);
  auto as = stage_input(ctx, A, "A");
  auto bs = stage_input(ctx, B, "B");
  // The result goes straight into a C-contiguous device C, else through a buffer.
  DeviceBuffer<T> cbuf;
  T* cd = nullptr;
  if (C.device.is_cuda()) {
    TL_REQUIRE(C.is_c_contiguous(), ValueError, "C: the CUDA backend needs a C-contiguous CUDA array");
    cd = C.data;
  } else {
    cbuf = DeviceBuffer<T>(static_cast<std::size_t>(m * n), dev);
    cd = cbuf.data();
  }
  const bool int_dims = m <= INT32_MAX && n <= INT32_MAX && k <= INT32_MAX;
  if (ctx.mode() == NumericMode::Fast && int_dims && k > 0) {
    CublasLease blas(dev, stream);
    cublas_gemm(blas.get(), false, transpose_b, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), as.data, bs.data, cd);
  } else {
    const std::int64_t gx = (m + kBM - 1) / kBM, gy = (n + kBN - 1) / kBN;
    TL_REQUIRE(gx <= INT32_MAX && gy <= 65535, ValueError, "gemm: C is too large for one launch (", m, " x ", n, ")");
    const dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(gy));
    if (transpose_b)
      canonical_gemm_kernel<T, true><<<grid, kThreads, 0, stream>>>(as.data, bs.data, cd, m, n, k);
    else
      canonical_gemm_kernel<T, false><<<grid, kThreads, 0, stream>>>(as.data, bs.data, cd, m, n, k);
    TL_CUDA_CHECK_LAUNCH("canonical_gemm_kernel");
  }
  if (!C.device.is_cuda()) {
    if (C.is_c_contiguous()) {
      TL_CUDA_CHECK(cudaMemcpyAsync(C.data, cd, sizeof(T) * m * n, cudaMemcpyDeviceToHost, stream));
      TL_CUDA_CHECK(cudaStreamSynchronize(stream));
    } else {
      std::vector<T> host(static_cast<std::size_t>(m * n));
      TL_CUDA_CHECK(cudaMemcpyAsync(host.data(), cd, sizeof(T) * m * n, cudaMemcpyDeviceToHost, stream));
      TL_CUDA_CHECK(cudaStreamSynchronize(stream));
      for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) C(i, j) = host[i * n + j];
    }
  } else {
    TL_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
}

template void gemm_cuda<float>(const Context&, MatrixView<const float>, MatrixView<const float>, bool,
                               MatrixView<float>);
template void gemm_cuda<double>(const Context&, MatrixView<const double>, MatrixView<const double>, bool,
                                MatrixView<double>);

}  // namespace tl::detail
