#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>

#include "convert.hpp"
#include "twinlearn/preprocessing/standard_scaler.hpp"

namespace nb = nanobind;
using namespace tlb;

namespace {
const double* host_params(const std::optional<nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>>& a,
                          std::int64_t cols, const char* name) {
  if (!a) return nullptr;
  if (static_cast<std::int64_t>(a->shape(0)) != cols)
    throw tl::ValueError(std::string(name) + " has " + std::to_string(a->shape(0)) + " entries, X has " +
                         std::to_string(cols) + " features");
  return a->data();
}
}  // namespace

void init_preprocessing(nb::module_& m) {
  using HostVec = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
  // standard_scaler_apply(ctx, X, mean, scale, out, inverse) -> number of infinite entries in X;
  // out = (X - mean) / scale, or the inverse.
  m.def(
      "standard_scaler_apply",
      [](const tl::Context& ctx, Arr X, std::optional<HostVec> mean, std::optional<HostVec> scale, ArrW out,
         bool inverse) {
        return by_float_dtype(X, "X", [&](auto tag) {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          auto ov = as_matrix<T>(out, "out");
          const double* mp = host_params(mean, xv.cols, "mean");
          const double* sp = host_params(scale, xv.cols, "scale");
          nb::gil_scoped_release release;
          return tl::standard_scaler_apply<T>(ctx, xv, mp, sp, ov, inverse);
        });
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("mean").none(), nb::arg("scale").none(), nb::arg("out"),
      nb::arg("inverse") = false);
}
