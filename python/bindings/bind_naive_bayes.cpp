// Gaussian naive Bayes: per-class column statistics and the joint log likelihood.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>

#include <optional>
#include <vector>

#include "convert.hpp"
#include "twinlearn/naive_bayes/gaussian_nb.hpp"

namespace nb = nanobind;
using namespace tlb;

namespace {
using HostMat = nb::ndarray<double, nb::ndim<2>, nb::c_contig, nb::device::cpu, nb::ro>;
using HostVec = nb::ndarray<double, nb::ndim<1>, nb::c_contig, nb::device::cpu, nb::ro>;
using HostLabels = nb::ndarray<std::int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu, nb::ro>;

// class_column_stats' result: each (n_classes, cols) float64.
struct ClassColumnStats {
  nb::object weight;
  nb::object mean;
  nb::object m2;
  nb::object count;
};
}  // namespace

TL_BINDINGS(naive_bayes) {
  result_class<ClassColumnStats>(m, "ClassColumnStats", "Result of class_column_stats.")
      .field("weight", &ClassColumnStats::weight, "n_classes x cols: weight sum of the class's rows")
      .field("mean", &ClassColumnStats::mean, "n_classes x cols")
      .field("m2", &ClassColumnStats::m2, "n_classes x cols: weighted sum of squared deviations")
      .field("count", &ClassColumnStats::count, "n_classes x cols: rows counted (float64)")
      .done();

  // class_column_stats(ctx, X, labels, n_classes, w=None) -> ClassColumnStats:
  // each class's column statistics (tl::column_stats over the rows of the class).
  m.def(
      "class_column_stats",
      [](const tl::Context& ctx, Arr X, HostLabels labels, std::int64_t n_classes, std::optional<Arr> w_) {
        const std::int64_t cols = cols_of(X);
        const std::int64_t rows = rows_of(X);
        if (static_cast<std::int64_t>(labels.shape(0)) != rows)
          throw tl::ValueError("class_column_stats: labels has " + std::to_string(labels.shape(0)) +
                               " entries but X has " + std::to_string(rows) + " rows");
        TL_REQUIRE(n_classes >= 1, tl::ValueError, "class_column_stats: n_classes must be at least 1");
        std::vector<tl::ColStat> out(static_cast<std::size_t>(n_classes * cols));
        by_float_dtype(X, "X", [&](auto tag) {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          auto wv = optional_vector<T>(w_, "sample_weight");
          nb::gil_scoped_release release;
          tl::class_column_stats<T>(ctx, xv, wv, labels.data(), n_classes, out.data());
        });
        const std::size_t C = static_cast<std::size_t>(n_classes), uc = static_cast<std::size_t>(cols);
        double *wp = nullptr, *mp = nullptr, *m2p = nullptr, *np = nullptr;
        ClassColumnStats r;
        r.weight = nb::cast(new_array<double>({C, uc}, &wp));
        r.mean = nb::cast(new_array<double>({C, uc}, &mp));
        r.m2 = nb::cast(new_array<double>({C, uc}, &m2p));
        r.count = nb::cast(new_array<double>({C, uc}, &np));
        for (std::size_t e = 0; e < out.size(); ++e) {
          wp[e] = out[e].w;
          mp[e] = out[e].mean;
          m2p[e] = out[e].m2;
          np[e] = static_cast<double>(out[e].n);
        }
        return r;
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("labels"), nb::arg("n_classes"), nb::arg("w") = nb::none());

  // gaussian_nb_jll(ctx, X, theta, var, joint, nconst) -> float64 (rows, C):
  // joint[c] + (nconst[c] - 0.5 * sum_j (x_ij - theta[c, j])^2 / var[c, j]).
  m.def(
      "gaussian_nb_jll",
      [](const tl::Context& ctx, Arr X, HostMat theta, HostMat var, HostVec joint, HostVec nconst) {
        const std::int64_t cols = cols_of(X);
        const std::int64_t rows = rows_of(X);
        const std::int64_t C = static_cast<std::int64_t>(theta.shape(0));
        if (static_cast<std::int64_t>(theta.shape(1)) != cols || var.shape(0) != theta.shape(0) ||
            var.shape(1) != theta.shape(1) || static_cast<std::int64_t>(joint.shape(0)) != C ||
            static_cast<std::int64_t>(nconst.shape(0)) != C)
          throw tl::ValueError("gaussian_nb_jll: parameter shapes do not match X (" + std::to_string(cols) +
                               " features) and theta (" + std::to_string(C) + " classes)");
        double* buf = nullptr;
        auto jll = new_array<double>({static_cast<std::size_t>(rows), static_cast<std::size_t>(C)}, &buf);
        by_float_dtype(X, "X", [&](auto tag) {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          nb::gil_scoped_release release;
          tl::gaussian_nb_jll<T>(ctx, xv, theta.data(), var.data(), joint.data(), nconst.data(), C, buf);
        });
        return jll;
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("theta"), nb::arg("var"), nb::arg("joint"), nb::arg("nconst"));
}
