#include "twinlearn/tsa/arima.hpp"

#include "tsa/arima/arima_common.hpp"

namespace tl {

std::int64_t arima_n_params(const ArimaSpec& sp) {
  return (sp.trend_c ? 1 : 0) + (sp.trend_t ? 1 : 0) + sp.p + sp.q + sp.P + sp.Q;
}

void arima_check_spec(const ArimaSpec& sp) {
  using arima_detail::kMaxDiff;
  using arima_detail::kMaxR;
  TL_REQUIRE(sp.p >= 0 && sp.d >= 0 && sp.q >= 0, ValueError, "ARIMA: order (p, d, q) must be non-negative, got (",
             sp.p, ", ", sp.d, ", ", sp.q, ")");
  TL_REQUIRE(sp.P >= 0 && sp.D >= 0 && sp.Q >= 0 && sp.s >= 0, ValueError,
             "ARIMA: seasonal_order (P, D, Q, s) must be non-negative, got (", sp.P, ", ", sp.D, ", ", sp.Q, ", ", sp.s,
             ")");
  TL_REQUIRE(sp.s != 1, ValueError, "ARIMA: the seasonal period s must be 0 (none) or >= 2, got 1");
  TL_REQUIRE(sp.s >= 2 || (sp.P == 0 && sp.D == 0 && sp.Q == 0), ValueError,
             "ARIMA: seasonal terms need a seasonal period s >= 2");
  const std::int64_t par = sp.p + sp.s * sp.P, nma = sp.q + sp.s * sp.Q;
  const std::int64_t r = par > nma + 1 ? par : nma + 1;
  TL_REQUIRE(r <= kMaxR, ValueError, "ARIMA: the state dimension max(p + s P, q + s Q + 1) = ", r,
             " exceeds the supported ", kMaxR);
  TL_REQUIRE(sp.d + sp.s * sp.D <= kMaxDiff, ValueError, "ARIMA: the differencing order d + s D = ", sp.d + sp.s * sp.D,
             " exceeds the supported ", kMaxDiff);
  const std::int64_t k_trend = sp.trend_t ? 2 : (sp.trend_c ? 1 : 0);  // polynomial degree + 1
  TL_REQUIRE(!(sp.trend_c && sp.d + sp.D > 0), ValueError,
             "ARIMA: a constant trend ('c' or 'ct') is removed by the differencing (d + D > 0); use 't' or 'n'");
  TL_REQUIRE(!(sp.trend_t && sp.d + sp.D > 1), ValueError,
             "ARIMA: a linear trend is removed by the differencing (d + D > 1); use 'n'");
  (void)k_trend;
  TL_REQUIRE(sp.max_iter >= 1, ValueError, "ARIMA: max_iter must be >= 1, got ", sp.max_iter);
}

void arima_fit(const Context& ctx, MatrixView<const double> Y, const ArimaSpec& spec, double* params, double* info,
               std::int32_t* status) {
  arima_check_spec(spec);
  check_placement(ctx, Y, "Y");
  if (Y.rows == 0) return;
  ctx.dispatch([&] { arima_detail::fit_cpu(ctx, Y, spec, params, info, status); },
               [&] { arima_detail::fit_cuda(ctx, Y, spec, params, info, status); });
}

void arima_filter(const Context& ctx, MatrixView<const double> Y, const ArimaSpec& spec, const double* params,
                  std::int64_t h, double* llf, double* resid, double* fmean, double* fvar) {
  arima_check_spec(spec);
  check_placement(ctx, Y, "Y");
  TL_REQUIRE(h >= 0, ValueError, "ARIMA: the forecast horizon must be >= 0, got ", h);
  if (Y.rows == 0) return;
  ctx.dispatch([&] { arima_detail::filter_cpu(ctx, Y, spec, params, h, llf, resid, fmean, fvar); },
               [&] { arima_detail::filter_cuda(ctx, Y, spec, params, h, llf, resid, fmean, fvar); });
}

}  // namespace tl
