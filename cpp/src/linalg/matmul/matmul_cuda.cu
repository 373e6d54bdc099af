// CUDA backend of tl::linalg::matmul and prepare_rows: cuBLAS with the
// transpositions in fast mode; otherwise a transposing copy of A (when
// asked for) and the canonical GEMM.
#include <algorithm>
#include <vector>

#include "core/cuda/blas.cuh"
#include "core/cuda/launch.cuh"
#include "core/cuda/memory.cuh"
#include "core/cuda/stage.cuh"
#include "linalg/matmul/matmul_impl.hpp"
#include "twinlearn/core/gemm.hpp"

namespace tl::linalg::detail {

using namespace ::tl::detail;  // device memory, staging, launch helpers

namespace {

constexpr int kTile = 32, kRowsPerPass = 8;  // transposing tiles: 32 x 32, 32 x 8 threads

// Zᵀ from X through a shared-memory tile, so both the reads of X's rows and
// the writes of Zᵀ's rows are coalesced.
// Mapping: block (bx, by) owns the 32 x 32 tile of X at rows 32*bx, columns
// 32*by. Thread (tx, ty) reads X[32bx + ty + 8q, 32by + tx] for q = 0..3 into
// the tile, and after the barrier writes Zᵀ[32by + ty + 8q, 32bx + tx]. The
// +1 column of padding keeps the transposed reads free of bank conflicts.
template <class T>
__global__ void prepare_transposed_kernel(const T* __restrict__ X, const T* __restrict__ w,
                                          const T* __restrict__ offset, std::int64_t n, std::int64_t d,
                                          T* __restrict__ out) {
  __shared__ T tile[kTile][kTile + 1];
  const std::int64_t i0 = static_cast<std::int64_t>(blockIdx.x) * kTile;
  const std::int64_t j0 = static_cast<std::int64_t>(blockIdx.y) * kTile;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const std::int64_t j = j0 + tx;
  for (int r = ty; r < kTile; r += kRowsPerPass) {
    const std::int64_t i = i0 + r;
    if (i < n && j < d) {
      const T s = w ? num::sqrt(w[i]) : T(1);
      tile[r][tx] = prepared(X[i * d + j], offset, j, w != nullptr, s);
    }
  }
  __syncthreads();
  const std::int64_t oi = i0 + tx;  // column of Zᵀ = row of X
  for (int r = ty; r < kTile; r += kRowsPerPass) {
    const std::int64_t oj = j0 + r;  // row of Zᵀ = column of X
    if (oi < n && oj < d) out[oj * n + oi] = tile[tx][r];
  }
}

// Z from X, elementwise. Mapping: 32 x 8 threads per block; the block's
// thread rows take the matrix rows in a grid-stride loop (row r goes to
// thread row r % 8 of block (r / 8) % gridDim.x), and thread tx of a thread
// row handles columns tx, tx + 32, ...: a warp reads and writes 32
// consecutive entries of one row, and sqrt(w) is taken once per row.
template <class T>
__global__ void prepare_kernel(const T* __restrict__ X, const T* __restrict__ w, const T* __restrict__ offset,
                               std::int64_t n, std::int64_t d, T* __restrict__ out) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kRowsPerPass;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kRowsPerPass + threadIdx.y; i < n; i += stride) {
    const T s = w ? num::sqrt(w[i]) : T(1);
    const T* xi = X + i * d;
    T* oi = out + i * d;
    for (std::int64_t j = threadIdx.x; j < d; j += kTile) oi[j] = prepared(xi[j], offset, j, w != nullptr, s);
  }
}


// Z (or Zᵀ) of a C-contiguous device X into the C-contiguous device out.
template <class T>
void prepare_device(cudaStream_t stream, const T* X, const T* w, const T* offset, std::int64_t n, std::int64_t d,
                    bool transpose, T* out) {
  if (n == 0 || d == 0) return;
  if (transpose) {
    const std::int64_t gx = (n + kTile - 1) / kTile, gy = (d + kTile - 1) / kTile;
    TL_REQUIRE(gx <= INT32_MAX && gy <= 65535, ValueError, "prepare_rows: X is too large (", n, " x ", d, ")");
    const dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(gy));
    prepare_transposed_kernel<T><<<grid, dim3(kTile, kRowsPerPass), 0, stream>>>(X, w, offset, n, d, out);
    TL_CUDA_CHECK_LAUNCH("prepare_transposed_kernel");
  } else {
    const std::int64_t want = (n + kRowsPerPass - 1) / kRowsPerPass;
    const unsigned grid = static_cast<unsigned>(std::min<std::int64_t>(want, 64LL * sm_count()));
    prepare_kernel<T><<<grid, dim3(kTile, kRowsPerPass), 0, stream>>>(X, w, offset, n, d, out);
    TL_CUDA_CHECK_LAUNCH("prepare_kernel");
  }
}

}  // namespace

template <class T>
void prepare_rows_cuda(const Context& ctx, MatrixView<const T> X, VectorView<const T> w, const T* offset,
                       bool transpose, MatrixView<T> out) {
  const std::int64_t n = X.rows, d = X.cols;
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  cudaStream_t stream = tl_stream(ctx);
  auto xs = stage_input(ctx, X, "X");
  StagedInput<T> ws;
  if (w.data) ws = stage_input(ctx, MatrixView<const T>(w.data, w.size, 1, w.stride, 1, w.device), "sample_weight");
  DeviceBuffer<T> off;
  if (offset) {
    off = DeviceBuffer<T>(static_cast<std::size_t>(d), dev);
    TL_CUDA_CHECK(cudaMemcpyAsync(off.data(), offset, sizeof(T) * d, cudaMemcpyHostToDevice, stream));
  }
  DeviceBuffer<T> obuf;
  T* od = nullptr;
  if (out.device.is_cuda()) {
    TL_REQUIRE(out.is_c_contiguous(), ValueError, "out: the CUDA backend needs a C-contiguous CUDA array");
    od = out.data;
  } else {
    TL_REQUIRE(out.is_c_contiguous(), ValueError, "out: the CUDA backend needs a C-contiguous array");
    obuf = DeviceBuffer<T>(static_cast<std::size_t>(n * d), dev);
    od = obuf.data();
  }
  prepare_device<T>(stream, xs.data, w.data ? ws.data : nullptr, offset ? off.data() : nullptr, n, d, transpose, od);
  if (!out.device.is_cuda())
    TL_CUDA_CHECK(cudaMemcpyAsync(out.data, od, sizeof(T) * n * d, cudaMemcpyDeviceToHost, stream));
  TL_CUDA_CHECK(cudaStreamSynchronize(stream));
}

template <class T>
NumericMode matmul_cuda(const Context& ctx, MatrixView<const T> A, bool ta, MatrixView<const T> B, bool tb,
                        MatrixView<T> C) {
  const std::int64_t m = C.rows, n = C.cols, k = ta ? A.rows : A.cols;
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  cudaStream_t stream = tl_stream(ctx);
  const bool int_dims = m <= INT32_MAX && n <= INT32_MAX && k <= INT32_MAX;
  if (ctx.mode() == NumericMode::Fast && int_dims && k > 0) {
    auto as = stage_input(ctx, A, "A");
    auto bs = stage_input(ctx, B, "B");
    DeviceBuffer<T> cbuf;
    T* cd = nullptr;
    if (C.device.is_cuda()) {
      TL_REQUIRE(C.is_c_contiguous(), ValueError, "C: the CUDA backend needs a C-contiguous CUDA array");
      cd = C.data;
    } else {
      TL_REQUIRE(C.is_c_contiguous(), ValueError, "C: the CUDA backend needs a C-contiguous array");
      cbuf = DeviceBuffer<T>(static_cast<std::size_t>(m * n), dev);
      cd = cbuf.data();
    }
    CublasLease blas(dev, stream);
    cublas_gemm(blas.get(), ta, tb, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), as.data, bs.data, cd);
    if (!C.device.is_cuda())
      TL_CUDA_CHECK(cudaMemcpyAsync(C.data, cd, sizeof(T) * m * n, cudaMemcpyDeviceToHost, stream));
    TL_CUDA_CHECK(cudaStreamSynchronize(stream));
    return NumericMode::Fast;
  }
  if (!ta) {
    tl::gemm<T>(ctx, A, B, tb, C);
    return NumericMode::Identical;
  }
  // Aᵀ as a contiguous device copy (exact), then the canonical product.
  auto as = stage_input(ctx, A, "A");
  DeviceBuffer<T> at(static_cast<std::size_t>(A.size()), dev);
  prepare_device<T>(stream, as.data, nullptr, nullptr, A.rows, A.cols, true, at.data());
  MatrixView<const T> atv(at.data(), A.cols, A.rows, ctx.device());
  tl::gemm<T>(ctx, atv, B, tb, C);
  return NumericMode::Identical;
}


template NumericMode matmul_cuda<float>(const Context&, MatrixView<const float>, bool, MatrixView<const float>, bool,
                                        MatrixView<float>);
template NumericMode matmul_cuda<double>(const Context&, MatrixView<const double>, bool, MatrixView<const double>,
                                         bool, MatrixView<double>);
template void prepare_rows_cuda<float>(const Context&, MatrixView<const float>, VectorView<const float>,
                                       const float*, bool, MatrixView<float>);
template void prepare_rows_cuda<double>(const Context&, MatrixView<const double>, VectorView<const double>,
                                        const double*, bool, MatrixView<double>);

}  // namespace tl::linalg::detail
