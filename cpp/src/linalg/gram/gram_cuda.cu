// CUDA backend of tl::linalg::gram. Canonical: Zᵀ as a device copy, then the
// canonical GEMM (exactly symmetric, see gram_cpu.cpp). Fast: cuBLAS over row
// chunks of Z (X itself when there is nothing to subtract or weigh), the
// partials summed in double and the upper triangle mirrored (symmetric too).
#include <vector>

#include "core/cuda/memory.cuh"
#include "linalg/gram/gram_impl.hpp"
#include "linalg/matmul/matmul_impl.hpp"
#include "twinlearn/core/gemm.hpp"

namespace tl::linalg::detail {

using namespace ::tl::detail;


template <class T>
NumericMode gram_cuda(const Context& ctx, MatrixView<const T> X, VectorView<const T> w, const T* offset,
                      MatrixView<T> G) {
  const std::int64_t n = X.rows, d = X.cols;
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  cudaStream_t stream = tl_stream(ctx);
  const bool fast = ctx.mode() == NumericMode::Fast && n <= INT32_MAX && d <= INT32_MAX;
  if (!fast) {
    DeviceBuffer<T> zt(static_cast<std::size_t>(n * d), dev);
    MatrixView<T> ztv(zt.data(), d, n, ctx.device());
    prepare_rows_cuda<T>(ctx, X, w, offset, true, ztv);
    tl::gemm<T>(ctx, ztv.as_const(), ztv.as_const(), true, G);
    return NumericMode::Identical;
  }
  DeviceBuffer<T> z;
  MatrixView<const T> zv = X;
  if (offset || w.data || !X.device.is_cuda() || !X.is_c_contiguous()) {
    z = DeviceBuffer<T>(static_cast<std::size_t>(n * d), dev);
    MatrixView<T> zw(z.data(), n, d, ctx.device());
    prepare_rows_cuda<T>(ctx, X, w, offset, false, zw);
    zv = zw.as_const();
  }
  DeviceBuffer<T> gbuf;
  MatrixView<T> gd = G;
  if (!G.device.is_cuda()) {
    gbuf = DeviceBuffer<T>(static_cast<std::size_t>(d * d), dev);
    gd = MatrixView<T>(gbuf.data(), d, d, ctx.device());
  } else {
    TL_REQUIRE(G.is_c_contiguous(), ValueError, "G: the CUDA backend needs a C-contiguous CUDA array");
  }
  blas_gram_cuda<T>(ctx, zv.data, n, d, gd.data);
  if (!G.device.is_cuda()) {
    std::vector<T> host(static_cast<std::size_t>(d * d));
    TL_CUDA_CHECK(cudaMemcpyAsync(host.data(), gd.data, sizeof(T) * d * d, cudaMemcpyDeviceToHost, stream));
    TL_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (std::int64_t i = 0; i < d; ++i)
      for (std::int64_t j = 0; j < d; ++j) G(i, j) = host[i * d + j];
  } else {
    TL_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  return NumericMode::Fast;
}

template NumericMode gram_cuda<float>(const Context&, MatrixView<const float>, VectorView<const float>, const float*,
                                      MatrixView<float>);
template NumericMode gram_cuda<double>(const Context&, MatrixView<const double>, VectorView<const double>,
                                       const double*, MatrixView<double>);

}  // namespace tl::linalg::detail
