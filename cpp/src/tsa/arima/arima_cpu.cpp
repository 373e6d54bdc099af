// ARIMA on the CPU: one series per loop iteration, in parallel over the
// series; a series reads only its own row, so the thread count changes no bit.
#include "tsa/arima/arima_common.hpp"
#include "twinlearn/core/parallel.hpp"

namespace tl::arima_detail {

void fit_cpu(const Context& ctx, MatrixView<const double> Y, const ArimaSpec& sp, double* params, double* info,
             std::int32_t* status) {
  TL_REQUIRE(Y.on_host(), ValueError, "the CPU backend needs host arrays");
  const std::int64_t k = arima_n_params(sp) + 1;
  parallel_for(ctx, Y.rows, [&](std::int64_t i) {
    status[i] = fit_one(sp, Y.data + i * Y.row_stride, Y.cols, Y.col_stride, params + i * k, info + i * kInfo);
  });
}

void filter_cpu(const Context& ctx, MatrixView<const double> Y, const ArimaSpec& sp, const double* params,
                std::int64_t h, double* llf, double* resid, double* fmean, double* fvar) {
  TL_REQUIRE(Y.on_host(), ValueError, "the CPU backend needs host arrays");
  const std::int64_t k = arima_n_params(sp) + 1;
  parallel_for(ctx, Y.rows, [&](std::int64_t i) {
    filter_one(sp, Y.data + i * Y.row_stride, Y.cols, Y.col_stride, params + i * k, h, llf + i, resid + i * Y.cols,
               fmean + i * h, fvar + i * h);
  });
}

}  // namespace tl::arima_detail
