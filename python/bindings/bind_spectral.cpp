// Bindings of spectral clustering's normalization.
#include <nanobind/nanobind.h>

#include "convert.hpp"
#include "twinlearn/cluster/spectral.hpp"

namespace nb = nanobind;
using namespace tlb;

TL_BINDINGS(spectral) {
  // spectral_normalize(ctx, A, S) -> dd: S = 2 I - L (the normalized
  // Laplacian with its diagonal set to 1) of the n x n affinity A (float32
  // or float64, host or the context's device; S the same dtype and place);
  // dd: the square roots of the degrees, float64 NumPy (n).
  m.def(
      "spectral_normalize",
      [](const tl::Context& ctx, Arr A, ArrW S) {
        double* dp = nullptr;
        auto dd = new_array<double>({static_cast<std::size_t>(A.ndim() > 0 ? A.shape(0) : 0)}, &dp);
        by_float_dtype(A, "A", [&](auto tag) {
          using T = decltype(tag);
          auto av = as_matrix<const T>(A, "A");
          auto sv = as_matrix<T>(S, "S");
          nb::gil_scoped_release release;
          tl::spectral_normalize<T>(ctx, av, sv, dp);
        });
        return dd;
      },
      nb::arg("ctx"), nb::arg("A"), nb::arg("S"));
}
