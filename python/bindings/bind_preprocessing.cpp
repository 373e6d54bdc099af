// Preprocessing: column extrema and order statistics, the column-affine and row-norm transforms.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>

#include <optional>
#include <utility>
#include <vector>

#include "convert.hpp"
#include "twinlearn/core/extrema.hpp"
#include "twinlearn/core/select.hpp"
#include "twinlearn/preprocessing/column_affine.hpp"
#include "twinlearn/preprocessing/normalizer.hpp"

namespace nb = nanobind;
using namespace tlb;

namespace {
using HostVec = nb::ndarray<double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
// Inputs that are only read may be read-only arrays (e.g. memory maps, or
// fitted attributes restored from a pickle).
using RoHostVec = nb::ndarray<double, nb::ndim<1>, nb::c_contig, nb::device::cpu, nb::ro>;

template <class V>
const double* host_params(const std::optional<V>& a, std::int64_t cols, const char* name) {
  if (!a) return nullptr;
  if (static_cast<std::int64_t>(a->shape(0)) != cols)
    throw tl::ValueError(std::string(name) + " has " + std::to_string(a->shape(0)) + " entries, X has " +
                         std::to_string(cols) + " features");
  return a->data();
}

// column_extrema's result: each a float64 vector of one entry per column.
struct ColumnExtrema {
  nb::object min;
  nb::object max;
  nb::object max_abs;
  nb::object n_valid;
};

}  // namespace

TL_BINDINGS(preprocessing) {
  result_class<ColumnExtrema>(m, "ColumnExtrema", "Result of column_extrema (NaN ignored, -0 below +0).")
      .field("min", &ColumnExtrema::min, "cols float64")
      .field("max", &ColumnExtrema::max, "cols float64")
      .field("max_abs", &ColumnExtrema::max_abs, "cols float64")
      .field("n_valid", &ColumnExtrema::n_valid, "cols float64: entries that are not NaN")
      .done();

  // column_extrema(ctx, X) -> ColumnExtrema of each column of X.
  m.def(
      "column_extrema",
      [](const tl::Context& ctx, Arr X) {
        const std::int64_t cols = cols_of(X);
        std::vector<tl::ColExtrema> out(static_cast<std::size_t>(cols));
        by_float_dtype(X, "X", [&](auto tag) {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          nb::gil_scoped_release release;
          tl::column_extrema<T>(ctx, xv, out.data());
        });
        const std::size_t uc = static_cast<std::size_t>(cols);
        double *mn = nullptr, *mx = nullptr, *ma = nullptr, *nv = nullptr;
        ColumnExtrema r;
        r.min = nb::cast(new_array<double>({uc}, &mn));
        r.max = nb::cast(new_array<double>({uc}, &mx));
        r.max_abs = nb::cast(new_array<double>({uc}, &ma));
        r.n_valid = nb::cast(new_array<double>({uc}, &nv));
        for (std::size_t j = 0; j < uc; ++j) {
          mn[j] = out[j].min;
          mx[j] = out[j].max;
          ma[j] = out[j].max_abs;
          nv[j] = static_cast<double>(out[j].n);
        }
        return r;
      },
      nb::arg("ctx"), nb::arg("X"));

  // column_select(ctx, X, ranks) -> array (k, cols) of X's dtype: entry (r, j)
  // is the ranks[r, j]-th smallest entry of column j (NaN sorted last, -0 < +0;
  // rank -1 gives NaN). ranks: int64 (k, cols), host.
  m.def(
      "column_select",
      [](const tl::Context& ctx, Arr X,
         nb::ndarray<std::int64_t, nb::ndim<2>, nb::c_contig, nb::device::cpu, nb::ro> ranks) {
        const std::int64_t cols = cols_of(X);
        if (static_cast<std::int64_t>(ranks.shape(1)) != cols)
          throw tl::ValueError("column_select: ranks has " + std::to_string(ranks.shape(1)) + " columns, X has " +
                               std::to_string(cols));
        const std::size_t k = ranks.shape(0);
        return by_float_dtype(X, "X", [&](auto tag) -> nb::object {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          T* buf = nullptr;
          auto sel = new_array<T>({k, static_cast<std::size_t>(cols)}, &buf);
          {
            nb::gil_scoped_release release;
            tl::column_select<T>(ctx, xv, ranks.data(), static_cast<std::int64_t>(k), buf);
          }
          return nb::cast(sel);
        });
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("ranks"));

  // column_affine_apply(ctx, X, out, sub, div, mul, add, clip) -> number of
  // infinite entries of X; out = X - sub, / div, * mul, + add, then clipped
  // to clip = (lo, hi); each step optional.
  m.def(
      "column_affine_apply",
      [](const tl::Context& ctx, Arr X, ArrW out, std::optional<RoHostVec> sub, std::optional<RoHostVec> div,
         std::optional<RoHostVec> mul, std::optional<RoHostVec> add, std::optional<std::pair<double, double>> clip) {
        return by_float_dtype(X, "X", [&](auto tag) {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          auto ov = as_matrix<T>(out, "out");
          tl::ColumnAffine steps;
          steps.sub = host_params(sub, xv.cols, "sub");
          steps.div = host_params(div, xv.cols, "div");
          steps.mul = host_params(mul, xv.cols, "mul");
          steps.add = host_params(add, xv.cols, "add");
          if (clip) {
            steps.clip = true;
            steps.clip_lo = clip->first;
            steps.clip_hi = clip->second;
          }
          nb::gil_scoped_release release;
          return tl::column_affine_apply<T>(ctx, xv, steps, ov);
        });
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("out"), nb::arg("sub").none() = nb::none(),
      nb::arg("div").none() = nb::none(), nb::arg("mul").none() = nb::none(), nb::arg("add").none() = nb::none(),
      nb::arg("clip").none() = nb::none());

  // normalizer_apply(ctx, X, norm, out): each row divided by its 'l1', 'l2' or 'max' norm.
  m.def(
      "normalizer_apply",
      [](const tl::Context& ctx, Arr X, const std::string& norm, ArrW out) {
        const tl::RowNorm rn = tl::parse_row_norm(norm.c_str());
        by_float_dtype(X, "X", [&](auto tag) {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          auto ov = as_matrix<T>(out, "out");
          nb::gil_scoped_release release;
          tl::normalizer_apply<T>(ctx, xv, rn, ov);
        });
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("norm"), nb::arg("out"));
}
