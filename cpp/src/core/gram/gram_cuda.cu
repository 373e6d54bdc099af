// CUDA backend of the Gram product: the canonical split-K kernel on the
// double-precision tensor cores, and cuBLAS DGEMM for fast mode (order:
// twinlearn/core/gram.hpp). On the H200, 2M x 256 float32: the canonical
// kernel 7.0 ms with centring (6.3 ms without), against 16.2 ms for the same
// chains as scalar fma; fast mode's widening plus DGEMM took 6.7 ms, so fast
// mode keeps cuBLAS.
// The kernels: gram_canon.cuh (canonical), gram_fast.cuh (fast mode), with
// the loads they share in gram_load.cuh; here the entry points.
#include "core/cuda/blas.cuh"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <type_traits>
#include <vector>

#include "core/cuda/launch.cuh"
#include "core/cuda/memory.cuh"
#include "core/gram/gram_canon.cuh"
#include "core/gram/gram_common.hpp"
#include "core/gram/gram_fast.cuh"

namespace tl::detail {

template <class T>
bool gram_moments_fast_cuda(const Context& ctx, MatrixView<const T> Xv, MatrixView<const T> Yv, bool center,
                            double* out, ColStat* stats) {
  const std::int64_t n = Xv.rows, d = Xv.cols, t = Yv.cols, D = d + t;
  const std::int64_t ldz = widened_cols(d);
  if (n < 1 || d < 1 || t > kMomentsMaxTargets || ldz > kMomentsMaxCols) return false;
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  cudaStream_t stream = tl_stream(ctx);
  auto xs = stage_to_device(ctx, Xv);
  auto ys = stage_targets(ctx, Yv);
  const T* X = xs.view.data;
  const T* Y = t > 0 ? ys.view.data : nullptr;
  const std::int64_t batch_rows = fast_batch_rows(n, ldz);
  const unsigned grid =
      static_cast<unsigned>(std::min<std::int64_t>(blocks_for(batch_rows, kMomentsSlots), 4 * sm_count()));
  const std::int64_t na = moments_size(ldz, t);
  const std::size_t smem = sizeof(double) * static_cast<std::size_t>(na);
  DeviceBuffer<double> Z(static_cast<std::size_t>(batch_rows * ldz), dev);
  DeviceBuffer<double> P(static_cast<std::size_t>(grid) * na, dev);
  DeviceBuffer<double> R(static_cast<std::size_t>(na), dev);
  const bool vec = d % 4 == 0 && reinterpret_cast<std::uintptr_t>(X) % 16 == 0;
  CublasLease blas(dev, stream);
  const FastProduct product(ldz);
  DeviceBuffer<double> C = product.output(dev, stream);
  for (std::int64_t r0 = 0; r0 < n; r0 += batch_rows) {
    const std::int64_t rows = std::min(batch_rows, n - r0);
    const bool add = r0 > 0;
    if (ldz <= 256 && t <= 1)
      launch_widen_moments<T, 1, 1>(grid, stream, smem, X, d, Y, t, r0, rows, ldz, vec, Z.data(), P.data(), add);
    else if (ldz <= 256)
      launch_widen_moments<T, 1, kMomentsMaxTargets>(grid, stream, smem, X, d, Y, t, r0, rows, ldz, vec,
                                                     Z.data(), P.data(), add);
    else if (t <= 1)
      launch_widen_moments<T, 2, 1>(grid, stream, smem, X, d, Y, t, r0, rows, ldz, vec, Z.data(), P.data(), add);
    else
      launch_widen_moments<T, 2, kMomentsMaxTargets>(grid, stream, smem, X, d, Y, t, r0, rows, ldz, vec,
                                                     Z.data(), P.data(), add);
    product.add(blas.get(), Z.data(), rows, r0 == 0, C.data());
  }
  moments_total_kernel<<<blocks_for(na, 256), 256, 0, stream>>>(P.data(), na,
                                                                                     static_cast<int>(grid), R.data());
  TL_CUDA_CHECK_LAUNCH("moments_total_kernel");
  std::vector<double> host(static_cast<std::size_t>(ldz * ldz)), m(static_cast<std::size_t>(na));
  std::vector<T> first(static_cast<std::size_t>(D));
  TL_CUDA_CHECK(cudaMemcpyAsync(host.data(), C.data(), sizeof(double) * ldz * ldz, cudaMemcpyDeviceToHost, stream));
  TL_CUDA_CHECK(cudaMemcpyAsync(m.data(), R.data(), sizeof(double) * na, cudaMemcpyDeviceToHost, stream));
  TL_CUDA_CHECK(cudaMemcpyAsync(first.data(), X, sizeof(T) * d, cudaMemcpyDeviceToHost, stream));
  if (t > 0)
    TL_CUDA_CHECK(cudaMemcpyAsync(first.data() + d, Y, sizeof(T) * t, cudaMemcpyDeviceToHost, stream));
  TL_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> x0(static_cast<std::size_t>(D));
  for (std::int64_t c = 0; c < D; ++c) x0[c] = static_cast<double>(first[c]);
  return gram_detail::centre_moments(n, d, t, ldz, host.data(), m.data(), x0.data(), center, out, stats);
}

template bool gram_moments_fast_cuda<float>(const Context&, MatrixView<const float>, MatrixView<const float>, bool,
                                            double*, ColStat*);
template bool gram_moments_fast_cuda<double>(const Context&, MatrixView<const double>, MatrixView<const double>,
                                             bool, double*, ColStat*);

template <class T>
NumericMode gram_cuda(const Context& ctx, MatrixView<const T> X, MatrixView<const T> Y, VectorView<const T> w,
                      const T* offset, std::vector<double>& batches) {
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  cudaStream_t stream = tl_stream(ctx);
  const std::int64_t n = X.rows, d = X.cols, t = Y.cols, D = d + t, DD = D * D;
  auto xs = stage_to_device(ctx, X);
  auto ys = stage_targets(ctx, Y);
  auto ws = stage_to_device(ctx, MatrixView<const T>(w.data, w.data ? w.size : 0, 1, w.device));
  const T* wp = w.data ? ws.view.data : nullptr;
  const T* yp = t > 0 ? ys.view.data : nullptr;
  DeviceBuffer<T> off_dev;
  const T* offp = nullptr;
  if (offset) {
    off_dev = DeviceBuffer<T>(static_cast<std::size_t>(D), dev);
    TL_CUDA_CHECK(cudaMemcpyAsync(off_dev.data(), offset, sizeof(T) * D, cudaMemcpyHostToDevice, stream));
    offp = off_dev.data();
  }

  if (ctx.mode() == NumericMode::Fast) {
    gram_fast(ctx, xs.view.data, d, yp, t, wp, offp, n, batches);
    return NumericMode::Fast;
  }

  const std::int64_t nchunks = (n + kGramChunk - 1) / kGramChunk;
  const std::int64_t per_batch = gram_detail::batch_chunks(D, sizeof(double), std::int64_t(512) << 20);
  const std::int64_t nbatches = (nchunks + per_batch - 1) / per_batch;
  // A few target columns go to the cross kernel; many ride in the tiles.
  const bool cross = t > 0 && t <= kCrossMaxTargets;
  const std::int64_t dt = cross ? d : D;
  const int ntiles = static_cast<int>((dt + kTile - 1) / kTile);
  const std::int64_t npairs = static_cast<std::int64_t>(ntiles) * (ntiles + 1) / 2;
  const bool vec = d % 4 == 0 && reinterpret_cast<std::uintptr_t>(xs.view.data) % 16 == 0;
  TL_CUDA_CHECK(cudaFuncSetAttribute(gram_mma_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(kMmaSmem)));
  DeviceBuffer<double> P(static_cast<std::size_t>(std::min(per_batch, nchunks) * DD), dev);
  DeviceBuffer<double> R(static_cast<std::size_t>(nbatches * DD), dev);
  for (std::int64_t b = 0; b < nbatches; ++b) {
    const std::int64_t c0 = b * per_batch, nc = std::min(per_batch, nchunks - c0);
    if (npairs > 0) {
      dim3 grid(static_cast<unsigned>(npairs), static_cast<unsigned>(nc));
      gram_mma_kernel<T><<<grid, kThreads, kMmaSmem, stream>>>(xs.view.data, d, yp, t, wp, offp, n, kGramChunk, c0,
                                                               ntiles, dt, vec, P.data());
      TL_CUDA_CHECK_LAUNCH("gram_mma_kernel");
    }
    if (cross) {
      gram_cross_kernel<T><<<static_cast<unsigned>(nc), kThreads, 0, stream>>>(xs.view.data, d, yp, t, wp, offp, n,
                                                                               kGramChunk, c0, P.data());
      TL_CUDA_CHECK_LAUNCH("gram_cross_kernel");
    }
    gram_tree_kernel<<<blocks_for(DD, 256), 256, 0, stream>>>(P.data(), D, nc,
                                                                                    R.data() + b * DD);
    TL_CUDA_CHECK_LAUNCH("gram_tree_kernel");
  }
  batches.assign(static_cast<std::size_t>(nbatches * DD), 0.0);
  TL_CUDA_CHECK(
      cudaMemcpyAsync(batches.data(), R.data(), sizeof(double) * nbatches * DD, cudaMemcpyDeviceToHost, stream));
  TL_CUDA_CHECK(cudaStreamSynchronize(stream));
  return NumericMode::Identical;
}

template NumericMode gram_cuda<float>(const Context&, MatrixView<const float>, MatrixView<const float>,
                                      VectorView<const float>, const float*, std::vector<double>&);
template NumericMode gram_cuda<double>(const Context&, MatrixView<const double>, MatrixView<const double>,
                                       VectorView<const double>, const double*, std::vector<double>&);

}  // namespace tl::detail

