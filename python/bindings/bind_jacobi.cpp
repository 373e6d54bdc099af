// Fixed-order host factorizations of identical mode (twinlearn/core/jacobi.hpp):
// Jacobi eigensolver and SVD, Householder QR. Host (NumPy) float64 arrays only.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>

#include "convert.hpp"
#include "twinlearn/core/jacobi.hpp"

namespace nb = nanobind;
using namespace tlb;

namespace {

tl::MatrixView<const double> host_matrix(const Arr& A, const char* fn) {
  TL_REQUIRE(A.ndim() == 2, tl::ValueError, fn, ": A must be a 2-D array");
  auto av = as_matrix<const double>(A, "A");
  TL_REQUIRE(av.on_host(), tl::ValueError, fn, ": host (NumPy) arrays only");
  TL_REQUIRE(av.is_c_contiguous(), tl::ValueError, fn, ": A must be C-contiguous");
  return av;
}

}  // namespace

TL_BINDINGS(jacobi) {
  // jacobi_eigh(A, max_sweeps) -> (w, V, sweeps, converged): eigenvalues
  // descending, eigenvectors in V's columns (tl::jacobi::sym_eigh).
  m.def(
      "jacobi_eigh",
      [](Arr A, int max_sweeps) {
        auto av = host_matrix(A, "jacobi_eigh");
        TL_REQUIRE(av.rows == av.cols, tl::ValueError, "jacobi_eigh: A must be square, got ", av.rows, " x ", av.cols);
        const auto d = static_cast<std::size_t>(av.rows);
        double *w = nullptr, *V = nullptr;
        auto wa = new_array<double>({d}, &w);
        auto Va = new_array<double>({d, d}, &V);
        tl::jacobi::Result r;
        {
          nb::gil_scoped_release release;
          r = tl::jacobi::sym_eigh(av.data, av.rows, w, V, max_sweeps);
        }
        return nb::make_tuple(wa, Va, r.sweeps, r.converged);
      },
      nb::arg("A"), nb::arg("max_sweeps") = tl::jacobi::kMaxSweeps);

  // jacobi_svd(A, compute_u, max_sweeps) -> (U or None, s, Vt, sweeps, converged):
  // the thin SVD (tl::jacobi::svd).
  m.def(
      "jacobi_svd",
      [](Arr A, bool compute_u, int max_sweeps) {
        auto av = host_matrix(A, "jacobi_svd");
        const auto M = static_cast<std::size_t>(av.rows), N = static_cast<std::size_t>(av.cols);
        const std::size_t R = M < N ? M : N;
        double *U = nullptr, *s = nullptr, *Vt = nullptr;
        nb::object Ua = nb::none();
        if (compute_u) Ua = nb::cast(new_array<double>({M, R}, &U));
        auto sa = new_array<double>({R}, &s);
        auto Va = new_array<double>({R, N}, &Vt);
        tl::jacobi::Result r;
        {
          nb::gil_scoped_release release;
          r = tl::jacobi::svd(av.data, av.rows, av.cols, U, s, Vt, max_sweeps);
        }
        return nb::make_tuple(Ua, sa, Va, r.sweeps, r.converged);
      },
      nb::arg("A"), nb::arg("compute_u") = true, nb::arg("max_sweeps") = tl::jacobi::kMaxSweeps);

  // jacobi_qr_q(A) -> Q: the thin QR's Q of the m x n A, m >= n (tl::jacobi::qr_q).
  m.def(
      "jacobi_qr_q",
      [](Arr A) {
        auto av = host_matrix(A, "jacobi_qr_q");
        TL_REQUIRE(av.rows >= av.cols, tl::ValueError, "jacobi_qr_q: A must have at least as many rows as columns, got ",
                   av.rows, " x ", av.cols);
        double* Q = nullptr;
        auto Qa = new_array<double>({static_cast<std::size_t>(av.rows), static_cast<std::size_t>(av.cols)}, &Q);
        {
          nb::gil_scoped_release release;
          tl::jacobi::qr_q(av.data, av.rows, av.cols, Q);
        }
        return Qa;
      },
      nb::arg("A"));
}
