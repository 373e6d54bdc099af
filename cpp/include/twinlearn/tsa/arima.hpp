// Batched seasonal ARIMA (statsmodels' ARIMA: a regression on a polynomial
// trend with SARIMA errors), fitted series by series.
//
// Model of one series y_t, t = 0..n-1 (its own values, NaN padding removed):
//   y_t = x_t' beta + z_t,  x_t = (1 if trend has 'c', t + 1 if trend has 't'),
//   (1 - L)^d (1 - L^s)^D z_t = w_t,
//   (1 - phi(L)) (1 - Phi(L^s)) w_t = (1 + theta(L)) (1 + Theta(L^s)) e_t,  e_t ~ N(0, sigma2).
// The likelihood is the exact Gaussian likelihood of the differenced series w
// (n - d - s D values), computed by a Kalman filter on the Harvey state-space
// form (statsmodels' SARIMAX form) with the stationary initial state
// covariance. This equals statsmodels' diffuse likelihood of y.
//
// Everything one series needs (differencing, the conditional-sum-of-squares
// start, the exact likelihood, its finite-difference gradient, the bounded
// quasi-Newton minimiser of core/small_minimize.hpp, forecasts) is one
// host/device function of that series' values alone: a series' results are
// the same bits alone or in any batch, at any thread count, on CPU or GPU.
//
// Memory: Y is series x time (row i is series i, NaN padding allowed before
// and after its values; host or the context's device). Outputs are host
// arrays.
#pragma once
#include <cstdint>

#include "twinlearn/core/array.hpp"
#include "twinlearn/core/context.hpp"

namespace tl {

struct ArimaSpec {
  std::int64_t p = 0, d = 0, q = 0;
  std::int64_t P = 0, D = 0, Q = 0, s = 0;
  bool trend_c = false;  // constant column in the trend regression
  bool trend_t = false;  // linear time column (t + 1) in the trend regression
  std::int64_t max_iter = 500;
  double pgtol = 1e-9;    // on -llf / n_eff
  double ftol = 1e-13;    // relative decrease stop
  bool css_start = true;  // start the exact fit from the conditional-sum-of-squares fit
};

// Per-series fit status (ArimaFit::status).
enum ArimaStatus : std::int32_t {
  kArimaOk = 0,
  kArimaAllNan = 1,       // no finite value
  kArimaTooShort = 2,     // fewer differenced values than parameters + 2
  kArimaGap = 3,          // a NaN between the first and last value
  kArimaNonFinite = 4,    // an infinite value
  kArimaNotConverged = 5  // fitted, but the minimiser did not converge
};

// Number of estimated mean parameters: trend + p + q + P + Q (sigma2 not counted).
std::int64_t arima_n_params(const ArimaSpec& spec);
// Checks the orders (ValueError naming the offending one).
void arima_check_spec(const ArimaSpec& spec);

// Fits every series. params: n_series x (arima_n_params + 1), in statsmodels'
// order (trend, ar, ma, seasonal ar, seasonal ma, sigma2); info: n_series x 6
// doubles (llf, n_eff, first index, length, iterations, evaluations);
// status: n_series. Series that cannot be fitted get NaN params.
void arima_fit(const Context& ctx, MatrixView<const double> Y, const ArimaSpec& spec, double* params, double* info,
               std::int32_t* status);

// At given params (n_series x (arima_n_params + 1)): llf (n_series), the
// one-step-ahead residuals resid (n_series x time, NaN outside a series'
// values; y - resid are the fitted values), and h-step forecasts of the mean
// and their variances (n_series x h each; h may be 0).
void arima_filter(const Context& ctx, MatrixView<const double> Y, const ArimaSpec& spec, const double* params,
                  std::int64_t h, double* llf, double* resid, double* fmean, double* fvar);

}  // namespace tl
