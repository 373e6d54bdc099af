// CUDA backend of tl::linear_decision.
#include <algorithm>

#include "core/cuda/launch.cuh"
#include "core/cuda/memory.cuh"
#include "linear_model/linear_decision/linear_decision_common.hpp"

namespace tl::detail {
namespace {

constexpr int kRows = 128;     // rows per block, one per thread
constexpr int kSlab = 32;      // features staged per step
constexpr int kTargets = 8;    // targets per block (blockIdx.y picks the group)

// Mapping: block (bx, by) computes rows 128*bx..+127 for targets
// 8*by..8*by+7; thread r owns row 128*bx + r and keeps its (up to 8)
// accumulators in registers. Features are walked in slabs of 32: the block
// stages the 128 x 32 slab of X in shared memory (consecutive threads read
// consecutive features of a row, coalesced) and the 8 x 32 slab of coef;
// then each thread continues its chains over the slab's features in
// increasing order. Non-finite entries of X are counted into *bad.
template <class T>
__global__ void __launch_bounds__(kRows) linear_decision_kernel(const T* __restrict__ X, std::int64_t n, std::int64_t d,
                                                                const T* __restrict__ coef,
                                                                const T* __restrict__ intercept, std::int64_t t,
                                                                T* __restrict__ out,
                                                                unsigned long long* __restrict__ bad) {
  __shared__ T xs[kRows][kSlab + 1];
  __shared__ T ws[kTargets][kSlab];
  const int r = threadIdx.x;
  const std::int64_t row0 = static_cast<std::int64_t>(blockIdx.x) * kRows;
  const std::int64_t c0 = static_cast<std::int64_t>(blockIdx.y) * kTargets;
  const int nt = static_cast<int>((t - c0 < kTargets ? t - c0 : kTargets));
  T acc[kTargets];
#pragma unroll
  for (int c = 0; c < kTargets; ++c) acc[c] = T(0);
  unsigned long long nbad = 0;
  for (std::int64_t j0 = 0; j0 < d; j0 += kSlab) {
    const int width = static_cast<int>((d - j0 < kSlab ? d - j0 : kSlab));
    for (int e = r; e < kRows * kSlab; e += kRows) {
      const int rr = e / kSlab, jj = e % kSlab;
      const std::int64_t i = row0 + rr;
      T v = T(0);
      if (i < n && jj < width) {
        v = X[i * d + j0 + jj];
        if (blockIdx.y == 0) nbad += non_finite(v) ? 1 : 0;
      }
      xs[rr][jj] = v;
    }
    for (int e = r; e < kTargets * kSlab; e += kRows) {
      const int c = e / kSlab, jj = e % kSlab;
      ws[c][jj] = (c < nt && jj < width) ? coef[(c0 + c) * d + j0 + jj] : T(0);
    }
    __syncthreads();
    for (int jj = 0; jj < width; ++jj) {
      const T x = xs[r][jj];
#pragma unroll
      for (int c = 0; c < kTargets; ++c) acc[c] = num::fma(x, ws[c][jj], acc[c]);
    }
    __syncthreads();
  }
  if (nbad) atomicAdd(bad, nbad);
  const std::int64_t i = row0 + r;
  if (i >= n) return;
#pragma unroll
  for (int c = 0; c < kTargets; ++c) {
    if (c < nt) {
      T v = acc[c];
      if (intercept) v = num::add(v, intercept[c0 + c]);
      out[i * t + c0 + c] = num::canonical(v);
    }
  }
}

}  // namespace

template <class T>
std::int64_t linear_decision_cuda(const Context& ctx, MatrixView<const T> X, const T* coef, const T* intercept,
                                  std::int64_t t, MatrixView<T> out) {
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  cudaStream_t stream = tl_stream(ctx);
  const std::int64_t n = X.rows, d = X.cols;
  TL_REQUIRE(out.is_c_contiguous(), ValueError, "the CUDA backend needs a C-contiguous output");
  auto xs = stage_to_device(ctx, X);
  DeviceBuffer<T> cbuf(static_cast<std::size_t>(std::max<std::int64_t>(t * d, 1)), dev);
  DeviceBuffer<T> ibuf(static_cast<std::size_t>(t), dev);
  DeviceBuffer<unsigned long long> bad(1, dev);
  if (t * d > 0) TL_CUDA_CHECK(cudaMemcpyAsync(cbuf.data(), coef, sizeof(T) * t * d, cudaMemcpyHostToDevice, stream));
  if (intercept) TL_CUDA_CHECK(cudaMemcpyAsync(ibuf.data(), intercept, sizeof(T) * t, cudaMemcpyHostToDevice, stream));
  TL_CUDA_CHECK(cudaMemsetAsync(bad.data(), 0, sizeof(unsigned long long), stream));
  DeviceBuffer<T> obuf;
  T* optr = out.data;
  if (!out.device.is_cuda()) {
    obuf = DeviceBuffer<T>(static_cast<std::size_t>(n * t), dev);
    optr = obuf.data();
  }
  dim3 grid(blocks_for(n, kRows), blocks_for(t, kTargets));
  linear_decision_kernel<T><<<grid, kRows, 0, stream>>>(xs.view.data, n, d, cbuf.data(),
                                                        intercept ? ibuf.data() : nullptr, t, optr, bad.data());
  TL_CUDA_CHECK_LAUNCH("linear_decision_kernel");
  if (!out.device.is_cuda())
    TL_CUDA_CHECK(cudaMemcpyAsync(out.data, optr, sizeof(T) * n * t, cudaMemcpyDeviceToHost, stream));
  unsigned long long nbad = 0;
  TL_CUDA_CHECK(cudaMemcpyAsync(&nbad, bad.data(), sizeof(nbad), cudaMemcpyDeviceToHost, stream));
  TL_CUDA_CHECK(cudaStreamSynchronize(stream));
  return static_cast<std::int64_t>(nbad);
}

template std::int64_t linear_decision_cuda<float>(const Context&, MatrixView<const float>, const float*,
                                                  const float*, std::int64_t, MatrixView<float>);
template std::int64_t linear_decision_cuda<double>(const Context&, MatrixView<const double>, const double*,
                                                   const double*, std::int64_t, MatrixView<double>);

}  // namespace tl::detail
