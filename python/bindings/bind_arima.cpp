// Batched ARIMA: fitting every series, and the filter at given parameters
// (log-likelihood, residuals, forecasts).
#include <nanobind/nanobind.h>

#include <string>

#include "convert.hpp"
#include "twinlearn/tsa/arima.hpp"

namespace nb = nanobind;
using namespace tlb;

namespace {
using HostF64 = nb::ndarray<double, nb::ndim<2>, nb::c_contig, nb::device::cpu, nb::ro>;

struct ArimaFitResult {
  nb::object params, info, status;
};
struct ArimaFilterResult {
  nb::object llf, resid, forecast_mean, forecast_var;
};
}  // namespace

TL_BINDINGS(arima) {
  params_class<tl::ArimaSpec>(m, "ArimaSpec", "The model and fit options of arima_fit (twinlearn/tsa/arima.hpp).")
      .field("p", &tl::ArimaSpec::p)
      .field("d", &tl::ArimaSpec::d)
      .field("q", &tl::ArimaSpec::q)
      .field("P", &tl::ArimaSpec::P)
      .field("D", &tl::ArimaSpec::D)
      .field("Q", &tl::ArimaSpec::Q)
      .field("s", &tl::ArimaSpec::s, "seasonal period (0: none)")
      .field("trend_c", &tl::ArimaSpec::trend_c, "constant in the trend regression")
      .field("trend_t", &tl::ArimaSpec::trend_t, "time t + 1 in the trend regression")
      .field("max_iter", &tl::ArimaSpec::max_iter, "minimiser iterations per stage")
      .field("pgtol", &tl::ArimaSpec::pgtol, "projected-gradient stop on -llf / n_eff")
      .field("ftol", &tl::ArimaSpec::ftol, "relative-decrease stop")
      .field("css_start", &tl::ArimaSpec::css_start, "start from the conditional-sum-of-squares fit")
      .done();
  result_class<ArimaFitResult>(m, "ArimaFitResult", "Result of arima_fit.")
      .field("params", &ArimaFitResult::params, "n_series x (n_params + 1) float64: trend, ar, ma, sar, sma, sigma2")
      .field("info", &ArimaFitResult::info,
             "n_series x 6 float64: llf, n_eff, first index, length, iterations, evaluations")
      .field("status", &ArimaFitResult::status,
             "n_series int32: 0 ok, 1 all NaN, 2 too short, 3 gap, 4 inf, 5 "
             "not converged")
      .done();
  result_class<ArimaFilterResult>(m, "ArimaFilterResult", "Result of arima_filter.")
      .field("llf", &ArimaFilterResult::llf, "n_series float64")
      .field("resid", &ArimaFilterResult::resid, "n_series x time float64, one-step-ahead residuals")
      .field("forecast_mean", &ArimaFilterResult::forecast_mean, "n_series x h float64")
      .field("forecast_var", &ArimaFilterResult::forecast_var, "n_series x h float64")
      .done();

  m.def("arima_n_params", &tl::arima_n_params, nb::arg("spec"), "Mean parameters: trend + p + q + P + Q.");
  m.def("arima_check_spec", &tl::arima_check_spec, nb::arg("spec"), "ValueError naming an unsupported order.");

  // arima_fit(ctx, Y, spec) -> ArimaFitResult; Y: n_series x time float64
  m.def(
      "arima_fit",
      [](const tl::Context& ctx, Arr Y, const tl::ArimaSpec& spec) {
        tl::arima_check_spec(spec);
        check_dtype<double>(Y, "Y");
        const std::size_t rows = static_cast<std::size_t>(rows_of(Y));
        const std::size_t k = static_cast<std::size_t>(tl::arima_n_params(spec) + 1);
        double *pp = nullptr, *ip = nullptr;
        std::int32_t* sp = nullptr;
        auto params = new_array<double>({rows, k}, &pp);
        auto info = new_array<double>({rows, 6}, &ip);
        auto status = new_array<std::int32_t>({rows}, &sp);
        auto yv = as_matrix<const double>(Y, "Y");
        {
          nb::gil_scoped_release release;
          tl::arima_fit(ctx, yv, spec, pp, ip, sp);
        }
        ArimaFitResult r;
        r.params = nb::cast(params);
        r.info = nb::cast(info);
        r.status = nb::cast(status);
        return r;
      },
      nb::arg("ctx"), nb::arg("Y"), nb::arg("spec"));

  // arima_filter(ctx, Y, spec, params, h) -> ArimaFilterResult
  m.def(
      "arima_filter",
      [](const tl::Context& ctx, Arr Y, const tl::ArimaSpec& spec, HostF64 params, std::int64_t h) {
        tl::arima_check_spec(spec);
        check_dtype<double>(Y, "Y");
        const std::int64_t rows = rows_of(Y), cols = cols_of(Y);
        const std::int64_t k = tl::arima_n_params(spec) + 1;
        if (static_cast<std::int64_t>(params.shape(0)) != rows || static_cast<std::int64_t>(params.shape(1)) != k)
          throw tl::ValueError("arima_filter: params must be " + std::to_string(rows) + " x " + std::to_string(k));
        if (h < 0) throw tl::ValueError("arima_filter: h must be >= 0, got " + std::to_string(h));
        double *lp = nullptr, *rp = nullptr, *mp = nullptr, *vp = nullptr;
        const std::size_t ur = static_cast<std::size_t>(rows), uh = static_cast<std::size_t>(h);
        auto llf = new_array<double>({ur}, &lp);
        auto resid = new_array<double>({ur, static_cast<std::size_t>(cols)}, &rp);
        auto fm = new_array<double>({ur, uh}, &mp);
        auto fv = new_array<double>({ur, uh}, &vp);
        auto yv = as_matrix<const double>(Y, "Y");
        {
          nb::gil_scoped_release release;
          tl::arima_filter(ctx, yv, spec, params.data(), h, lp, rp, mp, vp);
        }
        ArimaFilterResult r;
        r.llf = nb::cast(llf);
        r.resid = nb::cast(resid);
        r.forecast_mean = nb::cast(fm);
        r.forecast_var = nb::cast(fv);
        return r;
      },
      nb::arg("ctx"), nb::arg("Y"), nb::arg("spec"), nb::arg("params"), nb::arg("h"));
}
