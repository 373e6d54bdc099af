// Canonical reductions, fixed-point histograms and the canonical GEMM.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <vector>

#include "convert.hpp"
#include "twinlearn/core/fixed_point.hpp"
#include "twinlearn/core/gemm.hpp"
#include "twinlearn/core/reduce.hpp"

namespace nb = nanobind;
using namespace tlb;

namespace {

// A NumPy array owning a copy of v, of the given shape.
template <class T>
nb::object numpy_from(const std::vector<T>& v, std::initializer_list<std::size_t> shape) {
  T* buf = new T[v.size() ? v.size() : 1];
  std::copy(v.begin(), v.end(), buf);
  nb::capsule owner(buf, [](void* p) noexcept { delete[] static_cast<T*>(p); });
  return nb::cast(nb::ndarray<nb::numpy, T>(buf, shape.size(), shape.begin(), owner));
}

std::int64_t n_cols(const Arr& X) { return X.ndim() == 2 ? static_cast<std::int64_t>(X.shape(1)) : 1; }

}  // namespace

TL_BINDINGS(reduce) {
  m.def(
      "reduce_sum",
      [](const tl::Context& ctx, Arr x, bool double_acc) {
        return by_float_dtype(x, "x", [&](auto tag) -> double {
          using T = decltype(tag);
          auto xv = as_vector<const T>(x, "x");
          nb::gil_scoped_release release;
          return double_acc ? tl::reduce_sum_double<T>(ctx, xv) : static_cast<double>(tl::reduce_sum<T>(ctx, xv));
        });
      },
      nb::arg("ctx"), nb::arg("x"), nb::arg("double_acc") = false,
      "Canonical sum of a 1-D array, accumulated in its dtype (or in float64 with double_acc).");
  m.def(
      "reduce_dot",
      [](const tl::Context& ctx, Arr x, Arr y, bool double_acc) {
        return by_float_dtype(x, "x", [&](auto tag) -> double {
          using T = decltype(tag);
          auto xv = as_vector<const T>(x, "x");
          auto yv = as_vector<const T>(y, "y");
          nb::gil_scoped_release release;
          return double_acc ? tl::reduce_dot_double<T>(ctx, xv, yv)
                            : static_cast<double>(tl::reduce_dot<T>(ctx, xv, yv));
        });
      },
      nb::arg("ctx"), nb::arg("x"), nb::arg("y"), nb::arg("double_acc") = false,
      "Canonical dot product of two 1-D arrays of the same dtype (one fma per element).");
  m.def(
      "reduce_min",
      [](const tl::Context& ctx, Arr x) {
        return by_float_dtype(x, "x", [&](auto tag) -> double {
          using T = decltype(tag);
          auto xv = as_vector<const T>(x, "x");
          nb::gil_scoped_release release;
          return static_cast<double>(tl::reduce_min<T>(ctx, xv));
        });
      },
      nb::arg("ctx"), nb::arg("x"));
  m.def(
      "reduce_max",
      [](const tl::Context& ctx, Arr x) {
        return by_float_dtype(x, "x", [&](auto tag) -> double {
          using T = decltype(tag);
          auto xv = as_vector<const T>(x, "x");
          nb::gil_scoped_release release;
          return static_cast<double>(tl::reduce_max<T>(ctx, xv));
        });
      },
      nb::arg("ctx"), nb::arg("x"));
  m.def(
      "reduce_argmin",
      [](const tl::Context& ctx, Arr x) {
        return by_float_dtype(x, "x", [&](auto tag) -> std::int64_t {
          using T = decltype(tag);
          auto xv = as_vector<const T>(x, "x");
          nb::gil_scoped_release release;
          return tl::reduce_argmin<T>(ctx, xv);
        });
      },
      nb::arg("ctx"), nb::arg("x"));
  m.def(
      "reduce_argmax",
      [](const tl::Context& ctx, Arr x) {
        return by_float_dtype(x, "x", [&](auto tag) -> std::int64_t {
          using T = decltype(tag);
          auto xv = as_vector<const T>(x, "x");
          nb::gil_scoped_release release;
          return tl::reduce_argmax<T>(ctx, xv);
        });
      },
      nb::arg("ctx"), nb::arg("x"));

  // Column-wise reductions of a 2-D array; results are NumPy arrays of shape (cols,).
  m.def(
      "column_sums",
      [](const tl::Context& ctx, Arr X, bool double_acc) {
        const std::int64_t cols = n_cols(X);
        return by_float_dtype(X, "X", [&](auto tag) -> nb::object {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          if (double_acc) {
            std::vector<double> out(static_cast<std::size_t>(cols));
            {
              nb::gil_scoped_release release;
              tl::column_sums_double<T>(ctx, xv, out.data());
            }
            return numpy_from(out, {static_cast<std::size_t>(cols)});
          }
          std::vector<T> out(static_cast<std::size_t>(cols));
          {
            nb::gil_scoped_release release;
            tl::column_sums<T>(ctx, xv, out.data());
          }
          return numpy_from(out, {static_cast<std::size_t>(cols)});
        });
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("double_acc") = false);
  auto column_value = [&m](const char* name, auto which) {
    m.def(
        name,
        [which](const tl::Context& ctx, Arr X) {
          const std::int64_t cols = n_cols(X);
          return by_float_dtype(X, "X", [&](auto tag) -> nb::object {
            using T = decltype(tag);
            auto xv = as_matrix<const T>(X, "X");
            std::vector<T> out(static_cast<std::size_t>(cols));
            {
              nb::gil_scoped_release release;
              if (which.value) tl::column_max<T>(ctx, xv, out.data());
              else tl::column_min<T>(ctx, xv, out.data());
            }
            return numpy_from(out, {static_cast<std::size_t>(cols)});
          });
        },
        nb::arg("ctx"), nb::arg("X"));
  };
  column_value("column_min", std::false_type{});
  column_value("column_max", std::true_type{});
  auto column_index = [&m](const char* name, auto which) {
    m.def(
        name,
        [which](const tl::Context& ctx, Arr X) {
          const std::int64_t cols = n_cols(X);
          std::vector<std::int64_t> out(static_cast<std::size_t>(cols));
          by_float_dtype(X, "X", [&](auto tag) {
            using T = decltype(tag);
            auto xv = as_matrix<const T>(X, "X");
            nb::gil_scoped_release release;
            if (which.value) tl::column_argmax<T>(ctx, xv, out.data());
            else tl::column_argmin<T>(ctx, xv, out.data());
          });
          return numpy_from(out, {static_cast<std::size_t>(cols)});
        },
        nb::arg("ctx"), nb::arg("X"));
  };
  column_index("column_argmin", std::false_type{});
  column_index("column_argmax", std::true_type{});

  // Fixed point.
  m.def(
      "fixed_point_scale", [](double max_abs, std::int64_t n) { return tl::fixed_point_scale(max_abs, n).exponent; },
      nb::arg("max_abs"), nb::arg("n"),
      "The largest exponent k such that n values of magnitude <= max_abs, quantized as round(x * 2**k), sum in int64.");
  m.def(
      "fixed_point_scale_for",
      [](const tl::Context& ctx, Arr values) {
        return by_float_dtype(values, "values", [&](auto tag) -> int {
          using T = decltype(tag);
          auto vv = as_matrix<const T>(values, "values");
          nb::gil_scoped_release release;
          return tl::fixed_point_scale_for<T>(ctx, vv).exponent;
        });
      },
      nb::arg("ctx"), nb::arg("values"));
  // fixed_histogram(ctx, values, bins, n_bins, exponent) -> int64 array (n_bins,) for 1-D
  // values, (n_bins, n_values) for 2-D values.
  m.def(
      "fixed_histogram",
      [](const tl::Context& ctx, Arr values, Arr bins, std::int64_t n_bins, int exponent) {
        const std::int64_t nv = n_cols(values);
        TL_REQUIRE(n_bins >= 0, tl::ValueError, "n_bins must be >= 0, got ", n_bins);
        std::vector<std::int64_t> out(static_cast<std::size_t>(n_bins * nv));
        by_float_dtype(values, "values", [&](auto tag) {
          using T = decltype(tag);
          auto vv = as_matrix<const T>(values, "values");
          auto bv = as_vector<const std::int32_t>(bins, "bins");
          nb::gil_scoped_release release;
          tl::fixed_histogram<T>(ctx, vv, bv, n_bins, tl::FixedScale{exponent}, out.data());
        });
        if (values.ndim() == 1) return numpy_from(out, {static_cast<std::size_t>(n_bins)});
        return numpy_from(out, {static_cast<std::size_t>(n_bins), static_cast<std::size_t>(nv)});
      },
      nb::arg("ctx"), nb::arg("values"), nb::arg("bins"), nb::arg("n_bins"), nb::arg("exponent"));

  // gemm(ctx, A, B, transpose_b, out): out = A @ B (or A @ B.T), canonical
  // order except in fast mode on a GPU (cuBLAS).
  m.def(
      "gemm",
      [](const tl::Context& ctx, Arr A, Arr B, bool transpose_b, ArrW out) {
        by_float_dtype(A, "A", [&](auto tag) {
          using T = decltype(tag);
          TL_REQUIRE(A.ndim() == 2 && B.ndim() == 2 && out.ndim() == 2, tl::ValueError,
                     "gemm: A, B and out must be 2-D");
          auto av = as_matrix<const T>(A, "A");
          auto bv = as_matrix<const T>(B, "B");
          auto cv = as_matrix<T>(out, "out");
          nb::gil_scoped_release release;
          tl::gemm<T>(ctx, av, bv, transpose_b, cv);
        });
      },
      nb::arg("ctx"), nb::arg("A"), nb::arg("B"), nb::arg("transpose_b"), nb::arg("out"));
}
