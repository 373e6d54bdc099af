// Time-series models: Holt-Winters exponential smoothing of a batch of series.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>

#include <optional>

#include "convert.hpp"
#include "twinlearn/tsa/holtwinters.hpp"

namespace nb = nanobind;
using namespace tlb;

namespace {
using HostMat = nb::ndarray<double, nb::ndim<2>, nb::c_contig, nb::device::cpu, nb::ro>;

struct HoltWintersFit {
  nb::object params;
  nb::object state;
  nb::object fitted;
  nb::object sse;
  nb::object status;
  nb::object iterations;
  nb::object converged;
  nb::object start;
  nb::object nobs;
};
}  // namespace

TL_BINDINGS(tsa) {
  using tl::tsa::HoltWintersSpec;
  params_class<HoltWintersSpec>(m, "HoltWintersSpec",
                                "Parameters of holt_winters_fit (twinlearn/tsa/holtwinters_fit.hpp).")
      .field("trend", &HoltWintersSpec::trend, "0 none, 1 add, 2 mul")
      .field("seasonal", &HoltWintersSpec::seasonal, "0 none, 1 add, 2 mul")
      .field("damped", &HoltWintersSpec::damped)
      .field("m", &HoltWintersSpec::m, "seasonal periods (0 without a seasonal component)")
      .field("init", &HoltWintersSpec::init, "0 estimated, 1 heuristic, 2 known")
      .field("alpha", &HoltWintersSpec::alpha, "fixed smoothing_level, NaN to estimate")
      .field("beta", &HoltWintersSpec::beta, "fixed smoothing_trend, NaN to estimate")
      .field("gamma", &HoltWintersSpec::gamma, "fixed smoothing_seasonal, NaN to estimate")
      .field("phi", &HoltWintersSpec::phi, "fixed damping_trend, NaN to estimate")
      .field("use_brute", &HoltWintersSpec::use_brute, "grid search for the smoothing parameters' start")
      .field("max_iter", &HoltWintersSpec::max_iter)
      .field("ftol", &HoltWintersSpec::ftol, "relative SSE decrease that stops the optimiser")
      .field("pgtol", &HoltWintersSpec::pgtol, "projected-gradient norm that stops the optimiser")
      .done();
  result_class<HoltWintersFit>(m, "HoltWintersFit", "Result of holt_winters_fit, one row or entry per series.")
      .field("params", &HoltWintersFit::params, "n x (6 + m): alpha, beta, gamma, l0, b0, phi, s0..")
      .field("state", &HoltWintersFit::state, "n x (2 + m): level, trend, the forecast cycle's seasonals")
      .field("fitted", &HoltWintersFit::fitted, "rows x n: fitted values, NaN outside each series")
      .field("sse", &HoltWintersFit::sse, "n")
      .field("status", &HoltWintersFit::status, "n int32: 0 ok, else the reason the series was not fitted")
      .field("iterations", &HoltWintersFit::iterations, "n int32")
      .field("converged", &HoltWintersFit::converged, "n int32")
      .field("start", &HoltWintersFit::start, "n int64: first finite index")
      .field("nobs", &HoltWintersFit::nobs, "n int64: points of the series")
      .done();

  // holt_winters_fit(ctx, Y, spec, known=None) -> HoltWintersFit; Y: float64
  // (rows = time, one series per column); known: n x (2 + m) float64.
  m.def(
      "holt_winters_fit",
      [](const tl::Context& ctx, Arr Y, const HoltWintersSpec& spec, std::optional<HostMat> known) {
        auto yv = as_matrix<const double>(Y, "endog");
        const std::size_t rows = static_cast<std::size_t>(yv.rows), n = static_cast<std::size_t>(yv.cols);
        const std::size_t mm = static_cast<std::size_t>(spec.seasonal ? spec.m : 0);
        if (known && (known->shape(0) != n || known->shape(1) != 2 + mm))
          throw tl::ValueError("holt_winters_fit: known must have shape (n_series, 2 + m)");
        HoltWintersFit r;
        tl::HoltWintersBatchOut o;
        r.params = nb::cast(new_array<double>({n, 6 + mm}, &o.params));
        r.state = nb::cast(new_array<double>({n, 2 + mm}, &o.state));
        r.fitted = nb::cast(new_array<double>({rows, n}, &o.fitted));
        r.sse = nb::cast(new_array<double>({n}, &o.sse));
        r.status = nb::cast(new_array<std::int32_t>({n}, &o.status));
        r.iterations = nb::cast(new_array<std::int32_t>({n}, &o.iterations));
        r.converged = nb::cast(new_array<std::int32_t>({n}, &o.converged));
        r.start = nb::cast(new_array<std::int64_t>({n}, &o.start));
        r.nobs = nb::cast(new_array<std::int64_t>({n}, &o.nobs));
        {
          nb::gil_scoped_release release;
          tl::holt_winters_fit(ctx, yv, spec, known ? known->data() : nullptr, o);
        }
        return r;
      },
      nb::arg("ctx"), nb::arg("Y"), nb::arg("spec"), nb::arg("known") = nb::none());
}
