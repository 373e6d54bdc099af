#include "core/cuda/check.cuh"
#include "core/cuda/launch.cuh"
#include "core/cuda/memory.cuh"
#include "twinlearn/tsa/holtwinters.hpp"

namespace tl::detail {
namespace {

// One thread per series: the same holt_winters_fit_one as the CPU backend,
// reading column j of Y (consecutive threads read consecutive addresses).
__global__ void holt_winters_fit_kernel(tsa::HoltWintersSpec spec, const double* __restrict__ Y, std::int64_t rows,
                                        std::int64_t n, const double* __restrict__ known, HoltWintersBatchOut out) {
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= n) return;
  const int m = spec.seasonal ? spec.m : 0;
  tsa::HwSeriesOut o;
  o.params = out.params + j * (6 + m);
  o.state = out.state + j * (2 + m);
  o.fitted = out.fitted + j;
  o.fstride = n;
  o.sse = out.sse + j;
  o.status = out.status + j;
  o.iterations = out.iterations + j;
  o.converged = out.converged + j;
  o.start = out.start + j;
  o.nobs = out.nobs + j;
  tsa::holt_winters_fit_one(spec, Y + j, n, rows, known ? known + j * (2 + m) : nullptr, o);
}

}  // namespace

void holt_winters_fit_cuda(const Context& ctx, MatrixView<const double> Y, const tsa::HoltWintersSpec& spec,
                           const double* known, const HoltWintersBatchOut& out) {
  const std::int64_t n = Y.cols, rows = Y.rows;
  const int m = spec.seasonal ? spec.m : 0;
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  cudaStream_t stream = tl_stream(ctx);
  auto ys = stage_to_device(ctx, Y);
  const std::size_t un = static_cast<std::size_t>(n);
  DeviceBuffer<double> d_known;
  if (known) d_known = upload_async(known, un * (2 + m), dev, stream);
  DeviceBuffer<double> params(un * (6 + m), dev), state(un * (2 + m), dev), fitted(un * rows, dev), sse(un, dev);
  DeviceBuffer<std::int32_t> status(un, dev), iters(un, dev), conv(un, dev);
  DeviceBuffer<std::int64_t> start(un, dev), nobs(un, dev);
  HoltWintersBatchOut d{params.data(), state.data(), fitted.data(), sse.data(), status.data(),
                        iters.data(),  conv.data(),  start.data(),  nobs.data()};
  // The per-thread frame is large (dual-number states): small blocks.
  const int block = 64;
  holt_winters_fit_kernel<<<blocks_for(n, block), block, 0, stream>>>(spec, ys.view.data, rows, n,
                                                                      known ? d_known.data() : nullptr, d);
  TL_CUDA_CHECK_LAUNCH("holt_winters_fit_kernel");
  download_async(out.params, params.data(), un * (6 + m), stream);
  download_async(out.state, state.data(), un * (2 + m), stream);
  download_async(out.fitted, fitted.data(), un * rows, stream);
  download_async(out.sse, sse.data(), un, stream);
  download_async(out.status, status.data(), un, stream);
  download_async(out.iterations, iters.data(), un, stream);
  download_async(out.converged, conv.data(), un, stream);
  download_async(out.start, start.data(), un, stream);
  download_async(out.nobs, nobs.data(), un, stream);
  TL_CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace tl::detail
