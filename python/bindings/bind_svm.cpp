// Support vector machines: libsvm's SMO solver and the kernel expansion of prediction.
#include <nanobind/nanobind.h>

#include <string>

#include "convert.hpp"
#include "twinlearn/svm/smo.hpp"

namespace nb = nanobind;
using namespace tlb;

namespace {
using HostI64 = nb::ndarray<std::int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu, nb::ro>;
using HostI8 = nb::ndarray<std::int8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu, nb::ro>;
using HostVec = nb::ndarray<double, nb::ndim<1>, nb::c_contig, nb::device::cpu, nb::ro>;
using HostMat = nb::ndarray<double, nb::ndim<2>, nb::c_contig, nb::device::cpu, nb::ro>;
using HostI64Mat = nb::ndarray<std::int64_t, nb::ndim<2>, nb::c_contig, nb::device::cpu, nb::ro>;

// smo_solve's result: the solution and libsvm's scalars.
struct SmoSolution {
  nb::object alpha;
  double rho = 0;
  double obj = 0;
  std::int64_t n_iter = 0;
  int status = 0;
};
}  // namespace

TL_BINDINGS(svm) {
  params_class<tl::SvmParams>(m, "SvmParams", "Kernel and solver parameters of smo_solve (twinlearn/svm/smo.hpp).")
      .enum_field("kernel", &tl::SvmParams::kernel, tl::parse_svm_kernel, tl::svm_kernel_name,
                  "'linear', 'poly', 'rbf', 'sigmoid' or 'precomputed'")
      .field("degree", &tl::SvmParams::degree, "poly: the power (>= 0)")
      .field("gamma", &tl::SvmParams::gamma, "rbf, poly, sigmoid: the scale (>= 0)")
      .field("coef0", &tl::SvmParams::coef0, "poly, sigmoid: the offset")
      .field("tol", &tl::SvmParams::tol, "stop when the maximal violating pair's gap is below tol")
      .field("max_iter", &tl::SvmParams::max_iter, "SMO steps at most; -1: no limit")
      .field("shrinking", &tl::SvmParams::shrinking, "libsvm's shrinking heuristic")
      .field("cache_size", &tl::SvmParams::cache_size, "MB of kernel rows cached")
      .done();

  result_class<SmoSolution>(m, "SmoSolution", "Result of smo_solve.")
      .field("alpha", &SmoSolution::alpha, "l float64: the dual variables")
      .field("rho", &SmoSolution::rho, "decision = sum coef K - rho")
      .field("obj", &SmoSolution::obj, "the dual objective")
      .field("n_iter", &SmoSolution::n_iter, "SMO steps taken")
      .field("status", &SmoSolution::status, "0: converged, 1: stopped at max_iter")
      .done();

  // smo_solve(ctx, X, rows, sample, y, p, C, params, alpha0) -> SmoSolution:
  // libsvm's Solver on Q_uv = y_u y_v K(X[rows[sample[u]]], X[rows[sample[v]]]).
  m.def(
      "smo_solve",
      [](const tl::Context& ctx, Arr X, HostI64 rows, HostI64 sample, HostI8 y, HostVec p, HostVec C,
         const tl::SvmParams& params, HostVec alpha0) {
        const std::int64_t l = static_cast<std::int64_t>(sample.shape(0));
        if (static_cast<std::int64_t>(y.shape(0)) != l || static_cast<std::int64_t>(p.shape(0)) != l ||
            static_cast<std::int64_t>(C.shape(0)) != l || static_cast<std::int64_t>(alpha0.shape(0)) != l)
          throw tl::ValueError("smo_solve: sample, y, p, C and alpha0 must have the same length");
        if (X.ndim() != 2) throw tl::ValueError("smo_solve: X must be 2-D");
        double* a = nullptr;
        auto alpha = new_array<double>({static_cast<std::size_t>(l)}, &a);
        for (std::int64_t v = 0; v < l; ++v) a[v] = alpha0.data()[v];
        SmoSolution out;
        tl::SmoResult r;
        by_float_dtype(X, "X", [&](auto tag) {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          nb::gil_scoped_release release;
          r = tl::smo_solve<T>(ctx, xv, rows.data(), static_cast<std::int64_t>(rows.shape(0)), l, sample.data(),
                               y.data(), p.data(), C.data(), params, a);
        });
        out.alpha = nb::cast(alpha);
        out.rho = r.rho;
        out.obj = r.obj;
        out.n_iter = r.n_iter;
        out.status = r.status;
        return out;
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("rows"), nb::arg("sample"), nb::arg("y"), nb::arg("p"), nb::arg("C"),
      nb::arg("params"), nb::arg("alpha0"));

  // svm_decision(ctx, X, SV, coef, ranges, rho, params) -> float64 (rows, k):
  // each classifier's kernel expansion over its support vectors, minus rho.
  m.def(
      "svm_decision",
      [](const tl::Context& ctx, Arr X, Arr SV, HostMat coef, HostI64Mat ranges, HostVec rho,
         const tl::SvmParams& params) {
        const std::int64_t k = static_cast<std::int64_t>(coef.shape(0));
        if (static_cast<std::int64_t>(ranges.shape(0)) != k || ranges.shape(1) != 4 ||
            static_cast<std::int64_t>(rho.shape(0)) != k)
          throw tl::ValueError("svm_decision: coef, ranges (k x 4) and rho must describe the same classifiers");
        if (X.ndim() != 2 || SV.ndim() != 2) throw tl::ValueError("svm_decision: X and SV must be 2-D");
        const std::int64_t rows = rows_of(X);
        const std::int64_t nsv = params.kernel == tl::SvmKernel::Precomputed ? cols_of(X) : rows_of(SV);
        if (static_cast<std::int64_t>(coef.shape(1)) != nsv)
          throw tl::ValueError("svm_decision: coef has " + std::to_string(coef.shape(1)) + " columns but there are " +
                               std::to_string(nsv) + " support vectors");
        double* buf = nullptr;
        auto out = new_array<double>({static_cast<std::size_t>(rows), static_cast<std::size_t>(k)}, &buf);
        by_float_dtype(X, "X", [&](auto tag) {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          auto sv = as_matrix<const T>(SV, "SV");
          nb::gil_scoped_release release;
          tl::svm_decision<T>(ctx, xv, sv, coef.data(), ranges.data(), rho.data(), k, params, buf);
        });
        return out;
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("SV"), nb::arg("coef"), nb::arg("ranges"), nb::arg("rho"),
      nb::arg("params"));
}
