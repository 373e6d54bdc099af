#include "twinlearn/core/parallel.hpp"
#include "twinlearn/tsa/holtwinters.hpp"

namespace tl::detail {

// One series per iteration: holt_winters_fit_one reads its column only.
void holt_winters_fit_cpu(const Context& ctx, MatrixView<const double> Y, const tsa::HoltWintersSpec& spec,
                          const double* known, const HoltWintersBatchOut& out) {
  const std::int64_t n = Y.cols, rows = Y.rows;
  const int m = spec.seasonal ? spec.m : 0;
  parallel_for(ctx, n, [&](std::int64_t j) {
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
    tsa::holt_winters_fit_one(spec, Y.data + j, n, rows, known ? known + j * (2 + m) : nullptr, o);
  });
}

}  // namespace tl::detail
