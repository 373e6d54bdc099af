// Holt-Winters exponential smoothing of a batch of series (entry points).
#pragma once
#include <cstdint>

#include "twinlearn/core/array.hpp"
#include "twinlearn/core/context.hpp"
#include "twinlearn/tsa/holtwinters_fit.hpp"

namespace tl {

// Host outputs of a batch fit of Y.cols series (n = Y.cols, m = spec.m or 0):
// params n x (6 + m), state n x (2 + m), fitted Y.rows x n (Y's layout),
// sse, status, iterations, converged, start, nobs: n entries each.
struct HoltWintersBatchOut {
  double* params = nullptr;
  double* state = nullptr;
  double* fitted = nullptr;
  double* sse = nullptr;
  std::int32_t* status = nullptr;
  std::int32_t* iterations = nullptr;
  std::int32_t* converged = nullptr;
  std::int64_t* start = nullptr;
  std::int64_t* nobs = nullptr;
};

// Fits every column of Y (rows = time, one series per column, NaN padding
// before and after each series) with tl::tsa::holt_winters_fit_one. Series j
// reads column j only and its result is the same bits whatever the batch, the
// thread count or the backend. known: Y.cols x (2 + m) initial values for
// initialization 'known' (host memory), else nullptr. Y: host or the
// context's device, C-contiguous; outputs: host memory.
void holt_winters_fit(const Context& ctx, MatrixView<const double> Y, const tsa::HoltWintersSpec& spec,
                      const double* known, const HoltWintersBatchOut& out);

namespace detail {
void holt_winters_fit_cpu(const Context& ctx, MatrixView<const double> Y, const tsa::HoltWintersSpec& spec,
                          const double* known, const HoltWintersBatchOut& out);
void holt_winters_fit_cuda(const Context& ctx, MatrixView<const double> Y, const tsa::HoltWintersSpec& spec,
                           const double* known, const HoltWintersBatchOut& out);
}  // namespace detail

}  // namespace tl
