#include "twinlearn/core/parallel.hpp"
#include "twinlearn/tsa/holtwinters.hpp"

namespace tl::detail {

// One series per iteration: holt_winters_fit_one reads its column only.
void holt_winters_fit_cpu(const Context& ctx, MatrixView<const double> Y, const tsa::HoltWintersSpec& spec,
                          const double* known, const HoltWintersBatchOut& out) {
  const std::int64_t n = Y.cols, rows = Y.rows;
  const int m = spec.seasonal ? spec.m : 0;
  parallel_for(ctx, n, [&](std::int64_t j) {
    const tsa::HwSeriesOut o = out.series(j, n, m);
    tsa::holt_winters_fit_one(spec, Y.data + j, n, rows, known ? known + j * (2 + m) : nullptr, o);
  });
}

}  // namespace tl::detail
