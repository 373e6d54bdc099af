// Gaussian-process regression's dense solves (tl::gp): the Cholesky factor
// of K + alpha I and solves with it. Host (NumPy) float64 matrices only; the
// factor is the upper triangle of a row-major buffer (A = Uᵀ U).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include "convert.hpp"
#include "twinlearn/gaussian_process/cholesky.hpp"

namespace nb = nanobind;
using namespace tlb;

namespace {

template <class T, class A>
tl::MatrixView<T> host_matrix(const A& a, const char* name) {
  auto v = as_matrix<T>(a, name);
  TL_REQUIRE(v.on_host() && v.is_c_contiguous() && a.ndim() == 2, tl::ValueError, name,
             " must be a C-contiguous 2-D host (NumPy) array");
  return v;
}

tl::MatrixView<const double> factor(const Arr& U) {
  auto u = host_matrix<const double>(U, "U");
  TL_REQUIRE(u.rows == u.cols, tl::ValueError, "U must be square, got (", u.rows, ", ", u.cols, ")");
  return u;
}

}  // namespace

TL_BINDINGS(gaussian_process) {
  // gp_cholesky(ctx, A) -> bool: A (n x n, float64) := its upper Cholesky
  // factor U (A = Uᵀ U, strict lower triangle zeroed); False when A is not
  // positive definite. cuSOLVER in fast mode on a GPU, else the fixed-order
  // host factorization.
  m.def(
      "gp_cholesky",
      [](const tl::Context& ctx, ArrW A) {
        auto a = host_matrix<double>(A, "A");
        TL_REQUIRE(a.rows == a.cols, tl::ValueError, "A must be square, got (", a.rows, ", ", a.cols, ")");
        nb::gil_scoped_release release;
        return tl::gp::cholesky(ctx, a.data, a.rows);
      },
      nb::arg("ctx"), nb::arg("A"));

  // gp_solve_lower(ctx, U, B): B (n x m) := U⁻ᵀ B (forward substitution), on the host.
  m.def(
      "gp_solve_lower",
      [](const tl::Context& ctx, Arr U, ArrW B) {
        auto u = factor(U);
        auto b = host_matrix<double>(B, "B");
        TL_REQUIRE(b.rows == u.rows, tl::ValueError, "B has ", b.rows, " rows, U has ", u.rows);
        nb::gil_scoped_release release;
        tl::gp::solve_lower(ctx, u.data, u.rows, b.data, b.cols);
      },
      nb::arg("ctx"), nb::arg("U"), nb::arg("B"));

  // gp_cho_solve(ctx, U, B): B (n x m) := (Uᵀ U)⁻¹ B.
  m.def(
      "gp_cho_solve",
      [](const tl::Context& ctx, Arr U, ArrW B) {
        auto u = factor(U);
        auto b = host_matrix<double>(B, "B");
        TL_REQUIRE(b.rows == u.rows, tl::ValueError, "B has ", b.rows, " rows, U has ", u.rows);
        nb::gil_scoped_release release;
        tl::gp::cho_solve(ctx, u.data, u.rows, b.data, b.cols);
      },
      nb::arg("ctx"), nb::arg("U"), nb::arg("B"));

  // gp_cho_inverse(ctx, U, out): out (n x n) := (Uᵀ U)⁻¹.
  m.def(
      "gp_cho_inverse",
      [](const tl::Context& ctx, Arr U, ArrW out) {
        auto u = factor(U);
        auto o = host_matrix<double>(out, "out");
        TL_REQUIRE(o.rows == u.rows && o.cols == u.rows, tl::ValueError, "out must be n x n with n = ", u.rows);
        nb::gil_scoped_release release;
        tl::gp::cho_inverse(ctx, u.data, u.rows, o.data);
      },
      nb::arg("ctx"), nb::arg("U"), nb::arg("out"));
}
