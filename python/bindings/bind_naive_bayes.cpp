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

template <class V>
nb::ndarray<nb::numpy, V> owned(V* buf, std::initializer_list<std::size_t> shape) {
  nb::capsule owner(buf, [](void* p) noexcept { delete[] static_cast<V*>(p); });
  return nb::ndarray<nb::numpy, V>(buf, shape, owner);
}
}  // namespace

void init_naive_bayes(nb::module_& m) {
  // class_column_stats(ctx, X, labels, n_classes, w=None) -> float64 array
  // (4, n_classes, cols): weight sum, mean, m2 and count of each class's
  // column statistics (tl::column_stats over the rows of the class).
  m.def(
      "class_column_stats",
      [](const tl::Context& ctx, Arr X, HostLabels labels, std::int64_t n_classes, std::optional<Arr> w_) {
        const std::int64_t cols = X.ndim() == 2 ? static_cast<std::int64_t>(X.shape(1)) : 1;
        const std::int64_t rows = X.ndim() >= 1 ? static_cast<std::int64_t>(X.shape(0)) : 0;
        if (static_cast<std::int64_t>(labels.shape(0)) != rows)
          throw tl::ValueError("class_column_stats: labels has " + std::to_string(labels.shape(0)) +
                               " entries but X has " + std::to_string(rows) + " rows");
        TL_REQUIRE(n_classes >= 1, tl::ValueError, "class_column_stats: n_classes must be at least 1");
        std::vector<tl::ColStat> out(static_cast<std::size_t>(n_classes * cols));
        by_float_dtype(X, "X", [&](auto tag) {
          using T = decltype(tag);
          auto xv = as_matrix<const T>(X, "X");
          tl::VectorView<const T> wv;
          if (w_) wv = as_vector<const T>(*w_, "sample_weight");
          nb::gil_scoped_release release;
          tl::class_column_stats<T>(ctx, xv, wv, labels.data(), n_classes, out.data());
        });
        const std::int64_t pc = n_classes * cols;
        auto* buf = new double[4 * pc + 1];
        for (std::int64_t e = 0; e < pc; ++e) {
          buf[e] = out[e].w;
          buf[pc + e] = out[e].mean;
          buf[2 * pc + e] = out[e].m2;
          buf[3 * pc + e] = static_cast<double>(out[e].n);
        }
        return owned(buf, {4, static_cast<std::size_t>(n_classes), static_cast<std::size_t>(cols)});
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("labels"), nb::arg("n_classes"), nb::arg("w") = nb::none());

  // gaussian_nb_jll(ctx, X, theta, var, joint, nconst) -> float64 (rows, C):
  // joint[c] + (nconst[c] - 0.5 * sum_j (x_ij - theta[c, j])^2 / var[c, j]).
  m.def(
      "gaussian_nb_jll",
      [](const tl::Context& ctx, Arr X, HostMat theta, HostMat var, HostVec joint, HostVec nconst) {
        const std::int64_t cols = X.ndim() == 2 ? static_cast<std::int64_t>(X.shape(1)) : 1;
        const std::int64_t rows = X.ndim() >= 1 ? static_cast<std::int64_t>(X.shape(0)) : 0;
        const std::int64_t C = static_cast<std::int64_t>(theta.shape(0));
        if (static_cast<std::int64_t>(theta.shape(1)) != cols || var.shape(0) != theta.shape(0) ||
            var.shape(1) != theta.shape(1) || static_cast<std::int64_t>(joint.shape(0)) != C ||
            static_cast<std::int64_t>(nconst.shape(0)) != C)
          throw tl::ValueError("gaussian_nb_jll: parameter shapes do not match X (" + std::to_string(cols) +
                               " features) and theta (" + std::to_string(C) + " classes)");
        auto* buf = new double[rows * C + 1];
        try {
          by_float_dtype(X, "X", [&](auto tag) {
            using T = decltype(tag);
            auto xv = as_matrix<const T>(X, "X");
            nb::gil_scoped_release release;
            tl::gaussian_nb_jll<T>(ctx, xv, theta.data(), var.data(), joint.data(), nconst.data(), C, buf);
          });
        } catch (...) {
          delete[] buf;
          throw;
        }
        return owned(buf, {static_cast<std::size_t>(rows), static_cast<std::size_t>(C)});
      },
      nb::arg("ctx"), nb::arg("X"), nb::arg("theta"), nb::arg("var"), nb::arg("joint"), nb::arg("nconst"));
}
