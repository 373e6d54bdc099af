#include "twinlearn/tsa/holtwinters.hpp"

#include "twinlearn/core/error.hpp"

namespace tl {

void holt_winters_fit(const Context& ctx, MatrixView<const double> Y, const tsa::HoltWintersSpec& spec,
                      const double* known, const HoltWintersBatchOut& out) {
  using namespace tsa;
  TL_REQUIRE(Y.rows >= 0 && Y.cols >= 0, ValueError, "holt_winters_fit: negative shape");
  TL_REQUIRE(spec.trend >= kHwNone && spec.trend <= kHwMul, ValueError, "holt_winters_fit: bad trend ", spec.trend);
  TL_REQUIRE(spec.seasonal >= kHwNone && spec.seasonal <= kHwMul, ValueError, "holt_winters_fit: bad seasonal ",
             spec.seasonal);
  TL_REQUIRE(!spec.damped || spec.trend != kHwNone, ValueError, "Can only dampen the trend component");
  TL_REQUIRE(spec.init >= kHwEstimated && spec.init <= kHwKnown, ValueError, "holt_winters_fit: bad initialization");
  const int m = spec.seasonal ? spec.m : 0;
  TL_REQUIRE(!spec.seasonal || (spec.m >= 2 && spec.m <= kHwMaxSeasonal), ValueError,
             "seasonal_periods must be in [2, ", kHwMaxSeasonal, "], got ", spec.m);
  TL_REQUIRE(spec.init != kHwEstimated || 6 + m <= kHwMaxFree, ValueError,
             "initialization_method='estimated' supports seasonal_periods up to ", kHwMaxFree - 6, ", got ", m,
             "; use 'heuristic'");
  TL_REQUIRE(spec.init != kHwKnown || known != nullptr || Y.cols == 0, ValueError,
             "initialization 'known' needs the initial values");
  TL_REQUIRE(spec.max_iter >= 0, ValueError, "max_iter must be non-negative");
  TL_REQUIRE(Y.is_c_contiguous(), ValueError, "holt_winters_fit: Y must be C-contiguous");
  check_placement(ctx, Y, "endog");
  if (Y.cols == 0) return;
  ctx.dispatch([&] { detail::holt_winters_fit_cpu(ctx, Y, spec, known, out); },
               [&] { detail::holt_winters_fit_cuda(ctx, Y, spec, known, out); });
}

}  // namespace tl
