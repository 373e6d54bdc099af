// ARIMA on the GPU: one thread per series runs the same per-series functions
// as the CPU backend (arima_common.hpp), reading only its own row, so each
// series gets the CPU's bits whatever else shares the batch.
#include "core/cuda/kit.cuh"
#include "tsa/arima/arima_common.hpp"

namespace tl::arima_detail {
using namespace tl::cuda_kit;

namespace {

__global__ void fit_kernel(const double* __restrict__ Y, std::int64_t rows, std::int64_t cols, ArimaSpec sp,
                           std::int64_t k, double* __restrict__ params, double* __restrict__ info,
                           std::int32_t* __restrict__ status) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows) return;
  status[i] = fit_one(sp, Y + i * cols, cols, 1, params + i * k, info + i * kInfo);
}

__global__ void filter_kernel(const double* __restrict__ Y, std::int64_t rows, std::int64_t cols, ArimaSpec sp,
                              std::int64_t k, const double* __restrict__ params, std::int64_t h,
                              double* __restrict__ llf, double* __restrict__ resid, double* __restrict__ fmean,
                              double* __restrict__ fvar) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows) return;
  filter_one(sp, Y + i * cols, cols, 1, params + i * k, h, llf + i, resid + i * cols, fmean + i * h, fvar + i * h);
}

}  // namespace

void fit_cuda(const Context& ctx, MatrixView<const double> Y, const ArimaSpec& sp, double* params, double* info,
              std::int32_t* status) {
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  cudaStream_t stream = tl_stream(ctx);
  auto ys = stage_to_device(ctx, Y);
  const std::int64_t k = arima_n_params(sp) + 1;
  DeviceBuffer<double> d_params(static_cast<std::size_t>(Y.rows * k), dev);
  DeviceBuffer<double> d_info(static_cast<std::size_t>(Y.rows * kInfo), dev);
  DeviceBuffer<std::int32_t> d_status(static_cast<std::size_t>(Y.rows), dev);
  const int block = 64;
  fit_kernel<<<blocks_for(Y.rows, block), block, 0, stream>>>(ys.view.data, Y.rows, Y.cols, sp, k, d_params.data(),
                                                              d_info.data(), d_status.data());
  TL_CUDA_CHECK_LAUNCH("arima fit_kernel");
  download_async(params, d_params.data(), static_cast<std::size_t>(Y.rows * k), stream);
  download_async(info, d_info.data(), static_cast<std::size_t>(Y.rows * kInfo), stream);
  download_async(status, d_status.data(), static_cast<std::size_t>(Y.rows), stream);
  TL_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void filter_cuda(const Context& ctx, MatrixView<const double> Y, const ArimaSpec& sp, const double* params,
                 std::int64_t h, double* llf, double* resid, double* fmean, double* fvar) {
  const int dev = ctx.device().id;
  DeviceGuard guard(dev);
  cudaStream_t stream = tl_stream(ctx);
  auto ys = stage_to_device(ctx, Y);
  const std::int64_t k = arima_n_params(sp) + 1;
  auto d_params = upload_async(params, static_cast<std::size_t>(Y.rows * k), dev, stream);
  DeviceBuffer<double> d_llf(static_cast<std::size_t>(Y.rows), dev);
  DeviceBuffer<double> d_resid(static_cast<std::size_t>(Y.rows * Y.cols), dev);
  DeviceBuffer<double> d_fm(static_cast<std::size_t>(Y.rows * h + 1), dev);
  DeviceBuffer<double> d_fv(static_cast<std::size_t>(Y.rows * h + 1), dev);
  const int block = 64;
  filter_kernel<<<blocks_for(Y.rows, block), block, 0, stream>>>(
      ys.view.data, Y.rows, Y.cols, sp, k, d_params.data(), h, d_llf.data(), d_resid.data(), d_fm.data(), d_fv.data());
  TL_CUDA_CHECK_LAUNCH("arima filter_kernel");
  download_async(llf, d_llf.data(), static_cast<std::size_t>(Y.rows), stream);
  download_async(resid, d_resid.data(), static_cast<std::size_t>(Y.rows * Y.cols), stream);
  if (h > 0) {
    download_async(fmean, d_fm.data(), static_cast<std::size_t>(Y.rows * h), stream);
    download_async(fvar, d_fv.data(), static_cast<std::size_t>(Y.rows * h), stream);
  }
  TL_CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace tl::arima_detail
